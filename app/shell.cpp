#include "app/shell.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>  // which widget holds the keyboard at the end of the frame

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "app/clock.hpp"
#include "app/commands.hpp"
#include "app/panels/heatmap_widget.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/view_state.hpp"
#include "app/render/frame.hpp"
#include "app/render/heatmap_texture.hpp"
#include "app/settings.hpp"
#include "app/tour_player.hpp"
#include "core/error.hpp"
#include "io/figure.hpp"
#include "io/files.hpp"
#include "io/scene.hpp"
#include "io/tour.hpp"

#ifndef ATTNVIZ_VERSION
#define ATTNVIZ_VERSION "0.1.0"
#endif

namespace attnviz::app {

namespace {

void apply_style(float scale) {
    ImGuiStyle style;
    ImGui::StyleColorsDark(&style);
    style.WindowRounding = 0.0f;
    style.FrameRounding = 3.0f;
    style.GrabRounding = 3.0f;
    style.WindowBorderSize = 1.0f;
    style.FramePadding = ImVec2(6, 4);
    style.ItemSpacing = ImVec2(8, 5);
    style.WindowPadding = ImVec2(10, 8);
    style.ScrollbarSize = 12.0f;
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0.11f, 0.115f, 0.13f, 1.0f);
    style.Colors[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
    style.Colors[ImGuiCol_MenuBarBg] = ImVec4(0.16f, 0.165f, 0.19f, 1.0f);
    style.Colors[ImGuiCol_Border] = ImVec4(0.25f, 0.26f, 0.30f, 1.0f);
    style.Colors[ImGuiCol_TextDisabled] = ImVec4(0.62f, 0.63f, 0.67f, 1.0f);  // readable grey
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
}

// Every string the app may show from the trace, so the font atlas has its glyphs.
void feed_trace_text(FontManager& fonts, const Trace& t, TextLanguage language) {
    for (const auto& s : t.stages) {
        fonts.add_text(s.title);
        fonts.add_text(s.formula);
        fonts.add_text(s.explanation);
        if (language == TextLanguage::Chinese) {  // (an English session never loads these glyphs)
            fonts.add_text(s.title_zh);
            fonts.add_text(s.explanation_zh);
        }
        fonts.add_text(s.rows.name);
        fonts.add_text(s.cols.name);
    }
    for (const auto* v : {t.query_tokens.get(), t.key_tokens.get(), t.vocab.get()})
        if (v)
            for (const auto& tok : *v) fonts.add_text(tok);
}

void feed_state_text(FontManager& fonts, const AppState& state) {
    fonts.add_text("·⏎…▸×‖₂ℓ◀▶");
    fonts.add_text(state.model.name);
    fonts.add_text(state.model.text);
    fonts.add_text(state.model.target);
    fonts.add_text(state.model.note);
    fonts.add_text(state.model.description);
    for (const auto& c : state.model.top) fonts.add_text(c.text);
    const InterventionsUi& iv = state.interventions;
    for (const auto& b : iv.bars) fonts.add_text(b.text);
    for (const auto& row : iv.lens)
        for (const auto& t : row.top) fonts.add_text(t.first);
    fonts.add_text(iv.target_text);
    fonts.add_text(iv.error);
    fonts.add_text(iv.patch_error);
    fonts.add_text("Δ→✕");
    fonts.add_text(kChineseTourMenuLabel);
    fonts.add_text(kChineseLanguageLabel);
    if (state.language == TextLanguage::Chinese)
        for (const char* w : formula_panel_words(TextLanguage::Chinese)) fonts.add_text(w);
    fonts.add_text(state.config.text);
    fonts.add_text(state.config.source_text);
    fonts.add_text(state.scene_title);
    fonts.add_text(state.scene_note);
    fonts.add_text(state.status);
    for (const auto& i : state.issues) fonts.add_text(i.message);
    if (state.tour.tour) {
        for (const TourStep& step : state.tour.tour->steps) {
            fonts.add_text(step.title);
            fonts.add_text(step.text);
        }
        const TourWords& w = tour_words(state.tour.tour->language);
        for (const char* t : {w.heading, w.back, w.next, w.finish, w.start_over, w.exploring, w.show_again,
                              w.opening, w.skipped, w.close_hint, w.status})
            fonts.add_text(t);
    }
    fonts.add_text(state.lab_glyph_text);
}

// Finds "... something.png" in a status message (when an export function did not fill
// last_export_path).
std::string png_path_in(const std::string& status) {
    const auto end = status.rfind(".png");
    if (end == std::string::npos) return "";
    auto begin = status.rfind(' ', end);
    begin = begin == std::string::npos ? 0 : begin + 1;
    return status.substr(begin, end + 4 - begin);
}

}  // namespace

Shell::Shell(Options options) : opt_(std::move(options)) {
    // The UI language follows the locale until the learner picks one (View ▸ Language, kept in settings).
    state.language = locale_prefers_chinese() ? TextLanguage::Chinese : TextLanguage::English;
    load_settings(state);
    if (opt_.ui_scale) state.ui_scale = *opt_.ui_scale;
    // The document: the scene asked for, else the last session's workspace, else the built-in example.
    // A screenshot run is a batch job: it leaves the learner's workspace alone.
    workspace_.set_enabled(opt_.screenshot.empty());
    const bool first_launch = is_first_launch(opt_, workspace_.exists());
    const bool restored =
        opt_.scene.empty() && opt_.tour.empty() && opt_.restore_workspace && workspace_.restore(state);
    if (!restored) {
        const std::string status = state.status;  // a broken workspace's message survives the load
        const bool status_is_error = state.status_is_error;
        const Scene scene = opt_.scene.empty() ? default_scene() : load_scene(opt_.scene);  // throws Error
        load_scene_into(state, scene, opt_.scene);
        state.set_status(status, status_is_error);
    }
    try {
        for (const std::string& kv : opt_.sets) {
            const auto eq = kv.find('=');
            set_config_key(state.config, kv.substr(0, eq), kv.substr(eq + 1));
        }
    } catch (const ConfigError& e) {
        throw UsageError{one_line(e.what())};
    }
    if (!opt_.sets.empty()) state.link_head_dims = state.config.d_k == 0 && state.config.d_v == 0;
    if (opt_.view) state.view = *opt_.view;
    if (!opt_.lab.empty()) state.requested_lab = opt_.lab;
    // The guided tour: asked for (--tour FILE [--step K]), or a first launch (the shipped tour's step 1),
    // or the restored workspace's (on its step, the restored view unchanged).
    if (restored) resume_tour(state, lab_names());
    if (!opt_.tour.empty() || first_launch) {
        const std::string file = opt_.tour.empty() ? default_tour_path() : opt_.tour;
        std::vector<std::string> problems;
        const bool shown = start_tour(state, file, opt_.step.value_or(1) - 1, lab_names(), &problems);
        const bool batch = !opt_.screenshot.empty() && !opt_.tour.empty();
        if (batch && !shown)  // a batch job that cannot do what it was asked: its one line, once
            throw UsageError{problems.empty() ? file + ": no step can be shown" : problems.front()};
        for (const std::string& p : problems) std::fprintf(stderr, "attnviz: %s\n", p.c_str());
        if (batch) {
            const int steps = int(state.tour.tour->steps.size());
            if (opt_.step && *opt_.step > steps)
                throw UsageError{"--step: " + std::to_string(*opt_.step) +
                                 " is out of range; the tour shows steps 1 to " + std::to_string(steps)};
        }
    }
    settings_at_start_ = settings_json(state);
    // The desktop's file chooser (ATTNVIZ_FILE_CHOOSER: auto, portal, zenity, kdialog or builtin). Its
    // answer wakes an idle loop: glfwPostEmptyEvent may be called from any thread.
    std::string chooser_error;
    const char* chooser_pref = std::getenv("ATTNVIZ_FILE_CHOOSER");
    dialogs.chooser = std::make_unique<ChooserRunner>(
        make_choosers(chooser_pref ? chooser_pref : "", &chooser_error), [] { glfwPostEmptyEvent(); });
    if (!chooser_error.empty()) state.set_status(chooser_error, true);
    worker_ = std::make_unique<ComputeWorker>(state.compute_threads);
    session_ = std::make_unique<ModelSession>(std::max(1, state.compute_threads));
    interventions_ = std::make_unique<InterventionsWorker>(std::max(1, state.compute_threads));
    if (!opt_.model.empty() && opt_.text) state.model.text = *opt_.text;
    if (!opt_.model.empty() && opt_.target) state.model.target = *opt_.target;
    if (!opt_.model.empty() && opt_.family) state.model.family = *opt_.family;
    if (!opt_.model.empty() && opt_.text_b) state.model.text_b = *opt_.text_b;
    ModelSession::Startup startup{opt_.model, opt_.layer, opt_.view, !opt_.screenshot.empty(), {}, {}};
    if (opt_.target) startup.seq2seq_flags.push_back("--target");
    if (opt_.family) startup.seq2seq_flags.push_back("--family");
    if (opt_.text_b) startup.encoder_flags.push_back("--text-b");
    session_->start(state, startup);
}

Shell::~Shell() = default;

bool Shell::open_hooks() {
    std::string error;
    if (!hooks_.open(opt_, &error)) {
        std::fprintf(stderr, "attnviz: %s\n", one_line(error).c_str());
        return false;
    }
    return true;
}

void Shell::init_graphics() {
    apply_style(state.ui_scale);
    std::string shader_error;
    if (!render::init_heatmap_shader(&shader_error))
        state.set_status("Heatmap shader failed: " + one_line(shader_error), true);
    fonts_.set_scale(state.ui_scale);
    applied_scale_ = state.ui_scale;
}

double Shell::input_wait_seconds() {
    // Keep drawing while a trace is computing, playing, or a panel waits for a background answer;
    // a test's frames come at most every 5 ms; otherwise wait for input (the machine is shared).
    if (state.updating || state.playing || state.redraw_soon)
        requested_wait_s_ = 0.0;
    else if (hooks_.drives_frames())
        requested_wait_s_ = 0.005;
    else if (now_seconds() - last_activity_ < 3.0)
        requested_wait_s_ = 0.25;
    else
        requested_wait_s_ = -1.0;
    return requested_wait_s_;
}

void Shell::begin_frame(double wait_ms) {
    const double now = now_seconds();
    if (start_time_ == 0) start_time_ = now;
    wait_ms_ = wait_ms;
    // Activity: something was drawing, or an event ended the wait before its time-out.
    if (requested_wait_s_ <= 0.005 || wait_ms < requested_wait_s_ * 1000.0 - 1.0) last_activity_ = now;
    previous_frame_start_ = frame_start_;
    frame_start_ = now;
    state.redraw_soon = false;

    // Files dropped onto the window since the last frame (GLFW's callback queued them).
    if (std::vector<std::string> dropped = take_dropped_files(); !dropped.empty())
        open_dropped(state, dropped);
    state.chooser_open = dialogs.chooser_open();
    state.chooser_backend = dialogs.chooser_backend;
    model_frame();
    const bool model_mode = state.model.active || session_->startup_pending();

    // --- results from the worker ------------------------------------------------------------------
    if (auto result = worker_->poll(); result && model_mode) {
        // a single-layer trace finished after a model opened: not shown
    } else if (result) {
        if (result->ok()) {
            accept_trace(state, result->trace, result->ms);
            if (compute_error_shown_ && state.status_is_error) state.set_status("", false);  // resolved
            compute_error_shown_ = false;
        } else {
            state.set_status(one_line(result->error), true);
            compute_error_shown_ = true;
        }
    }

    // --- validate and submit edits (only valid configs are computed) ------------------------------
    if (!validated_any_ || state.config != validated_) {
        try {
            state.issues = validate(state.config);
        } catch (const std::exception& e) {
            state.issues = {{"text", one_line(e.what())}};
        }
        validated_ = state.config;
        validated_any_ = true;
        if (!model_mode && state.issues.empty() && (!submitted_any_ || state.config != submitted_)) {
            worker_->submit(state.config);
            submitted_ = state.config;
            submitted_any_ = true;
        }
    }
    if (worker_->threads() != state.compute_threads) worker_->set_threads(state.compute_threads);
    state.updating = model_mode ? session_->busy() || state.interventions.busy : worker_->busy();
    if (state.trace && !session_->startup_pending()) apply_startup_requests();

    // --- fonts and scale (between frames, never inside one) -----------------------------------------
    if (state.trace && (state.trace_generation != fed_trace_generation_ || state.language != fed_language_))
        feed_trace_text(fonts_, *state.trace, state.language);
    fed_trace_generation_ = state.trace_generation;
    fed_language_ = state.language;
    feed_state_text(fonts_, state);
    if (state.ui_scale != applied_scale_) {
        apply_style(state.ui_scale);
        fonts_.set_scale(state.ui_scale);
        applied_scale_ = state.ui_scale;
    }
    if (fonts_.needs_rebuild()) {
        fonts_.rebuild();
        render::recreate_font_texture();
        frame_start_ = now_seconds();  // a one-off rebuild is not the frame's cost
    }
}

void Shell::apply_startup_requests() {
    if (!state.requested_stage.empty()) {  // a restored workspace's stage (silently skipped if gone)
        select_stage(state, state.requested_stage);
        state.requested_stage.clear();
    }
    if (startup_applied_) return;
    startup_applied_ = true;
    if (!opt_.stage.empty() && !select_stage(state, opt_.stage)) {
        std::string names;
        for (const auto& n : state.trace->stage_names()) names += (names.empty() ? "" : ", ") + n;
        std::fprintf(stderr, "attnviz: --stage: this trace has no stage '%s' (stages: %s)\n",
                     opt_.stage.c_str(), names.c_str());
        exit_code_ = 2;
        quit_ = true;
        return;
    }
    if (opt_.head) {
        if (*opt_.head >= state.trace->heads) {
            std::fprintf(stderr, "attnviz: --head: %d is out of range; this layer has heads 0 to %d\n",
                         *opt_.head, state.trace->heads - 1);
            exit_code_ = 2;
            quit_ = true;
            return;
        }
        state.head = *opt_.head;
    }
    if (opt_.pin) {
        if (*opt_.pin >= state.trace->n) {
            std::fprintf(stderr, "attnviz: --pin: row %d is out of range; this text has rows 0 to %d\n",
                         *opt_.pin, state.trace->n - 1);
            exit_code_ = 2;
            quit_ = true;
            return;
        }
        state.pinned_row = *opt_.pin;
    }
}

// --- a real model (app/model_session.hpp does the work) ------------------------------------------

void Shell::model_frame() {
    const ModelSession::FrameEvents ev = session_->frame(state);
    if (ev.exit_code != 0) {
        std::fprintf(stderr, "attnviz: %s\n", ev.exit_message.c_str());
        exit_code_ = ev.exit_code;
        quit_ = true;
    }
    if (ev.left_model) submitted_any_ = validated_any_ = false;  // the single layer's trace again
    // (ablation, patching and attribution run decoder-only models: none for an encoder–decoder, and an
    // encoder predicts no next token for them to measure)
    interventions_->frame(state,
                          state.model.seq2seq || state.model.encoder ? nullptr : session_->loaded_model(),
                          state.view == MainView::Interventions, now_seconds());
    if (ev.run_done) {
        if (compute_error_shown_ && state.status_is_error) state.set_status("", false);  // resolved
        compute_error_shown_ = false;
        state.model.run_failed = false;
    } else if (!ev.run_error.empty()) {
        compute_error_shown_ = true;
        state.model.run_failed = true;  // (a screenshot run then shows the error instead of waiting)
    }
}

void Shell::feed_input(GLFWwindow* window) {
    hooks_.feed_input(window, state);
}

void Shell::draw() {
    layout_records().clear();  // this frame's views record their labelled boxes afresh
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool on = ImGui::IsMousePosValid(&mouse);
    state.mouse_x = on ? int(std::floor(mouse.x)) : -1;
    state.mouse_y = on ? int(std::floor(mouse.y)) : -1;
    state.window_w = int(ImGui::GetIO().DisplaySize.x);
    state.window_h = int(ImGui::GetIO().DisplaySize.y);
    dispatch_shortcuts(*this);
    draw_menu_bar();
    draw_layout();
    draw_labs(state);
    dialogs.draw(state);
    draw_help_windows();
    // An export may have reported its path only in the status line.
    if (!state.status_is_error && state.last_export_path.empty()) {
        const std::string p = png_path_in(state.status);
        if (!p.empty()) state.last_export_path = p;
    }
}

void Shell::draw_menu_bar() {
    if (!ImGui::BeginMainMenuBar()) return;
    const bool file_open = ImGui::BeginMenu("File");
    remember_item_rect(state, "menu_File");  // (each entry records its own: menu_<command id>)
    if (file_open) {
        draw_command_menu(*this, "File");
        ImGui::EndMenu();
    }
    const bool view_open = ImGui::BeginMenu("View");
    remember_item_rect(state, "menu_View");
    if (view_open) {
        if (ImGui::MenuItem("Stage", nullptr, state.view == MainView::Stage)) state.view = MainView::Stage;
        if (ImGui::MenuItem("Heads grid", nullptr, state.view == MainView::HeadsGrid))
            state.view = MainView::HeadsGrid;
        if (!state.model.active &&
            ImGui::MenuItem("Compare softmax / linear", nullptr, state.view == MainView::Compare))
            state.view = MainView::Compare;
        if (ImGui::MenuItem("Lines (queries joined to keys)", nullptr, state.view == MainView::Lines))
            state.view = MainView::Lines;
        if (state.model.active) {
            if (ImGui::MenuItem("Model view (every layer × head)", nullptr, state.view == MainView::Model))
                state.view = MainView::Model;
            if (ImGui::MenuItem("Interventions (ablate, patch, attribute)", nullptr,
                                state.view == MainView::Interventions))
                state.view = MainView::Interventions;
            if (ImGui::MenuItem("Residual stream (norms per layer)", nullptr,
                                current_stage_name(state) == "residual_stream")) {
                state.view = MainView::Stage;
                select_stage(state, "residual_stream");
            }
            if (ImGui::MenuItem("Attention rollout", nullptr, current_stage_name(state) == "rollout")) {
                state.view = MainView::Stage;
                select_stage(state, "rollout");
            }
        }
        ImGui::Separator();
        draw_command_menu(*this, "View");  // presentation mode, the side panels
        ImGui::Separator();
        if (ImGui::BeginMenu("UI scale")) {
            for (float s : {0.75f, 1.0f, 1.25f, 1.5f, 2.0f}) {
                char label[16];
                std::snprintf(label, sizeof label, "%.0f%%", double(s * 100));
                if (ImGui::MenuItem(label, nullptr, std::fabs(state.ui_scale - s) < 1e-3f))
                    state.ui_scale = s;
            }
            ImGui::EndMenu();
        }
        // The Explanation panel's language (the rest of the UI stays English).
        const bool language_open = ImGui::BeginMenu("Language");
        remember_item_rect(state, "menu_Language");
        if (language_open) {
            if (ImGui::MenuItem("English", nullptr, state.language == TextLanguage::English))
                state.language = TextLanguage::English;
            remember_item_rect(state, "menu_Language_en");
            if (ImGui::MenuItem(kChineseLanguageLabel, nullptr, state.language == TextLanguage::Chinese))
                state.language = TextLanguage::Chinese;
            remember_item_rect(state, "menu_Language_zh");
            ImGui::EndMenu();
        }
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Labs")) {
        draw_labs_menu(state);
        ImGui::EndMenu();
    }
    const bool help_open = ImGui::BeginMenu("Help");
    remember_item_rect(state, "menu_Help");
    if (help_open) {
        draw_command_menu(*this, "Help");
        ImGui::EndMenu();
    }
    if (state.presentation) {  // the way out, where the panels were folded from
        if (ImGui::MenuItem("\u25c0 Exit presentation (F11)")) state.presentation = false;
        remember_item_rect(state, "exit_presentation");
    }
    // The scene's title, on the right of the menu bar.
    const std::string title =
        state.model.active ? state.model.name
                           : state.scene_title + (state.config != state.scene_config ? "  (modified)" : "");
    const float tw = ImGui::CalcTextSize(title.c_str()).x;
    ImGui::SameLine(std::max(ImGui::GetCursorPosX() + 20.0f, ImGui::GetWindowWidth() - tw - 16.0f));
    ImGui::TextDisabled("%s", title.c_str());
    ImGui::EndMainMenuBar();
}

// Fixed windows relative to the work area (below the menu bar): the pipeline strip across the top
// (the map of the computation), controls on the left, the main view in the centre, the formula and
// export panels on the right, the status bar at the bottom. Side panels fold away (their ×, Ctrl+B,
// Ctrl+Alt+B); presentation mode (F11) folds the panels, the strip and the status bar (unless it
// shows an error), so the picture fills a projector's window at a large UI scale.
void Shell::draw_layout() {
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const ImVec2 wp = vp->WorkPos, ws = vp->WorkSize;
    const float s = state.ui_scale;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float line = ImGui::GetTextLineHeight();
    const bool presenting = state.presentation;
    const bool show_status = !presenting || (state.status_is_error && !state.status.empty());
    const bool show_strip = !presenting;
    const bool show_left = !presenting && state.show_controls;
    const bool show_right = !presenting && state.show_explanation;
    const float status_h = show_status ? ImGui::GetFrameHeight() + style.WindowPadding.y * 2.0f : 0.0f;
    // Side panels never take more than a quarter of the width each, so the main view keeps at least
    // half of it at any UI scale (380 px per side at UI scale 1 on a 1600 px window).
    const float side_w = std::min(380.0f * s, ws.x * 0.25f);
    const float left_w = show_left ? side_w : 0.0f;
    const float right_w = show_right ? std::min(390.0f * s, ws.x * 0.25f) : 0.0f;
    // The strip: its buttons row, then the stages' chips. On a short window at a large UI scale (where
    // the chips would take over a fifth of the height) only the buttons row shows, so the picture keeps
    // its room; the stage's name is in the view's title.
    const float strip_buttons_h = style.WindowPadding.y * 2.0f + ImGui::GetFrameHeight();
    const float strip_full_h = strip_buttons_h + style.ItemSpacing.y + (line + 2.0f) +
                               (line + (13.0f * s + 1.0f) * 2.0f + 7.5f) + style.ScrollbarSize + 6.0f;
    const float strip_h = !show_strip ? 0.0f : strip_full_h > 0.2f * ws.y ? strip_buttons_h : strip_full_h;
    const float body_h = ws.y - status_h;
    const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                   ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                   ImGuiWindowFlags_NoBringToFrontOnFocus;
    auto place = [](float x, float y, float w, float h) {
        ImGui::SetNextWindowPos(ImVec2(x, y));
        ImGui::SetNextWindowSize(ImVec2(std::max(w, 1.0f), std::max(h, 1.0f)));
    };

    if (show_left) {
        place(wp.x, wp.y + strip_h, left_w, body_h - strip_h);
        bool open = true;  // (its × folds it)
        if (ImGui::Begin("Controls", &open, fixed)) draw_controls_panel(state);
        ImGui::End();
        if (!open) state.show_controls = false;
    }

    if (show_strip) {
        place(wp.x, wp.y, ws.x, strip_h);
        if (ImGui::Begin("Pipeline", nullptr,
                         fixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar))
            draw_pipeline_strip(state);
        ImGui::End();
    }

    const float centre_w = ws.x - left_w - right_w;
    place(wp.x + left_w, wp.y + strip_h, centre_w, body_h - strip_h);
    if (ImGui::Begin("##main", nullptr,
                     fixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar |
                         ImGuiWindowFlags_NoScrollWithMouse))
        draw_main_view(state);
    ImGui::End();

    if (show_right) {
        // The Explanation above, the Export panel (or the tour's Start here panel in its place) below,
        // split by what each needs (explanation_panel_height): the Explanation's text is not cut while
        // the panel below has room to spare. A shrinking need is followed only once it is a few lines
        // less, so a hover that adds or removes a line does not move the panels.
        SidePanelsView& side = views(state).side;
        const float column_h = body_h - strip_h;
        const float lower_need = state.tour.open ? side.tour_need : side.export_need;
        // During a tour its words come first (they say what to look at): when neither panel fits, the
        // Start here panel keeps 60 % of the column, the Export panel 36 %.
        const float explain_h = std::floor(explanation_panel_height(column_h, side.explain_need, lower_need,
                                                                    state.tour.open ? 0.6f : 0.36f));
        bool open = true;
        place(wp.x + ws.x - right_w, wp.y + strip_h, right_w, explain_h);
        if (ImGui::Begin("Explanation", &open, fixed)) {
            draw_formula_panel(state);
            const float need = window_content_need();
            if (need > side.explain_need || need < side.explain_need - 4.0f * line) side.explain_need = need;
            more_below_cue(state, "explanation_more");
        }
        remember_window_rect(state, "explanation_panel");
        ImGui::End();
        place(wp.x + ws.x - right_w, wp.y + strip_h + explain_h, right_w, column_h - explain_h);
        if (ImGui::Begin("Export", &open, fixed)) {
            draw_export_panel(state);
            side.export_need = window_content_need();
            more_below_cue(state, "export_more");
        }
        ImGui::End();
        if (!open) state.show_explanation = false;
        // The tour's Start here panel takes the export panel's place (the heatmap and the explanation
        // stay in view); closing it brings the export panel back.
        if (state.tour.open)
            side.tour_need = draw_tour_panel(state, wp.x + ws.x - right_w, wp.y + strip_h + explain_h,
                                             right_w, column_h - explain_h);
    } else if (state.tour.open) {
        // The right side folded away (presentation mode): the tour sits over the view's lower right
        // corner, no taller than its words need, so it covers as little of the picture as it can.
        float& need = views(state).side.presenting_tour_need;
        const float tour_w = std::min(390.0f * s, ws.x * 0.3f),
                    tour_cap = std::min(300.0f * s, (body_h - strip_h) * 0.45f),
                    tour_h = need > 0 ? std::min(tour_cap, std::ceil(need)) : tour_cap;
        need = draw_tour_panel(state, wp.x + ws.x - tour_w, wp.y + body_h - tour_h, tour_w, tour_h);
    }

    if (show_status) {
        place(wp.x, wp.y + body_h, ws.x, status_h);
        if (ImGui::Begin("##status", nullptr,
                         fixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar |
                             ImGuiWindowFlags_NoScrollWithMouse))
            draw_status_bar(state);
        ImGui::End();
    }
}

void Shell::draw_help_windows() {
    if (show_keys) {
        ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                                ImVec2(0.5f, 0.5f));
        if (ImGui::Begin("Keyboard shortcuts", &show_keys,
                         ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse)) {
            draw_shortcut_table();
            ImGui::TextDisabled("Stage and head keys work whenever no text field is being edited.");
        }
        ImGui::End();
    }
    if (show_about) {
        ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                                ImVec2(0.5f, 0.5f));
        ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 30, 0));
        if (ImGui::Begin("About attnviz", &show_about,
                         ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse)) {
            ImGui::PushFont(app_font(FontRole::Large));
            ImGui::TextUnformatted("attnviz " ATTNVIZ_VERSION);
            ImGui::PopFont();
            ImGui::TextWrapped(
                "Attention, computed live. Every stage of one attention layer (tokens, embeddings, "
                "positions, Q, K, V, scores, scaling, mask, softmax, per-head outputs, concat, W_O, "
                "residual) is a heatmap with its formula; change a setting and watch every matrix "
                "change.\n\nAttention(Q, K, V) = softmax(QKᵀ / √d_k) V");
            ImGui::Spacing();
            ImGui::TextDisabled("Dear ImGui %s, GLFW %s", IMGUI_VERSION, glfwGetVersionString());
        }
        ImGui::End();
    }
}

