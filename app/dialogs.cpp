#include "app/dialogs.hpp"
#include "app/panels/view_state.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "app/panels/panels.hpp"
#include "app/settings.hpp"
#include "io/files.hpp"
#include "io/npy.hpp"

namespace attnviz::app {

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
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

namespace {

const char* const kWaitingForChooser = "Waiting for the file chooser…";

std::vector<std::string>& dropped_queue() {
    static std::vector<std::string> queue;  // GLFW calls back on the main thread, inside glfwPollEvents
    return queue;
}

bool open_scene_file(AppState& state, const std::string& path, std::string* error) {
    try {
        const Scene scene = attnviz::load_scene(path);
        load_scene_into(state, scene, path);
        state.set_status("Opened " + path, false);
        remember_recent(state.recent_files, path);
        (void)save_settings(state);  // a settings file that cannot be written is no reason to stop
        return true;
    } catch (const std::exception& e) {
        const std::string line = one_line(e.what());  // the user's current scene stays as it was
        state.set_status(line, true);
        if (error) *error = line;
        return false;
    }
}

std::string parent_folder(const std::string& path) {
    if (path.empty()) return "";
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::absolute(path, ec);
    return ec ? "" : p.parent_path().string();
}

}  // namespace

bool open_path(AppState& state, const std::string& path, std::string* error) {
    namespace fs = std::filesystem;
    auto refuse = [&](const std::string& line) {
        state.set_status(line, true);
        if (error) *error = line;
        return false;
    };
    if (path.empty()) return refuse("No file was given.");
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) return refuse(path + ": no such file or folder");
    const fs::path p(path);
    // A model: its folder, or the folder's config.json (what a file manager shows inside it).
    std::string model_dir;
    if (fs::is_directory(st)) {
        if (!fs::exists(p / "config.json", ec))
            return refuse(path +
                          " is a folder without config.json: not a model folder (scenes are .json files)");
        model_dir = path;
    } else if (p.filename() == "config.json" &&
               (fs::exists(p.parent_path() / "model.safetensors", ec) ||
                fs::exists(p.parent_path() / "model.safetensors.index.json", ec))) {
        model_dir = p.parent_path().string();
    }
    if (!model_dir.empty()) {
        state.model.open_request = model_dir;  // loads in the background; the status bar reports
        state.set_status("Opening model " + model_dir + "…", false);
        return true;
    }
    std::string ext = p.extension().string();
    for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".npy") {
        if (state.model.active)
            return refuse("A .npy mask applies to the single layer: File ▸ Back to the single layer first");
        try {
            MaskGrid mask = read_mask_npy(path);
            state.config.custom_mask = std::move(mask);
            state.config.mask = MaskKind::Custom;
            state.set_status("Loaded a " + std::to_string(state.config.custom_mask.rows) + "×" +
                                 std::to_string(state.config.custom_mask.cols) + " mask from " + path,
                             false);
            return true;
        } catch (const std::exception& e) {
            return refuse(one_line(e.what()));  // the mask being edited is kept
        }
    }
    return open_scene_file(state, path, error);
}

void open_dropped(AppState& state, const std::vector<std::string>& paths) {
    if (paths.empty()) return;
    if (open_path(state, paths.front()) && paths.size() > 1)
        state.set_status(
            state.status + " (" + std::to_string(paths.size()) + " files were dropped; one opens at a time)",
            false);
}

void on_files_dropped(GLFWwindow*, int count, const char** paths) {
    for (int i = 0; i < count; ++i)
        if (paths[i]) dropped_queue().emplace_back(paths[i]);
}

std::vector<std::string> take_dropped_files() {
    std::vector<std::string> out;
    out.swap(dropped_queue());
    return out;
}

void draw_open_recent_menu(AppState& state) {
    if (!ImGui::BeginMenu("Open recent", !state.recent_files.empty())) return;
    std::string chosen;
    for (const std::string& r : state.recent_files) {
        std::error_code ec;
        const bool folder = std::filesystem::is_directory(r, ec);
        const std::string label = (folder ? "[model] " : "") + r;
        if (ImGui::MenuItem(label.c_str())) chosen = r;
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Clear the list")) {
        state.recent_files.clear();
        (void)save_settings(state);
    }
    ImGui::EndMenu();
    if (!chosen.empty()) open_path(state, chosen);
}

bool FileDialogs::start_chooser(AppState& state, ChooseRequest request, Purpose purpose) {
    const int kind = static_cast<int>(request.kind);
    if (!chooser || !chooser->has_backends() || chooser_unavailable_[kind]) return false;
    if (chooser->busy()) {
        state.set_status("The file chooser is open already: answer it first.", false);
        return true;
    }
    if (!chooser->start(std::move(request), purpose)) return false;
    state.set_status(kWaitingForChooser, false);
    return true;
}

void FileDialogs::open_scene(AppState& state) {
    ChooseRequest r;
    r.kind = ChooseKind::OpenFile;
    r.title = "Open scene";
    r.folder = parent_folder(state.scene_path);
    if (r.folder.empty()) {
        const std::vector<std::string> ex = example_scenes();
        if (!ex.empty()) r.folder = parent_folder(ex.front());
    }
    r.filters = {{"attnviz scenes", {"*.json"}}, {"NumPy masks", {"*.npy"}}};
    if (!start_chooser(state, std::move(r), kOpenScene)) open_requested = true;
}

