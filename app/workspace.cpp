#include "app/workspace.hpp"

#include "io/json_limits.hpp"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/panels/heatmap_widget.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/view_state.hpp"
#include "core/error.hpp"
#include "io/colormap.hpp"
#include "io/files.hpp"
#include "io/platform.hpp"
#include "io/scene.hpp"
#include "io/tour.hpp"

namespace attnviz::app {

namespace {

constexpr int kWorkspaceVersion = 1;
constexpr std::uintmax_t kMaxWorkspaceBytes = 64u << 20;  // far above any real workspace

const char* view_name(MainView v) {
    switch (v) {
        case MainView::Stage:
            return "stage";
        case MainView::HeadsGrid:
            return "heads";
        case MainView::Compare:
            return "compare";
        case MainView::Model:
            return "model";
        case MainView::Lines:
            return "lines";
        case MainView::Interventions:
            return "interventions";
    }
    return "stage";
}

const char* reduce_name(ReduceMode r) {
    return r == ReduceMode::Mean ? "mean" : "max";
}

/// A number field of the workspace's "model" entry, refused (one line) outside the panel's range.
template <typename T>
T model_number(const nlohmann::ordered_json& m, const char* key, T fallback, T lo, T hi) {
    if (!m.contains(key)) return fallback;
    const T v = m.at(key).get<T>();
    if (!(v >= lo && v <= hi))
        throw Error(std::string("model.") + key + " is " + m.at(key).dump() + "; it must be between " +
                    nlohmann::json(lo).dump() + " and " + nlohmann::json(hi).dump());
    return v;
}

}  // namespace

std::string workspace_json(const AppState& state) {
    const ModelUi& m = state.model;
    // A model on screen, or one still loading from the workspace this session started with.
    const bool model = m.active || !m.resume.dir.empty();
    nlohmann::ordered_json j;
    j["attnviz_workspace"] = kWorkspaceVersion;
    j["scene_path"] = state.scene_path;
    j["scene_title"] = state.scene_title;
    j["scene_note"] = state.scene_note;
    j["scene_model"] = state.scene_model;
    j["config"] = config_to_json(state.config);
    j["scene_config"] = config_to_json(state.scene_config);
    j["link_head_dims"] = state.link_head_dims;
    j["view"] = !m.active && model && m.resume.model_view ? "model" : view_name(state.view);
    j["stage"] = current_stage_name(state);
    j["head"] = m.active || !model ? state.head : m.resume.head;
    j["pinned_row"] = m.active || !model ? state.pinned_row : m.resume.pinned_row;
    j["labs"] = state.open_labs;
    j["colours"] = {{"scale", scale_mode_name(view_scale().mode)},
                    {"zoomed_out", reduce_name(view_scale().reduce)}};
    if (state.tour.tour)
        j["tour"] = {{"file", state.tour.tour->path}, {"step", state.tour.step}, {"open", state.tour.open}};
    if (model) {
        j["model"] = {{"dir", m.active ? m.dir : m.resume.dir},
                      {"text", m.text},
                      {"layer", m.active ? m.layer : m.resume.layer},
                      {"temperature", m.temperature},
                      {"top_k", m.top_k},
                      {"top_p", m.top_p}};
        if (m.seq2seq || !m.target.empty() || m.family != AttnFamily::Cross) {  // an encoder–decoder's target
                                                                                // and the attention shown
            j["model"]["target"] = m.target;
            j["model"]["family"] = family_name(m.family);
        }
    }
    return j.dump(1) + "\n";
}

void apply_workspace_json(const std::string& text, AppState& state) {
    nlohmann::ordered_json j;
    try {
        check_json_limited(text, "workspace", "the file");  // one line: what and at which byte
        j = nlohmann::ordered_json::parse(text);
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error(std::string("not JSON (") + json_error_reason(e.what()) + ")");
    }
    if (!j.is_object() || !j.contains("attnviz_workspace"))
        throw Error("not an attnviz workspace (no \"attnviz_workspace\" key)");
    if (j["attnviz_workspace"] != kWorkspaceVersion)
        throw Error("workspace format " + j["attnviz_workspace"].dump() + " is not one this version reads");
    // Everything is read into a copy first: a broken file changes nothing.
    AppState s;
    ViewScale colours = view_scale();
    try {
        apply_config_json(s.config, j.at("config"), "workspace");
        apply_config_json(s.scene_config, j.at("scene_config"), "workspace");
        s.scene_path = j.value("scene_path", std::string());
        s.scene_title = j.value("scene_title", std::string("Built-in example"));
        s.scene_note = j.value("scene_note", std::string());
        s.scene_model = j.value("scene_model", std::string());
        s.link_head_dims = j.value("link_head_dims", true);
        const std::string v = j.value("view", std::string("stage"));
        s.view = v == "heads"     ? MainView::HeadsGrid
                 : v == "compare" ? MainView::Compare
                 : v == "lines"   ? MainView::Lines
                                  : MainView::Stage;
        s.head = std::max(0, j.value("head", 0));
        s.pinned_row = std::max(-1, j.value("pinned_row", -1));
        s.requested_stage = j.value("stage", std::string());
        std::string labs;
        for (const auto& l : j.value("labs", nlohmann::ordered_json::array()))
            if (l.is_string()) labs += (labs.empty() ? "" : ",") + l.get<std::string>();
        s.requested_lab = labs;
        if (j.contains("colours")) {
            const auto& c = j.at("colours");
            colours.mode = parse_scale_mode(c.value("scale", std::string("auto")), "colours.scale");
            const std::string r = c.value("zoomed_out", std::string("max"));
            if (r != "max" && r != "mean")
                throw Error("colours.zoomed_out is \"" + r + "\"; it must be max or mean");
            colours.reduce = r == "mean" ? ReduceMode::Mean : ReduceMode::Max;
        }
        if (j.contains("tour")) {
            const auto& t = j.at("tour");
            s.tour.resume_file = t.at("file").get<std::string>();
            s.tour.resume_step = std::max(0, t.value("step", 0));
            s.tour.resume_open = t.value("open", false);
        }
        if (j.contains("model")) {
            const auto& m = j.at("model");
            const std::string dir = m.at("dir").get<std::string>();
            if (dir.empty()) throw Error("model.dir is empty");
            s.model.resume.dir = dir;
            s.model.resume.layer = model_number(m, "layer", 0, 0, 1 << 20);
            s.model.resume.head = s.head;
            s.model.resume.pinned_row = s.pinned_row;
            s.model.resume.model_view = v == "model";
            s.model.text = m.value("text", s.model.text);
            s.model.target = m.value("target", s.model.target);
            const std::string family = m.value("family", std::string(family_name(s.model.family)));
            for (AttnFamily f : {AttnFamily::Encoder, AttnFamily::Decoder, AttnFamily::Cross})
                if (family == family_name(f)) s.model.family = f;
            s.model.temperature = model_number(m, "temperature", 1.0f, 0.05f, 5.0f);
            s.model.top_k = model_number(m, "top_k", 0, 0, 100);
            s.model.top_p = model_number(m, "top_p", 1.0f, 0.05f, 1.0f);
        }
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error(std::string("a field has the wrong type (") + e.what() + ")");
    }
    state.config = s.config;
    state.scene_config = s.scene_config;
    state.scene_path = s.scene_path;
    state.scene_title = s.scene_title;
    state.scene_note = s.scene_note;
    state.scene_model = s.scene_model;
    state.link_head_dims = s.link_head_dims;
    state.view = s.view;
    state.head = s.head;
    state.pinned_row = s.pinned_row;
    state.requested_stage = s.requested_stage;
    state.requested_lab = s.requested_lab;
    state.tour.resume_file = s.tour.resume_file;
    state.tour.resume_step = s.tour.resume_step;
    state.tour.resume_open = s.tour.resume_open;
    // The model reopens in the background (the shell loads open_request); the single layer shows
    // meanwhile, and stays if the folder is gone (one line in the status bar).
    state.model.resume = s.model.resume;
    state.model.open_request = s.model.resume.dir;
    state.model.text = s.model.text;
    state.model.target = s.model.target;
    state.model.family = s.model.family;
    state.model.temperature = s.model.temperature;
    state.model.top_k = s.model.top_k;
    state.model.top_p = s.model.top_p;
    view_scale() = colours;
    reset_views(state);
}

std::string WorkspaceKeeper::path() const {
    if (!path_.empty()) return path_;
    try {
        return user_config_dir() + "/workspace.json";
    } catch (const std::exception&) {
        return "";
    }
}

bool WorkspaceKeeper::exists() const {
    const std::string p = path();
    std::error_code ec;
    return !p.empty() && std::filesystem::exists(p, ec);
}

bool WorkspaceKeeper::restore(AppState& state) {
    if (!enabled_) return false;
    const std::string p = path();
    std::error_code ec;
    if (p.empty() || !std::filesystem::exists(p, ec)) return false;
    try {
        if (!std::filesystem::is_regular_file(p, ec)) throw Error("not a regular file");
        const auto size = std::filesystem::file_size(p, ec);
        if (ec || size > kMaxWorkspaceBytes) throw Error("larger than 64 MiB");
        const std::string text = read_file(p);
        apply_workspace_json(text, state);
        last_saved_ = workspace_json(state);
        return true;
    } catch (const std::exception& e) {
        const std::string aside = p + ".broken-" + timestamp_for_filename();
        std::string what = e.what();
        for (char& c : what)
            if (c == '\n' || c == '\r') c = ' ';
        if (platform::rename_path(p, aside).empty())
            state.set_status("The saved workspace could not be read (" + what + "); it was set aside as " +
                                 aside + " and the app starts fresh.",
                             true);
        else
            state.set_status("The saved workspace could not be read (" + what + "); the app starts fresh.",
                             true);
        return false;
    }
}

void WorkspaceKeeper::tick(const AppState& state, double now_s, double min_interval_s) {
    if (now_s - last_save_s_ < min_interval_s) return;
    last_save_s_ = now_s;  // also when unchanged: comparing costs a JSON dump, not more than every 2 s
    flush(state);
}

std::string WorkspaceKeeper::flush(const AppState& state) {
    if (!enabled_) return "";
    const std::string p = path();
    if (p.empty()) return "";
    const std::string j = workspace_json(state);
    if (j == last_saved_) return "";
    try {
        write_file_atomic(p, j);
        last_saved_ = j;
        return "";
    } catch (const std::exception& e) {
        return e.what();
    }
}

}  // namespace attnviz::app
