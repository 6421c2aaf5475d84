#include "app/dialogs.hpp"
#include "app/panels/view_state.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <filesystem>

#include "app/settings.hpp"
#include "io/files.hpp"

namespace attnviz::app {

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

void load_scene_into(AppState& state, const Scene& scene, const std::string& path) {
    state.config = scene.config;
    state.scene_config = scene.config;
    state.scene_title = scene.title.empty() ? (path.empty() ? "Built-in example" : path) : scene.title;
    state.scene_note = scene.note;
    state.scene_path = path;
    state.link_head_dims = scene.config.d_k == 0 && scene.config.d_v == 0;
    state.pinned_row = -1;
    reset_views(state);          // fresh zoom, choices and boxes for the new scene
    if (!scene.model.empty()) {  // the scene opens a model (the shell loads it in the background)
        if (!scene.model_text.empty()) state.model.text = scene.model_text;
        state.model.open_request = scene.model;
    }
}

bool save_scene_to(AppState& state, const std::string& path) {
    try {
        Scene scene;
        scene.title = state.scene_title;
        scene.note = state.scene_note;
        scene.config = state.config;
        attnviz::save_scene(path, scene);  // atomic: the old file survives any failure
        state.scene_path = path;
        state.scene_config = state.config;
        state.set_status("Saved scene to " + path, false);
        remember_recent(state.recent_files, path);
        (void)save_settings(state);
        return true;
    } catch (const std::exception& e) {
        state.set_status(one_line(e.what()), true);
        return false;
    }
}

std::vector<std::string> example_scenes() {
    std::vector<std::string> out;
    try {
        const std::filesystem::path dir = std::filesystem::path(attnviz::asset_dir()) / "scenes";
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
            if (entry.path().extension() == ".json") out.push_back(entry.path().string());
    } catch (const std::exception&) {
    }
    std::sort(out.begin(), out.end());
    return out;
}

void FileDialogs::draw(AppState& state) {
    if (open_requested) {
        ImGui::OpenPopup("Open scene");
        open_requested = false;
        error.clear();
        examples = example_scenes();
        if (path_buffer.empty()) path_buffer = state.scene_path;
    }
    if (save_as_requested) {
        ImGui::OpenPopup("Save scene as");
        save_as_requested = false;
        error.clear();
        path_buffer = state.scene_path.empty() ? "my-scene.json" : state.scene_path;
    }
    if (open_model_requested) {
        ImGui::OpenPopup("Open model");
        open_model_requested = false;
        if (model_path_buffer.empty()) model_path_buffer = state.model.dir;
    }
    const ImVec2 centre = ImGui::GetMainViewport()->GetCenter();
    const float w = ImGui::GetFontSize() * 36.0f;
    ImGui::SetNextWindowPos(centre, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(w, 0));
    if (ImGui::BeginPopupModal("Open scene", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::TextUnformatted("Path of a scene file (.json):");
        if (ImGui::IsWindowAppearing() || refocus)
            ImGui::SetKeyboardFocusHere();  // back to the path after an error
        refocus = false;
        ImGui::SetNextItemWidth(-1);
        // AutoSelectAll: whenever the field takes the keyboard (the popup opens, or an error sent
        // the focus back) the whole path is selected, so what the user types replaces it.
        const bool enter = ImGui::InputText(
            "##path", &path_buffer, ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
        if (!state.recent_files.empty()) {
            ImGui::TextDisabled("Recent:");
            for (const std::string& r : state.recent_files)
                if (ImGui::Selectable(r.c_str())) path_buffer = r;
        }
        if (!examples.empty()) {
            ImGui::TextDisabled("Examples:");
            for (const std::string& e : examples)
                if (ImGui::Selectable(std::filesystem::path(e).filename().string().c_str())) path_buffer = e;
        }
        if (!error.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
            ImGui::TextWrapped("%s", error.c_str());
            ImGui::PopStyleColor();
        }
        if (ImGui::Button("Open", ImVec2(ImGui::GetFontSize() * 6, 0)) || enter) {
            try {
                const Scene scene = attnviz::load_scene(path_buffer);
                load_scene_into(state, scene, path_buffer);
                state.set_status("Opened " + path_buffer, false);
                remember_recent(state.recent_files, path_buffer);
                (void)save_settings(state);  // a settings file that cannot be written is no reason to stop
                ImGui::CloseCurrentPopup();
            } catch (const std::exception& e) {
                error = one_line(e.what());  // the user's current scene stays as it was
                state.set_status(error, true);
                refocus = true;
            }
        }
        ImGui::SameLine();
        if (ImGui::Button("Cancel", ImVec2(ImGui::GetFontSize() * 6, 0)) ||
            ImGui::IsKeyPressed(GLFW_KEY_ESCAPE))
            ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
    ImGui::SetNextWindowPos(centre, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(w, 0));
    if (ImGui::BeginPopupModal("Open model", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::TextWrapped(
            "Folder of a Hugging Face model (GPT-2, Llama, Qwen2, Mistral): config.json, model.safetensors "
            "(or shards) and tokenizer.json or vocab.json + merges.txt. It loads in the background; if it "
            "cannot be read, the status bar says why and the current model stays.");
        if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
        ImGui::SetNextItemWidth(-1);
        const bool enter =
            ImGui::InputText("##modelpath", &model_path_buffer,
                             ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
        if ((ImGui::Button("Open", ImVec2(ImGui::GetFontSize() * 6, 0)) || enter) &&
            !model_path_buffer.empty()) {
            state.model.open_request = model_path_buffer;
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Cancel", ImVec2(ImGui::GetFontSize() * 6, 0)) ||
            ImGui::IsKeyPressed(GLFW_KEY_ESCAPE))
            ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
    ImGui::SetNextWindowPos(centre, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(w, 0));
    if (ImGui::BeginPopupModal("Save scene as", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::TextUnformatted("Title:");
        ImGui::SetNextItemWidth(-1);
        ImGui::InputText("##title", &state.scene_title);
        ImGui::TextUnformatted("Note (shown under the formula):");
        ImGui::InputTextMultiline("##note", &state.scene_note, ImVec2(-1, ImGui::GetTextLineHeight() * 3.5f));
        ImGui::TextUnformatted("Save to path:");
        if (ImGui::IsWindowAppearing() || refocus)
            ImGui::SetKeyboardFocusHere();  // back to the path after an error
        refocus = false;
        ImGui::SetNextItemWidth(-1);
        const bool enter = ImGui::InputText(
            "##path", &path_buffer, ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
        if (!error.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
            ImGui::TextWrapped("%s", error.c_str());
            ImGui::PopStyleColor();
        }
        if (ImGui::Button("Save", ImVec2(ImGui::GetFontSize() * 6, 0)) || enter) {
            if (path_buffer.empty())
                error = "Type a file name, e.g. my-scene.json.";
            else if (save_scene_to(state, path_buffer))
                ImGui::CloseCurrentPopup();
            else
                error = state.status;
        }
        ImGui::SameLine();
        if (ImGui::Button("Cancel", ImVec2(ImGui::GetFontSize() * 6, 0)) ||
            ImGui::IsKeyPressed(GLFW_KEY_ESCAPE))
            ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
}

}  // namespace attnviz::app