void Shell::save_window_capture(int fb_w, int fb_h) {
    Image image;
    image.width = fb_w;
    image.height = fb_h;
    render::read_framebuffer(fb_w, fb_h, &image.rgba);
    const std::string path = state.export_dir + "/window_" + timestamp_for_filename() + ".png";
    try {
        make_dirs(state.export_dir);
        write_png(path, image);
        state.last_export_path = path;
        state.set_status("Saved the window to " + path, false);
    } catch (const std::exception& e) {
        state.set_status(one_line(e.what()), true);
    }
}

void Shell::end_frame(int fb_w, int fb_h) {
    // The status bar's frame time: the previous frame's whole cost including its swap (the interval
    // between frame starts) but not the time spent asleep waiting for input, so an idle window does
    // not read as 10 fps.
    if (previous_frame_start_ > 0) {
        const double interval_ms = (frame_start_ - previous_frame_start_) * 1000.0;
        const double cost_ms = std::max(0.0, interval_ms - wait_ms_);
        frame_ms_avg_ = frame_ms_avg_ == 0 ? cost_ms : 0.9 * frame_ms_avg_ + 0.1 * cost_ms;
    }
    state.frame_ms = frame_ms_avg_;
    if (capture_window) {
        capture_window = false;
        save_window_capture(fb_w, fb_h);
    }
    // Ready for a screenshot: the trace for the final config is on screen, or there is none because
    // the config is invalid / failed (then the screenshot shows the explanation).
    // Zoom-out levels still computing on a worker thread: keep frames coming to show them at once.
    if (view_cache().busy()) state.redraw_soon = true;
    // A scene's model still loading (or its first run not yet on screen) is not ready either.
    const bool model_pending =
        !state.model.open_request.empty() || state.model.loading || !state.model.resume.dir.empty() ||
        (state.model.active && state.model.run_generation == 0 && !state.model.run_failed);
    const bool ready = !state.updating && !view_cache().busy() && !model_pending &&
                       state.requested_lab.empty() &&
                       (state.trace ? startup_applied_ : (!state.issues.empty() || state.status_is_error));
    // A text field holds the keyboard now, at the end of this frame (io.WantTextInput describes the
    // start of the frame: a script waiting on it before typing would type into a field that was
    // just closed, or not yet opened).
    const ImGuiContext& g = *GImGui;
    state.text_input_active = g.ActiveId != 0 && g.ActiveId == g.InputTextState.ID;
    hooks_.after_render(state, fb_w, fb_h, ready, &quit_, &exit_code_);
    workspace_.tick(state, frame_start_);
    swap_start_ = now_seconds();
}

void Shell::after_swap() {
    const double t = now_seconds();
    hooks_.log_frame(frame_index_, t - start_time_,
                     previous_frame_start_ > 0 ? (frame_start_ - previous_frame_start_) * 1000.0 : 0.0,
                     wait_ms_, (swap_start_ - frame_start_) * 1000.0, (t - swap_start_) * 1000.0,
                     state.updating, state.trace_generation, state.config.temperature);
    ++frame_index_;
}

void Shell::shutdown() {
    if (settings_json(state) != settings_at_start_) {
        const std::string err = save_settings(state);
        if (!err.empty()) std::fprintf(stderr, "attnviz: settings not saved: %s\n", err.c_str());
    }
    const std::string err = workspace_.flush(state);
    if (!err.empty()) std::fprintf(stderr, "attnviz: workspace not saved: %s\n", one_line(err).c_str());
    dialogs.chooser.reset();  // closes a chooser still open (the portal's Close, or the dialog program ends)
    worker_->shutdown();
    session_->shutdown();
    interventions_->shutdown();
    shutdown_views();
    render::shutdown_heatmap_shader();
}

}  // namespace attnviz::app
