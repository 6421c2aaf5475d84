#include "app/settings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "io/files.hpp"

namespace attnviz::app {

std::string settings_path() {
    try {
        return user_config_dir() + "/settings.json";
    } catch (const std::exception&) {
        return "";
    }
}

bool apply_settings_json(const std::string& json_text, AppState& state) {
    const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return false;
    auto number = [&](const char* key, double lo, double hi, auto& out) {
        auto it = j.find(key);
        if (it != j.end() && it->is_number()) {
            const double v = std::clamp(it->template get<double>(), lo, hi);
            out = static_cast<std::remove_reference_t<decltype(out)>>(v);
        }
    };
    number("ui_scale", 0.5, 3.0, state.ui_scale);
    number("compute_threads", 1, 64, state.compute_threads);
    number("play_seconds", 0.1, 10.0, state.play_seconds);
    number("export_scale", 1, 4, state.export_scale);
    if (state.export_scale == 3) state.export_scale = 2;
    if (auto r = j.find("recent_files"); r != j.end() && r->is_array()) {
        state.recent_files.clear();
        for (const auto& e : *r)  // newest first; paths that are not strings or absurdly long are dropped
            if (e.is_string() && !e.get<std::string>().empty() && e.get<std::string>().size() <= 4096 &&
                state.recent_files.size() < kMaxRecentFiles)
                state.recent_files.push_back(e.get<std::string>());
    }
    if (auto l = j.find("language"); l != j.end() && l->is_string())
        parse_language_code(l->get<std::string>(), &state.language);  // (an unknown code keeps the default)
    auto it = j.find("export_dir");
    if (it != j.end() && it->is_string() && !it->get<std::string>().empty())
        state.export_dir = it->get<std::string>();
    return true;
}

std::string settings_json(const AppState& state) {
    nlohmann::json j;
    j["ui_scale"] = state.ui_scale;
    j["language"] = language_code(state.language);
    j["compute_threads"] = state.compute_threads;
    j["play_seconds"] = state.play_seconds;
    j["export_scale"] = state.export_scale;
    j["export_dir"] = state.export_dir;
    j["recent_files"] = state.recent_files;
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void remember_recent(std::vector<std::string>& recent, const std::string& path) {
    if (path.empty()) return;
    recent.erase(std::remove(recent.begin(), recent.end(), path), recent.end());
    recent.insert(recent.begin(), path);
    if (recent.size() > kMaxRecentFiles) recent.resize(kMaxRecentFiles);
}

void load_settings(AppState& state) {
    const std::string path = settings_path();
    if (path.empty()) return;
    try {
        apply_settings_json(read_file(path), state);
    } catch (const std::exception&) {
        // No settings yet (first run) or unreadable: keep the defaults.
    }
}

std::string save_settings(const AppState& state) {
    const std::string path = settings_path();
    if (path.empty()) return "cannot find a configuration directory to save settings in";
    try {
        write_file_atomic(path, settings_json(state));
        return "";
    } catch (const std::exception& e) {
        return e.what();
    }
}

}  // namespace attnviz::app