void FileDialogs::save_scene_as(AppState& state) {
    ChooseRequest r;
    r.kind = ChooseKind::SaveFile;
    r.title = "Save scene as";
    r.folder = parent_folder(state.scene_path);
    r.file_name = state.scene_path.empty() ? "my-scene.json"
                                           : std::filesystem::path(state.scene_path).filename().string();
    r.filters = {{"attnviz scenes", {"*.json"}}};
    if (!start_chooser(state, std::move(r), kSaveSceneAs)) save_as_requested = true;
}

void FileDialogs::open_model(AppState& state) {
    ChooseRequest r;
    r.kind = ChooseKind::OpenFolder;
    r.title = "Open model (a Hugging Face folder with config.json)";
    r.folder = parent_folder(state.model.dir);
    if (!start_chooser(state, std::move(r), kOpenModel)) open_model_requested = true;
}

void FileDialogs::take_chooser_answer(AppState& state) {
    if (!chooser) return;
    std::optional<ChooserRunner::Answer> a = chooser->poll();
    if (!a) return;
    using Status = ChooseResult::Status;
    const ChooseResult& r = a->result;
    chooser_backend = r.backend;
    // The status line said "Waiting for the file chooser…"; clear it unless something else has
    // been said since (a model that finished loading, an export).
    auto clear_waiting = [&] {
        if (state.status == kWaitingForChooser) state.set_status("", false);
    };
    auto fall_back_to_popup = [&] {
        if (a->purpose == kOpenScene) open_requested = true;
        if (a->purpose == kSaveSceneAs) save_as_requested = true;
        if (a->purpose == kOpenModel) open_model_requested = true;
    };
    switch (r.status) {
        case Status::Chosen:
            if (a->purpose == kOpenScene) open_path(state, r.path);
            if (a->purpose == kSaveSceneAs) save_scene_to(state, r.path);
            if (a->purpose == kOpenModel) open_path(state, r.path);
            break;
        case Status::Cancelled:
            clear_waiting();
            break;
        case Status::Unavailable:  // no desktop chooser for this kind here: the app's own popups from now on
            chooser_unavailable_[static_cast<int>(kind_of(a->purpose))] = true;
            clear_waiting();
            fall_back_to_popup();
            break;
        case Status::Failed:  // say why, and ask for the path in the app instead
            state.set_status("File chooser (" + r.backend + "): " + one_line(r.message), true);
            fall_back_to_popup();
            break;
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
    take_chooser_answer(state);
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
    if (details_requested) {
        ImGui::OpenPopup("Scene title and note");
        details_requested = false;
        details_before = {state.scene_title, state.scene_note};  // Escape puts these back
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
        ImGui::TextUnformatted("Path of a scene (.json), a mask (.npy) or a model folder:");
        if (ImGui::IsWindowAppearing() || refocus)
            ImGui::SetKeyboardFocusHere();  // back to the path after an error
        refocus = false;
        ImGui::SetNextItemWidth(-1);
        // AutoSelectAll: whenever the field takes the keyboard (the popup opens, or an error sent
        // the focus back) the whole path is selected, so what the user types replaces it.
        const bool enter = ImGui::InputText(
            "##path", &path_buffer, ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
        // A click on a recent file or an example opens it (the popup closes only once it opened: a
        // Selectable would close it before the path was used, opening nothing).
        std::string clicked;
        if (!state.recent_files.empty()) {
            ImGui::TextDisabled("Recent:");
            for (const std::string& r : state.recent_files)
                if (ImGui::Selectable(r.c_str(), false, ImGuiSelectableFlags_DontClosePopups)) clicked = r;
        }
        if (!examples.empty()) {
            ImGui::TextDisabled("Examples (click to open):");
            for (const std::string& e : examples) {
                const std::string file = std::filesystem::path(e).filename().string();
                if (ImGui::Selectable(file.c_str(), false, ImGuiSelectableFlags_DontClosePopups)) clicked = e;
                remember_item_rect(state, "open_example_" + std::filesystem::path(e).stem().string());
            }
        }
        if (!clicked.empty()) path_buffer = clicked;
        if (!error.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
            ImGui::TextWrapped("%s", error.c_str());
            ImGui::PopStyleColor();
        }
        if (ImGui::Button("Open", ImVec2(ImGui::GetFontSize() * 6, 0)) || enter || !clicked.empty()) {
            // A scene, or what else a path can be (a model folder, a .npy mask): as if dropped.
            if (open_path(state, path_buffer, &error)) {
                error.clear();
                ImGui::CloseCurrentPopup();
            } else {
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
    if (ImGui::BeginPopupModal("Scene title and note", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        // Edited in place: the next Save (Ctrl+S, or Save scene as… with any chooser) writes them;
        // Escape cancels both edits.
        ImGui::TextUnformatted("Title:");
        if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
        ImGui::SetNextItemWidth(-1);
        ImGui::InputText("##title", &state.scene_title);
        ImGui::TextUnformatted("Note (shown under the formula; saved with the scene):");
        ImGui::InputTextMultiline("##note", &state.scene_note, ImVec2(-1, ImGui::GetTextLineHeight() * 5.0f));
        const bool done = ImGui::Button("Done", ImVec2(ImGui::GetFontSize() * 6, 0));
        remember_item_rect(state, "scene_details_done");
        if (ImGui::IsKeyPressed(GLFW_KEY_ESCAPE)) {  // Cancel: both fields as they were
            state.scene_title = details_before.first;
            state.scene_note = details_before.second;
            ImGui::CloseCurrentPopup();
        } else if (done) {
            ImGui::CloseCurrentPopup();
        }
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
