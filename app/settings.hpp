// User settings that outlive a session (UI scale, language, compute threads, play speed, export folder),
// stored as JSON in user_config_dir()/settings.json. Missing or broken files give the defaults:
// settings never stop the app from starting.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "app/app_state.hpp"

namespace attnviz::app {

/// user_config_dir()/settings.json ("" if the config directory cannot be created).
std::string settings_path();

/// Applies the settings stored in `json_text` to `state`; unknown keys and bad values are ignored
/// (out-of-range numbers are clamped). Returns false if the text is not a JSON object.
bool apply_settings_json(const std::string& json_text, AppState& state);
/// The settings of `state` as JSON.
std::string settings_json(const AppState& state);

/// At most this many recent files are kept.
constexpr std::size_t kMaxRecentFiles = 10;
/// Puts `path` first in `recent` (moved there if it was already listed), keeping kMaxRecentFiles.
void remember_recent(std::vector<std::string>& recent, const std::string& path);

/// Loads settings_path() into `state` if it exists. Never throws.
void load_settings(AppState& state);
/// Saves atomically; returns an error message, or "" on success.
std::string save_settings(const AppState& state);

}  // namespace attnviz::app
