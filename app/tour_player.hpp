// The guided tour in the app: loading a tour file (io/tour.hpp), putting a step on screen (its scene or
// model, stage, layer, head, pinned row, view and lab), Next/Back, and telling whether the learner is
// still looking at the step or has wandered off to explore (the Start here panel then offers to come
// back: the step is remembered, never lost). No ImGui: the panel is app/panels/tour_panel.cpp.
#pragma once

#include <string>
#include <vector>

#include "app/app_state.hpp"

namespace attnviz::app {

/// The tour shipped with the app in the user's language: assets/tours/first-hour.zh.json (Chinese)
/// when the locale asks for Chinese (chinese_locale of the environment; on Windows, when none of those
/// variables is set, the display language), else first-hour.json.
std::string default_tour_path();
/// Whether this session's locale asks for Chinese: chinese_locale of the environment; on Windows, when
/// none of those variables is set, the display language. (The shipped tour and the first UI language.)
bool locale_prefers_chinese();
/// The shipped tour in English or in Chinese, whatever the locale.
std::string shipped_tour_path(bool chinese);
/// Whether the locale asks for Chinese: the first of LANGUAGE (its first entry), LC_ALL, LC_MESSAGES
/// and LANG that is set and not empty starts with "zh" (zh_CN.UTF-8, zh_TW, zh). Null means unset.
bool chinese_locale(const char* language, const char* lc_all, const char* lc_messages, const char* lang);
/// Help menu: the Chinese tour, whatever the locale (its glyphs are fed to the font atlas).
inline constexpr const char* kChineseTourMenuLabel = "导览（中文）· Tour in Chinese";
/// View ▸ Language: Chinese (its glyphs are fed to the font atlas).
inline constexpr const char* kChineseLanguageLabel = "中文";

/// The Start here panel's own words in a tour's language (its "language": Chinese for "zh…", else
/// English). {k} and {n} in a pattern stand for the step and the number of steps (tour_fill).
struct TourWords {
    const char* heading;  // the panel's title: "Start here · step {k} of {n}"
    const char* back;     // buttons
    const char* next;
    const char* finish;
    const char* start_over;
    const char* exploring;   // the learner has left the step
    const char* show_again;  // ... and the button that brings it back
    const char* opening;     // a step's model is loading
    const char* skipped;     // "{k} of this tour's steps could not be shown ..."
    const char* close_hint;  // the last line
    const char* status;      // the status line on each step: "Tour, step {k} of {n}: " + title
};
const TourWords& tour_words(const std::string& language);
/// `pattern` with {k} and {n} replaced by k and n.
std::string tour_fill(const char* pattern, int k, int n = 0);

/// Loads the tour at `path` and puts step `index` (0-based, clamped) on screen with the panel open.
/// `labs`: the lab names a step may open. A tour that cannot be read is one line in the status bar
/// (returned in `problems`) and changes nothing; steps the tour leaves out are one line each in
/// `problems`, the first of them also in the status bar. Returns false when no step could be shown.
bool start_tour(AppState& state, const std::string& path, int index, const std::vector<std::string>& labs,
                std::vector<std::string>* problems = nullptr);
/// Loads the workspace's tour (state.tour.resume_*) on its step, without touching the view the
/// workspace restored. A tour file that is gone or broken is silently dropped (the workspace's view stays).
void resume_tour(AppState& state, const std::vector<std::string>& labs);
/// Puts step `index` of the loaded tour on screen (clamped; nothing without a tour).
void apply_tour_step(AppState& state, int index);
/// Next / Back: the neighbouring step, put on screen.
void tour_next(AppState& state);
void tour_back(AppState& state);
/// The current step's view is what is on screen (scene or model, layer, head, stage, view, lab);
/// false once the learner has changed it (or while it is still loading).
bool tour_step_on_screen(const AppState& state);
/// The tour for the state log: file, step (1-based), steps, title, open, on_screen, skipped.
nlohmann::json tour_state_json(const AppState& state);

}  // namespace attnviz::app
