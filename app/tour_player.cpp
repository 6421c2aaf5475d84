#include "app/tour_player.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "app/scene_landing.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/platform.hpp"
#include "io/tour.hpp"

namespace attnviz::app {

namespace {

std::string one_line_of(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::replace(s.begin(), s.end(), '\r', ' ');
    return s;
}

bool lab_is_open(const AppState& state, const std::string& lab) {
    return std::find(state.open_labs.begin(), state.open_labs.end(), lab) != state.open_labs.end();
}

}  // namespace

const TourWords& tour_words(const std::string& language) {
    static const TourWords english{"Start here · step {k} of {n}",
                                   "◀ Back",
                                   "Next ▶",
                                   "Finish",
                                   "Start over",
                                   "You are exploring; the tour waits on this step.",
                                   "Show this step again",
                                   "Opening the model…",
                                   "{k} of this tour's steps could not be shown (see the status line).",
                                   "Close to explore; Help ▸ Tour brings it back.",
                                   "Tour, step {k} of {n}: "};
    static const TourWords chinese{"从这里开始 · 第 {k} 步，共 {n} 步",
                                   "◀ 上一步",
                                   "下一步 ▶",
                                   "完成",
                                   "从头开始",
                                   "你正在自由探索，导览停在这一步等你。",
                                   "再次显示这一步",
                                   "正在打开模型…",
                                   "本导览有 {k} 步无法显示（见状态栏）。",
                                   "关闭即可自由探索；Help 菜单可回到这里。",
                                   "导览，第 {k} 步，共 {n} 步："};
    return language.rfind("zh", 0) == 0 ? chinese : english;
}

std::string tour_fill(const char* pattern, int k, int n) {
    std::string out;
    for (const char* p = pattern; *p; ++p) {
        if (p[0] == '{' && (p[1] == 'k' || p[1] == 'n') && p[2] == '}') {
            out += std::to_string(p[1] == 'k' ? k : n);
            p += 2;
        } else {
            out += *p;
        }
    }
    return out;
}

bool chinese_locale(const char* language, const char* lc_all, const char* lc_messages, const char* lang) {
    for (const char* v : {language, lc_all, lc_messages, lang})
        if (v && *v) return std::string(v).rfind("zh", 0) == 0;
    return false;
}

std::string shipped_tour_path(bool chinese) {
    const std::string file = chinese ? "first-hour.zh.json" : "first-hour.json";
    try {
        return asset_dir() + "/tours/" + file;
    } catch (const std::exception&) {
        return "assets/tours/" + file;
    }
}

bool locale_prefers_chinese() {
    const char* vars[] = {std::getenv("LANGUAGE"), std::getenv("LC_ALL"), std::getenv("LC_MESSAGES"),
                          std::getenv("LANG")};
    // With none of them set (Windows sets none), the system's display language says.
    if (std::none_of(std::begin(vars), std::end(vars), [](const char* v) { return v && *v; }))
        return platform::display_language_is_chinese();
    return chinese_locale(vars[0], vars[1], vars[2], vars[3]);
}

std::string default_tour_path() {
    return shipped_tour_path(locale_prefers_chinese());
}

bool start_tour(AppState& state, const std::string& path, int index, const std::vector<std::string>& labs,
                std::vector<std::string>* problems) {
    std::shared_ptr<Tour> tour;
    try {
        tour = std::make_shared<Tour>(load_tour(path, labs));
    } catch (const std::exception& e) {
        const std::string line = one_line_of(e.what());
        state.set_status(line, true);
        if (problems) problems->push_back(line);
        return false;
    }
    if (problems) *problems = tour->problems;
    if (tour->steps.empty()) {
        state.set_status(path + ": no step of the tour can be shown" +
                             (tour->problems.empty() ? "" : " (" + tour->problems.front() + ")"),
                         true);
        return false;
    }
    state.tour = TourUi{};
    state.tour.tour = std::move(tour);
    state.tour.open = true;
    apply_tour_step(state, index);
    const auto& skipped = state.tour.tour->problems;
    if (!skipped.empty())
        state.set_status(
            skipped.front() +
                (skipped.size() > 1 ? " (and " + std::to_string(skipped.size() - 1) + " more)" : ""),
            true);
    return true;
}

void resume_tour(AppState& state, const std::vector<std::string>& labs) {
    const std::string file = state.tour.resume_file;
    const int step = state.tour.resume_step;
    const bool open = state.tour.resume_open;
    state.tour.resume_file.clear();
    if (file.empty()) return;
    try {
        auto tour = std::make_shared<Tour>(load_tour(file, labs));
        if (tour->steps.empty()) return;
        state.tour.step = std::clamp(step, 0, int(tour->steps.size()) - 1);
        state.tour.tour = std::move(tour);
        state.tour.open = open;
    } catch (const std::exception&) {
        // the tour file is gone or broken: the workspace's view stays, without the tour
    }
}

void apply_tour_step(AppState& state, int index) {
    if (!state.tour.tour || state.tour.tour->steps.empty()) return;
    const auto& steps = state.tour.tour->steps;
    index = std::clamp(index, 0, int(steps.size()) - 1);
    const TourStep& step = steps[std::size_t(index)];
    // The lab the previous step opened closes, unless this step wants it too.
    if (!state.tour.lab_opened.empty() && state.tour.lab_opened != step.lab)
        state.requested_lab += (state.requested_lab.empty() ? "-" : ",-") + state.tour.lab_opened;
    state.tour.lab_opened.clear();
    Scene scene = step.scene;
    scene.focus = step.focus;
    if (scene.focus.view.empty() || scene.focus.view == "compare")
        scene.focus.view = step.model() ? "" : "stage";
    load_scene_into(state, scene, step.scene_path);
    if (step.view == "compare") state.view = MainView::Compare;
    if (step.model() && step.view != "model" && step.view != "heads") {
        state.view = MainView::Stage;  // (the model view only when the step asks for it)
    } else if (step.model() && step.view == "heads") {
        state.view = MainView::HeadsGrid;
    }
    if (!step.lab.empty()) {
        state.requested_lab += (state.requested_lab.empty() ? "" : ",") + step.lab;
        state.tour.lab_opened = step.lab;
    }
    state.tour.step = index;
    state.tour.open = true;
    state.set_status(
        tour_fill(tour_words(state.tour.tour->language).status, index + 1, int(steps.size())) + step.title,
        false);
}

void tour_next(AppState& state) {
    apply_tour_step(state, state.tour.step + 1);
}

void tour_back(AppState& state) {
    apply_tour_step(state, state.tour.step - 1);
}

bool tour_step_on_screen(const AppState& state) {
    if (!state.tour.tour || state.tour.tour->steps.empty()) return false;
    const auto& steps = state.tour.tour->steps;
    const TourStep& step = steps[std::size_t(std::clamp(state.tour.step, 0, int(steps.size()) - 1))];
    const SceneFocus& f = step.focus;
    if (state.scene_path != step.scene_path) return false;
    if (step.model()) {
        if (!state.model.active || state.model.dir != step.scene.model) return false;
        if (state.model.layer != f.layer.value_or(0)) return false;
        if (!f.text.empty() ? state.model.text != f.text
                            : (!step.scene.model_text.empty() && state.model.text != step.scene.model_text))
            return false;
    } else {
        if (state.model.active || state.config != state.scene_config) return false;
    }
    if (f.head && state.head != *f.head) return false;
    if (!f.stage.empty() && current_stage_name(state) != f.stage) return false;
    if (f.pin && state.pinned_row != *f.pin) return false;
    const MainView want = step.view == "heads"     ? MainView::HeadsGrid
                          : step.view == "model"   ? MainView::Model
                          : step.view == "compare" ? MainView::Compare
                                                   : MainView::Stage;
    if (state.view != want) return false;
    if (!step.lab.empty() && !lab_is_open(state, step.lab)) return false;
    return true;
}

nlohmann::json tour_state_json(const AppState& state) {
    const Tour* t = state.tour.tour.get();
    if (!t) return nlohmann::json();
    nlohmann::json j;
    j["file"] = t->path;
    j["title"] = t->title;
    j["step"] = state.tour.step + 1;
    j["steps"] = t->steps.size();
    j["steps_in_file"] = t->steps_in_file;
    j["step_number_in_file"] = t->steps.empty() ? 0 : t->steps[std::size_t(state.tour.step)].number;
    j["step_title"] = t->steps.empty() ? "" : t->steps[std::size_t(state.tour.step)].title;
    j["open"] = state.tour.open;
    j["on_screen"] = tour_step_on_screen(state);
    j["skipped"] = t->problems;
    return j;
}

}  // namespace attnviz::app
