// Lab 7: Training — train a small attention-only transformer live (app/training_session: a core
// Trainer on its own thread) and watch the heads form: the loss curves (train, held-out, first
// occurrences vs repeats), learning rate, tokens/s, the head scores over steps with the phase change
// marked, a layer × head grid of the probe sequence's attention, and a timeline slider back through
// the kept snapshots. Save a checkpoint (io/checkpoint's save_train_checkpoint), open it in the main view,
// export the curves (the window) and the current frame (io/figure) as PNG.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/panels/lab_common.hpp"
#include "app/panels/panels.hpp"
#include "app/training_session.hpp"
#include "core/error.hpp"
#include "core/task_registry.hpp"
#include "io/bpe_train.hpp"
#include "io/checkpoint.hpp"
#include "io/figure.hpp"
#include "io/files.hpp"
#include "io/task_text.hpp"

namespace attnviz::app {

namespace {

const std::vector<std::string>& preset_names() {
    static const std::vector<std::string> names = training_preset_names();
    return names;
}

struct TrainLabState {
    std::unique_ptr<TrainingSession> session;
    int preset = 0;
    TrainingSetup setup;  // the knobs (from the preset, then edited)
    bool have_setup = false;
    int frame = 0;       // timeline index shown
    bool follow = true;  // show the newest frame while training
    std::uint64_t frame_run = 0;
    std::vector<HeatmapViewState> views;
    std::string last_saved;                     // checkpoint folder of the last save
    std::string text_path;                      // the "characters of a text" preset's file
    bool text_bpe = false;                      // ... read as BPE tokens learned from it (else characters)
    int bpe_vocab = 512;                        // ... of this many tokens
    std::map<std::string, double> task_values;  // the task's knobs, as changed (core/task_registry)
    std::string load_path;                      // a checkpoint folder to continue from
    bool autostart_done = false;
    int pending_preset = -1;  // a preset picked while a run exists: switch once the user confirms
    int focus_layer = -1, focus_head = -1;  // the probe map shown large (-1: the whole grid)
    std::uint64_t cross_focus_run = 0;      // the run whose cross-attention was first shown (focused)
};

// A token id as the task reads it (its token_names; the id where it has none).
std::string token_label(const TrainingSnapshot& s, int id) {
    return id >= 0 && std::size_t(id) < s.token_names.size() && !s.token_names[std::size_t(id)].empty()
               ? s.token_names[std::size_t(id)]
               : std::to_string(id);
}

// The probe sequence's tokens as the task reads them.
std::vector<std::string> probe_labels(const TrainingSnapshot& s) {
    std::vector<std::string> out;
    for (int id : s.probe_ids) out.push_back(token_label(s, id));
    return out;
}

// The probe maps' axes: a decoder's rows and columns are the probe's tokens; an encoder–decoder's
// cross-attention has rows = the target word each decoder row writes (its target; the padding after
// </s> left out) and columns = the source words (the padding left out).
struct ProbeAxes {
    std::vector<std::string> rows, cols;
    bool cross = false;
};
ProbeAxes probe_axes(const TrainingSnapshot& s) {
    ProbeAxes a;
    if (s.probe_source_ids.empty()) {
        a.rows = a.cols = probe_labels(s);
        return a;
    }
    a.cross = true;
    for (int id : s.probe_target_ids) {
        if (id < 0) break;
        a.rows.push_back(token_label(s, id));
    }
    int m = int(s.probe_source_ids.size());
    while (m > 1 && s.probe_source_ids[std::size_t(m - 1)] == 0) --m;  // <pad> (id 0) at the end
    for (int j = 0; j < m; ++j) a.cols.push_back(token_label(s, s.probe_source_ids[std::size_t(j)]));
    return a;
}

// A frame's map cut to the axes (an encoder–decoder's: without the padding).
MatT<float> shown_map(const MatT<float>& M, const ProbeAxes& a) {
    return M.topLeftCorner(std::min<Eigen::Index>(M.rows(), Eigen::Index(a.rows.size())),
                           std::min<Eigen::Index>(M.cols(), Eigen::Index(a.cols.size())));
}

// The mean of a layer's heads (the alignment score reads the last layer's).
MatT<float> mean_of_heads(const std::vector<MatT<float>>& heads) {
    MatT<float> sum = heads.front();
    for (std::size_t h = 1; h < heads.size(); ++h) sum += heads[h];
    return sum / float(heads.size());
}

// A tooltip of a paragraph, wrapped like help_marker's.
void wrapped_tooltip(const std::string& text) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

// A head score's colour in the score plot and its marks (apart from the loss curves' colours).
ImU32 score_color(std::size_t index) {
    return palette(4 + int(index % 6));
}

// The head scores to show: the run's (its task's declaration), or before a run the chosen preset's.
std::vector<HeadScore> shown_scores(const TrainingSnapshot& s, const TrainLabState& ls) {
    if (s.status != TrainingStatus::Idle && !s.task.empty()) return s.scores;
    const TaskInfo* info = find_task(ls.setup.preset);
    return info ? info->scores : all_head_scores();
}

// "previous-token L0H2": a mark's label on the curves.
std::string mark_label(const HeadScoreMark& m) {
    return head_score_info(m.score).label + " L" + std::to_string(m.layer) + "H" + std::to_string(m.head);
}

// The vertical lines on every curve: when each head type appeared, the phase change, and the step
// the timeline is scrubbed to (scrub_step < 0: following the newest).
std::vector<RefLine> curve_marks(const TrainingSnapshot& s, long scrub_step) {
    std::vector<RefLine> lines;
    for (const HeadScoreMark& m : s.marks) {
        if (m.at_start) continue;  // the model came with it: said in the status line
        const auto it = std::find(s.scores.begin(), s.scores.end(), m.score);
        lines.push_back(
            {false, double(m.step), mark_label(m), score_color(std::size_t(it - s.scores.begin()))});
    }
    if (s.cliff_step >= 0)
        lines.push_back({false, double(s.cliff_step), "phase change", IM_COL32(255, 200, 90, 220)});
    if (scrub_step >= 0)
        lines.push_back(
            {false, double(scrub_step), "step " + std::to_string(scrub_step), IM_COL32(235, 235, 235, 230)});
    return lines;
}

// A layer's probe attention as a Trace of `weights` stages (one per head), for io/figure.
Trace frame_layer_trace(const TimelineFrame& f, int layer, const ProbeAxes& axes) {
    Trace t;
    auto rows = std::make_shared<std::vector<std::string>>(axes.rows);
    auto cols = std::make_shared<std::vector<std::string>>(axes.cols);
    const auto& heads = f.attention[std::size_t(layer)];
    t.query_tokens = rows;
    t.key_tokens = cols;
    t.n = int(axes.rows.size());
    t.m = int(axes.cols.size());
    t.heads = int(heads.size());
    for (int h = 0; h < t.heads; ++h) {
        Stage s;
        s.name = "weights";
        s.head = h;
        s.title = "Layer " + std::to_string(layer) + (axes.cross ? " cross-attention" : " attention") + ", step " +
                  std::to_string(f.step);
        s.formula = axes.cross ? "A = softmax(Q_target K_sourceᵀ)" : "A = softmax(QKᵀ/√d_h + causal mask)";
        s.rows = Axis{Axis::Kind::QueryTokens, axes.cross ? "target words" : "query tokens", t.n, rows};
        s.cols = Axis{Axis::Kind::KeyTokens, axes.cross ? "source words" : "key tokens", t.m, cols};
        s.kind = ValueKind::Probability;
        s.data = std::make_shared<const Mat>(shown_map(heads[std::size_t(h)], axes));
        t.stages.push_back(std::move(s));
    }
    return t;
}

// Every layer's heads grid stacked top to bottom: one PNG of the frame.
Image frame_figure(const TimelineFrame& f, const ProbeAxes& labels) {
    std::vector<Image> layers;
    int w = 0, h = 0;
    for (int l = 0; l < int(f.attention.size()); ++l) {
        layers.push_back(
            render_heads_grid_figure(frame_layer_trace(f, l, labels), "weights", FigureOptions{2}));
        w = std::max(w, layers.back().width);
        h += layers.back().height;
    }
    Image out;
    out.width = w;
    out.height = h;
    out.rgba.assign(std::size_t(w) * std::size_t(h) * 4, 255);
    int y0 = 0;
    for (const Image& im : layers) {
        for (int y = 0; y < im.height; ++y)
            std::copy(im.rgba.begin() + std::ptrdiff_t(y) * im.width * 4,
                      im.rgba.begin() + std::ptrdiff_t(y + 1) * im.width * 4,
                      out.rgba.begin() + (std::ptrdiff_t(y0 + y) * w) * 4);
        y0 += im.height;
    }
    return out;
}

// The folder a checkpoint of this run is saved to: <export_dir>/train_<task>_step<N>_<timestamp>.
std::string checkpoint_dir(const AppState& state, const TrainingSnapshot& s) {
    return state.export_dir + "/train_" + s.task + "_step" + std::to_string(s.step) + "_" +
           timestamp_for_filename();
}

void save_checkpoint(AppState& state, const TrainingSnapshot& s, TrainLabState& ls, bool open_it) {
    if (!s.params) {
        state.set_status("Nothing to save yet: press Train first.", true);
        return;
    }
    try {
        const std::string dir = checkpoint_dir(state, s);
        make_dirs(dir);
        save_train_checkpoint(dir, *s.params);
        for (const auto& [name, content] : s.task_files) write_file_atomic(dir + "/" + name, content);
        ls.last_saved = dir;
        state.last_export_path = dir;
        state.set_status("Saved the model at step " + std::to_string(s.step) + " to " + dir, false);
        if (open_it) state.model.open_request = dir;
    } catch (const Error& e) {
        state.set_status(e.what(), true);
    }
}

void export_frame(AppState& state, const TrainingSnapshot& s, const TimelineFrame& f) {
    try {
        make_dirs(state.export_dir);
        const std::string path = state.export_dir + "/training_frame_step" + std::to_string(f.step) + "_" +
                                 timestamp_for_filename() + ".png";
        write_png(path, frame_figure(f, probe_axes(s)));
        state.last_export_path = path;
        state.set_status("Exported " + path, false);
    } catch (const Error& e) {
        state.set_status(e.what(), true);
    }
}

// What the chosen preset teaches (the lab's explanation line): its task's description.
const char* preset_explanation(const std::string& preset) {
    const TaskInfo* info = find_task(preset);
    return (info ? info : &task_registry().front())->description.c_str();
}

// The task's own knobs (its options with a lab label), on the line of its name.
void draw_task_knobs(AppState& state, TrainLabState& ls, const TaskInfo& info) {
    for (const TaskOption& o : info.options) {
        if (o.lab_label.empty() || o.kind == TaskOption::Kind::File) continue;
        auto it = ls.task_values.find(o.key);
        double value = it == ls.task_values.end() ? o.fallback : it->second;
        ImGui::SameLine();
        ImGui::SetNextItemWidth(em(110));
        bool changed = false;
        if (o.kind == TaskOption::Kind::Int) {
            int v = int(value);
            changed = ImGui::InputInt(o.lab_label.c_str(), &v);
            value = double(v);
        } else {
            changed = ImGui::InputDouble(o.lab_label.c_str(), &value, 0.05, 0.1, "%.2f");
        }
        remember_item_rect(state, "training_task_" + o.key);
        if (changed) ls.task_values[o.key] = std::clamp(value, o.min, o.max);
    }
}

// Makes the knobs those of preset i (its model, options and task).
void apply_preset(TrainLabState& ls, int i) {
    ls.preset = i;
    ls.setup = training_preset(preset_names()[std::size_t(i)]);
    ls.setup.options.threads = 2;
    ls.have_setup = true;
    ls.task_values.clear();
}

// A preset picked while a run exists would leave its curves under knobs of another task: ask first
// (save the run, drop it, or keep it and the preset) — the run is never lost without consent.
void draw_preset_confirm(AppState& state, TrainLabState& ls, const TrainingSnapshot& s) {
    if (ls.pending_preset < 0) return;
    if (!ImGui::IsPopupOpen("Switch preset?")) ImGui::OpenPopup("Switch preset?");
    ImGui::SetNextWindowSize(ImVec2(em(560), 0));
    if (!ImGui::BeginPopupModal("Switch preset?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
    const std::string next = training_preset_label(preset_names()[std::size_t(ls.pending_preset)]);
    ImGui::TextWrapped(
        "The run of \"%s\" is %s at step %ld of %ld. Switching to \"%s\" ends it and clears its curves "
        "and timeline. Save it as a checkpoint first to keep the model (Load checkpoint and train goes on "
        "from it).",
        training_preset_label(s.preset), training_status_name(s.status), s.step, s.total_steps, next.c_str());
    ImGui::Spacing();
    bool switch_now = false;
    ImGui::BeginDisabled(!s.params);
    if (ImGui::Button("Save checkpoint, then switch")) {
        save_checkpoint(state, s, ls, false);
        switch_now = true;
    }
    ImGui::EndDisabled();
    remember_item_rect(state, "training_confirm_save");
    ImGui::SameLine();
    if (ImGui::Button("Discard the run and switch")) switch_now = true;
    remember_item_rect(state, "training_confirm_discard");
    ImGui::SameLine();
    if (ImGui::Button("Keep the run") || ImGui::IsKeyPressed(ImGuiKey_Escape)) {
        ls.pending_preset = -1;
        ImGui::CloseCurrentPopup();
    }
    remember_item_rect(state, "training_confirm_keep");
    if (switch_now) {
        ls.session->reset();
        apply_preset(ls, ls.pending_preset);
        ls.pending_preset = -1;
        ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
}

// The knobs: preset, model size, steps, learning rate, seed, threads.
void draw_setup(AppState& state, TrainLabState& ls, const TrainingSnapshot& s) {
    const std::vector<std::string>& names = preset_names();
    ls.preset = std::clamp(ls.preset, 0, int(names.size()) - 1);
    if (!ls.have_setup) apply_preset(ls, ls.preset);
    ImGui::SetNextItemWidth(em(260));
    {
        const ImVec2 at = ImGui::GetCursorScreenPos();  // (the GUI tests click the combo, then an entry)
        state.widget_rects["training_preset"] = {at.x, at.y, em(260), ImGui::GetFrameHeight()};
    }
    // (tall enough for every preset at once: ImGui's regular height shows 8 and hides the rest)
    if (ImGui::BeginCombo("preset", training_preset_label(names[std::size_t(ls.preset)]), ImGuiComboFlags_HeightLarge)) {
        for (int i = 0; i < int(names.size()); ++i) {
            if (ImGui::Selectable(training_preset_label(names[std::size_t(i)]), i == ls.preset) &&
                i != ls.preset) {
                const bool has_run = s.status != TrainingStatus::Idle && s.status != TrainingStatus::Failed;
                if (has_run)
                    ls.pending_preset = i;
                else
                    apply_preset(ls, i);
            }
            remember_item_rect(state, "training_preset_" + names[std::size_t(i)]);
        }
        ImGui::EndCombo();
    }
    draw_preset_confirm(state, ls, s);
    ImGui::SameLine();
    const TaskInfo* info = find_task(ls.setup.preset);
    if (info && info->file_option()) {
        ImGui::SetNextItemWidth(em(360));
        ImGui::InputTextWithHint("text file", "path of a UTF-8 text file (Chinese works too)", &ls.text_path);
        remember_item_rect(state, "training_text_path");
        ImGui::SameLine();
        ImGui::Checkbox("BPE", &ls.text_bpe);
        remember_item_rect(state, "training_bpe");
        if (ls.text_bpe) {
            ImGui::SameLine();
            ImGui::SetNextItemWidth(em(90));
            ImGui::InputInt("tokens", &ls.bpe_vocab, 64, 256);
            ls.bpe_vocab = std::max(kMinBpeVocab, std::min(ls.bpe_vocab, 4096));
        }
        ImGui::SameLine();
        help_marker(
            "Characters: every distinct character of the file is a token. BPE: tokens are learned from the "
            "file as GPT-2's were (start from the 256 bytes, merge the most frequent adjacent pair, repeat "
            "until the vocabulary is full), so common words and whole Chinese characters become single "
            "tokens. A saved checkpoint keeps the BPE's vocab.json and merges.txt, so the main view reads "
            "its tokens as text.");
    } else {
        ImGui::TextDisabled("task: %s", ls.setup.task.name.c_str());
        if (info) draw_task_knobs(state, ls, *info);
    }
    TrainConfig& c = ls.setup.model;
    TrainOptions& o = ls.setup.options;
    ImGui::PushItemWidth(em(90));
    if (c.encoder_layers > 0) {  // an encoder–decoder: its encoder's blocks, then its decoder's
        ImGui::SliderInt("encoder layers", &c.encoder_layers, 1, 6);
        ImGui::SameLine();
    }
    ImGui::SliderInt(c.encoder_layers > 0 ? "decoder layers" : "layers", &c.n_layer, 1, 6);
    ImGui::SameLine();
    ImGui::SliderInt("heads", &c.n_head, 1, 8);
    ImGui::SameLine();
    ImGui::SliderInt("d_model", &c.d_model, 16, 256);
    ImGui::SameLine();
    int steps = int(o.steps);
    ImGui::SetNextItemWidth(em(130));  // room for 6 digits beside the - / + buttons
    if (ImGui::InputInt("steps", &steps, 100, 1000)) o.steps = std::max(1, std::min(steps, 1000000));
    ImGui::SameLine();
    float lr = float(o.adam.lr);
    if (ImGui::InputFloat("lr", &lr, 0, 0, "%.0e")) o.adam.lr = std::max(0.0, double(lr));
    ImGui::SameLine();
    int seed = int(o.seed);
    if (ImGui::InputInt("seed", &seed)) o.seed = std::uint64_t(std::max(0, seed));
    ImGui::SameLine();
    ImGui::SliderInt("threads", &o.threads, 1, 2);
    ImGui::PopItemWidth();
    ImGui::SameLine();
    help_marker(
        "Each preset brings a model that fits its task, in GPT-2 layout: token + position embeddings, "
        "LayerNorm, causal multi-head attention, an unembedding; attention-only (no MLP) except grokking, "
        "which has one layer with a GELU MLP and strong weight decay. Translation trains an encoder-decoder "
        "in T5's layout instead (RMSNorm, relative position buckets, gated-GELU MLPs, cross-attention from "
        "every decoder block to the encoder's output). heads must divide d_model. The run is "
        "deterministic for its seed and thread count: the same settings give the same curves bit for bit, "
        "however you pause.");
}

// The setup to train: the task again when its knobs were changed; a task that reads a text has it
// read from its file now, or learned (BPE) on the session's thread (one line on failure).
bool setup_to_train(AppState& state, TrainLabState& ls, TrainingSetup* out) {
    *out = ls.setup;
    const TaskInfo* info = find_task(ls.setup.preset);
    if (!info) return true;
    TaskRequest request;
    request.vocab_size = ls.setup.model.vocab_size;
    request.context = ls.setup.model.context;
    request.values = ls.task_values;
    try {
        if (!info->file_option()) {
            if (ls.task_values.empty()) return true;  // the preset's task as it is
            out->task = make_task(*info, request);
            if (info->fits_model) {
                out->model.vocab_size = out->task.vocab_size;
                out->model.context = std::max(out->model.context, out->task.context);
            }
            return true;
        }
        if (ls.text_path.empty()) throw Error("Pick a UTF-8 text file first (the path field above).");
        if (ls.text_bpe) {  // learned on the session's thread when the run starts
            request.values["bpe"] = ls.bpe_vocab;
            out->make_task = [info, request, path = ls.text_path,
                              v = ls.bpe_vocab](const std::atomic<bool>& stop) {
                TaskRequest r = request;
                TaskTextSource text;
                text.path = path;
                text.bpe_vocab = v;
                text.stop = &stop;
                r.load_text = task_text_loader(text);
                return attnviz::make_task(*info, r);
            };
            out->preparing = "learning " + std::to_string(ls.bpe_vocab) + " BPE tokens from " +
                             std::filesystem::path(ls.text_path).filename().string() + "…";
            return true;
        }
        TaskTextSource text;
        text.path = ls.text_path;
        request.load_text = task_text_loader(text);
        out->task = make_task(*info, request);
        out->model.vocab_size = out->task.vocab_size;
        return true;
    } catch (const Error& e) {
        state.set_status(e.what(), true);
        return false;
    }
}

void draw_buttons(AppState& state, TrainLabState& ls, const TrainingSnapshot& s) {
    TrainingSession& session = *ls.session;
    const bool has_run = s.status != TrainingStatus::Idle && s.status != TrainingStatus::Failed;
    // Knobs changed since the run shown started apply to the next run only: the button says so.
    const TrainConfig& c = ls.setup.model;
    const bool knobs_changed = has_run && (ls.setup.preset != s.preset || c.n_layer != s.config.n_layer ||
                                           c.encoder_layers != s.config.encoder_layers ||
                                           c.n_head != s.config.n_head || c.d_model != s.config.d_model ||
                                           ls.setup.options.steps != s.total_steps);
    if (ImGui::Button(!has_run        ? "Train###train"
                      : knobs_changed ? "Train again (new knobs)###train"
                                      : "Train again###train")) {
        TrainingSetup setup;
        if (setup_to_train(state, ls, &setup)) {
            session.start(setup);
            ls.follow = true;
        }
    }
    remember_item_rect(state, "training_train");
    if (knobs_changed && ImGui::IsItemHovered())
        wrapped_tooltip(
            "The curves show the run as it started; the knobs changed since then apply when you "
            "press Train again (a fresh run).");
    ImGui::SameLine();
    if (s.status == TrainingStatus::Running) {
        if (ImGui::Button("Pause")) session.pause();
    } else {
        ImGui::BeginDisabled(s.status != TrainingStatus::Paused);
        if (ImGui::Button("Resume")) session.resume();
        ImGui::EndDisabled();
    }
    remember_item_rect(state, "training_pause");
    ImGui::SameLine();
    ImGui::BeginDisabled(!has_run || s.status == TrainingStatus::Done);
    if (ImGui::Button("Step")) session.step_once();
    ImGui::EndDisabled();
    remember_item_rect(state, "training_step");
    ImGui::SameLine();
    ImGui::BeginDisabled(s.status == TrainingStatus::Idle);
    if (ImGui::Button("Reset")) session.reset();
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!s.params);
    if (ImGui::Button("Save checkpoint")) save_checkpoint(state, s, ls, false);
    remember_item_rect(state, "training_save");
    ImGui::SameLine();
    if (ImGui::Button("Open in main view")) save_checkpoint(state, s, ls, true);
    ImGui::EndDisabled();
    ImGui::SameLine();
    help_marker(
        "Train starts a fresh run with the settings above; Pause / Resume / Step (one optimizer step) / "
        "Reset. Save checkpoint writes model.safetensors + config.json (GPT-2 tensor names, what `attnviz "
        "train` writes) to a new folder in the export folder; Open in main view saves and opens it as a "
        "model.");
}

// Load a checkpoint (what Save checkpoint or `attnviz train` wrote) and continue training it on the
// induction task; one line in the status bar when it cannot be.
void draw_load(AppState& state, TrainLabState& ls) {
    ImGui::SetNextItemWidth(em(320));
    ImGui::InputTextWithHint("##load", "checkpoint folder to continue from", &ls.load_path);
    remember_item_rect(state, "training_load_path");
    ImGui::SameLine();
    const bool load = ImGui::Button("Load checkpoint and train");
    remember_item_rect(state, "training_load");
    if (load) {
        try {
            auto params = std::make_shared<const Params<float>>(load_train_checkpoint(ls.load_path));
            TrainingSetup setup = training_preset("induction");
            setup.options = ls.setup.options;
            setup.model = params->config;
            TaskRequest request;  // the induction task in the checkpoint's vocabulary and context
            request.vocab_size = params->config.vocab_size;
            request.context = params->config.context;
            setup.task = make_task(*find_task("induction"), request);
            setup.initial = params;
            ls.setup = setup;
            ls.preset = 0;
            ls.pending_preset = -1;
            ls.task_values.clear();
            ls.session->start(setup);
            ls.follow = true;
            state.set_status("Continuing to train " + ls.load_path, false);
        } catch (const Error& e) {
            state.set_status(e.what(), true);
        }
    }
    ImGui::SameLine();
    help_marker(
        "A folder with model.safetensors + config.json written by Save checkpoint or `attnviz train` "
        "(induction task). Training continues from its weights with fresh AdamW moments.");
}

void draw_status(const TrainingSnapshot& s) {
    if (s.status == TrainingStatus::Failed) {
        lab_error(s.error);
        return;
    }
    if (s.status == TrainingStatus::Idle) {
        ImGui::TextDisabled("Not trained yet: press Train.");
        return;
    }
    if (!s.preparing.empty()) {  // the task is being made (a text's BPE): no steps yet
        ImGui::TextUnformatted(s.preparing.c_str());
        return;
    }
    const double loss = s.train_loss.y.empty() ? NAN : s.train_loss.y.back();
    ImGui::Text("%s · step %ld / %ld · loss %.3f · lr %.2g · %.0f tokens/s · %.1f s",
                training_status_name(s.status), s.step, s.total_steps, loss, s.lr, s.tokens_per_second,
                s.running_seconds);
    const ImVec4 gold(1.0f, 0.8f, 0.35f, 1.0f);
    if (s.cliff_step >= 0) {
        ImGui::SameLine();
        ImGui::TextColored(gold, "· phase change at step %ld, %.1f s after Train", s.cliff_step,
                           s.cliff_seconds);
    } else if (s.cliff_before_start) {
        ImGui::SameLine();
        ImGui::TextColored(gold,
                           "· already past its phase change when loaded (held-out %s loss %.2f at step 0)",
                           s.repeat_label.c_str(), s.start_repeat_loss);
    }
    // The task's figures (translate: the alignment score) at the newest evaluation.
    if (!s.evals.empty())
        for (std::size_t k = 0; k < s.evals.back().figures.size(); ++k) {
            const auto& [name, value] = s.evals.back().figures[k];
            ImGui::Text("%s score %.2f", name.c_str(), value);
            if (k < s.figure_step.size() && s.figure_step[k] >= 0) {
                ImGui::SameLine();
                ImGui::TextColored(gold, "· reached 0.8 at step %ld, %.1f s after Train", s.figure_step[k],
                                   s.figure_seconds[k]);
            }
            ImGui::SameLine();
            help_marker(
                "The alignment score: for each target word of the probe sentences, the cross-attention of the "
                "last decoder layer is averaged over its heads; the word counts when its largest weight falls on "
                "the source word it translates. 1 = every word looks at its source word while being written.");
        }
    std::string had;
    for (const HeadScoreMark& m : s.marks)
        if (m.at_start) had += (had.empty() ? "" : ", ") + mark_label(m);
    if (!had.empty()) ImGui::TextDisabled("The loaded model already had (at step 0): %s", had.c_str());
}

void draw_curves(const TrainingSnapshot& s, const std::vector<RefLine>& marks, float w, float h) {
    PlotSeries train, held, first, repeat;
    train.label = "train";
    train.x = s.train_loss.x;
    train.y = s.train_loss.y;
    train.color = IM_COL32(150, 150, 150, 200);
    train.thickness = 1.0f;
    held.label = "held-out";
    first.label = "held-out, " + s.first_label;
    repeat.label = "held-out, " + s.repeat_label;
    for (const EvalPoint& e : s.evals) {
        held.x.push_back(double(e.step));
        held.y.push_back(e.heldout_loss);
        first.x.push_back(double(e.step));
        first.y.push_back(e.heldout_split.first);
        repeat.x.push_back(double(e.step));
        repeat.y.push_back(e.heldout_split.repeat);
    }
    held.color = palette(0);
    first.color = palette(1);
    repeat.color = palette(3);
    PlotSpec spec;
    spec.title = "loss (nats per token)";
    spec.x_label = "step";
    spec.y_min = 0;
    spec.x_min = 0;
    spec.x_max = std::max(1.0, double(s.total_steps));
    spec.ref_lines = marks;
    std::vector<PlotSeries> series{train, held};
    if (!s.first_label.empty()) series.push_back(first);  // tasks without that kind of position skip it
    if (!s.repeat_label.empty()) series.push_back(repeat);
    draw_line_plot("loss", spec, series, ImVec2(w, h));
}

// Under the loss curves: where the held-out data comes from (and a text's tokenizer), one line whose
// tooltip says why a held-out loss is worth watching.
void draw_heldout_note(const TrainingSnapshot& s, float w) {
    if (s.heldout_note.empty()) {
        ImGui::Dummy(ImVec2(1, ImGui::GetTextLineHeight()));
        return;
    }
    std::string text = "held-out: " + s.heldout_note;
    if (!s.tokenizer.empty()) text += "; tokens: " + s.tokenizer;
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + w);
    ImGui::TextDisabled("%s (?)", text.c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::IsItemHovered())
        wrapped_tooltip(
            "The held-out loss is measured on data the model never trains on. When the training loss falls "
            "and the held-out loss does not, the model is memorising its training data instead of learning "
            "a rule that carries over.");
}

// One curve per head score the task declares: the best head's score at each evaluation (which head
// that is shows in the marks and the hover), with the marks of when each type appeared.
void draw_scores(AppState& state, const TrainingSnapshot& s, const std::vector<HeadScore>& kinds,
                 const std::vector<RefLine>& marks, float w, float h) {
    if (kinds.empty()) {  // no plot to show: the loss curves take its room
        ImGui::TextDisabled("This task declares no head scores (?)");
        if (ImGui::IsItemHovered())
            wrapped_tooltip(
                "Head scores (previous-token, induction, ...) measure attention patterns that only mean "
                "something on sequences with that structure; this task's sequences have none. Watch the "
                "attention grid instead: which tokens does the last position gather?");
        return;
    }
    std::vector<PlotSeries> series;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
        PlotSeries p;
        p.label = head_score_info(kinds[k]).label + " (best head)";
        p.color = score_color(k);
        p.thickness = 1.8f;
        for (const EvalPoint& e : s.evals) {
            double best = NAN;
            for (const auto& layer : e.scores)
                for (const HeadScores& hs : layer) {
                    const double v = head_score_value(hs, kinds[k]);
                    if (!(best >= v)) best = v;
                }
            if (std::isnan(best)) continue;
            p.x.push_back(double(e.step));
            p.y.push_back(best);
        }
        series.push_back(std::move(p));
    }
    // The task's figures (translate: the alignment score of the last layer's mean of heads).
    for (std::size_t k = 0; k < s.figure_names.size(); ++k) {
        PlotSeries p;
        p.label = s.figure_names[k] + " score (last layer, heads averaged)";
        p.color = IM_COL32(255, 200, 90, 230);
        p.thickness = 2.2f;
        for (const EvalPoint& e : s.evals)
            if (k < e.figures.size()) {
                p.x.push_back(double(e.step));
                p.y.push_back(e.figures[k].second);
            }
        series.push_back(std::move(p));
    }
    PlotSpec spec;
    spec.title = "head scores on the probe batch (the best head of each type)";
    spec.x_label = "step";
    spec.y_min = 0;
    spec.y_max = 1;
    spec.x_min = 0;
    spec.x_max = std::max(1.0, double(s.total_steps));
    spec.legend_right = false;
    spec.legend_bottom = false;
    spec.ref_lines = marks;
    draw_line_plot("scores", spec, series, ImVec2(w, h));
    // What each score measures, on hover (the legend inside the plot cannot take the mouse).
    ImGui::TextDisabled("scores:");
    for (std::size_t k = 0; k < kinds.size(); ++k) {
        const HeadScoreInfo info = head_score_info(kinds[k]);
        ImGui::SameLine();
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(score_color(k)));
        ImGui::TextUnformatted((info.label + " (?)").c_str());
        ImGui::PopStyleColor();
        remember_item_rect(state, std::string("training_score_") + head_score_name(kinds[k]));
        if (ImGui::IsItemHovered()) {
            char rule[256];
            std::snprintf(rule, sizeof rule,
                          "\n\nThe curve is the highest score of any head at each evaluation. A head counts "
                          "as %s once its score reaches %.2f; a dashed line on every curve marks the step "
                          "the first one did.",
                          info.label.c_str(), info.threshold);
            wrapped_tooltip(info.explanation + rule);
        }
    }
}

void draw_lr(const TrainingSnapshot& s, const std::vector<RefLine>& marks, float w, float h) {
    PlotSeries lr;
    lr.label = "";
    lr.x = s.learning_rate.x;
    lr.y = s.learning_rate.y;
    lr.color = palette(2);
    PlotSpec spec;
    spec.title = "learning rate (warm-up, cosine decay)";
    spec.x_label = "step";
    spec.y_min = 0;
    spec.x_min = 0;
    spec.x_max = std::max(1.0, double(s.total_steps));
    spec.legend = false;
    spec.ref_lines = marks;
    draw_line_plot("lr", spec, {lr}, ImVec2(w, h));
}

// The slider's positions: the kept frames, then the live one when it is newer (while training).
int timeline_positions(const TrainingSnapshot& s) {
    const int count = int(s.timeline.size());
    if (count == 0 || !s.live) return 0;
    return count + (s.timeline.back()->step != s.live->step ? 1 : 0);
}

// The frame the timeline shows this frame (the newest when following), or null before a run.
const TimelineFrame* select_frame(TrainLabState& ls, const TrainingSnapshot& s) {
    const int positions = timeline_positions(s);
    if (positions == 0) return nullptr;
    if (ls.frame_run != s.run) {
        ls.frame_run = s.run;
        ls.follow = true;
    }
    if (ls.follow) ls.frame = positions - 1;
    ls.frame = std::max(0, std::min(ls.frame, positions - 1));
    return ls.frame < int(s.timeline.size()) ? s.timeline[std::size_t(ls.frame)].get() : s.live.get();
}

// The timeline slider (the frame of select_frame), marked on the curves while not following.
const TimelineFrame* draw_timeline(AppState& state, TrainLabState& ls, const TrainingSnapshot& s) {
    const int positions = timeline_positions(s);
    const TimelineFrame* f = select_frame(ls, s);
    if (!f) return nullptr;
    char label[64];
    std::snprintf(label, sizeof label, "step %ld", f->step);
    ImGui::SetNextItemWidth(std::max(200.0f, ImGui::GetContentRegionAvail().x - 250));
    if (ImGui::SliderInt("##timeline", &ls.frame, 0, positions - 1, label))
        ls.follow = ls.frame == positions - 1;
    remember_item_rect(state, "training_timeline");
    ImGui::SameLine();
    ImGui::Checkbox("follow", &ls.follow);
    ImGui::SameLine();
    help_marker(
        "The timeline keeps a snapshot of the probe sequence's attention (every layer and head) at every "
        "evaluation, within 64 MiB: when full, every other snapshot is dropped and from then on only "
        "every 2nd (4th, ...) evaluation is kept, so the frames stay spread evenly over the whole run. "
        "Drag it back to watch the heads form (the step is marked on the curves); 'follow' shows the "
        "newest.");
    return select_frame(ls, s);
}

// The layer × head grid of the frame's probe attention with shared axes: the probe's tokens label the
// rows left of the first column and the columns above the first row (as a facet grid), so the maps
// stay as large as the grid allows. A click on a head shows it alone, large, labelled on both axes (a
// click again returns to the grid).
void draw_grid(AppState& state, TrainLabState& ls, const TrainingSnapshot& s, const TimelineFrame& f, float w,
               float h) {
    const int L = int(f.attention.size());
    const int H = L ? int(f.attention[0].size()) : 0;
    if (L == 0 || H == 0) return;
    const ProbeAxes axes = probe_axes(s);
    const Axis rows = label_axis(axes.cross ? "target" : "query", axes.rows);
    const Axis cols = label_axis(axes.cross ? "source" : "key", axes.cols);
    // An encoder–decoder's last layer also shows the mean of its heads: what the alignment score reads.
    const int extra = axes.cross ? 1 : 0;
    ls.views.resize(std::size_t(L * (H + extra)));
    // A new encoder–decoder run opens on that mean, large (the alignment forming); a click shows all.
    if (axes.cross && ls.cross_focus_run != s.run) {
        ls.cross_focus_run = s.run;
        ls.focus_layer = L - 1;
        ls.focus_head = H;
    }
    if (ls.focus_layer >= L || ls.focus_head >= H + extra ||
        (ls.focus_head == H && ls.focus_layer != L - 1))
        ls.focus_layer = ls.focus_head = -1;
    const bool focused = ls.focus_layer >= 0;
    // One shared 0–1 scale (weights are probabilities): its colour bar sits right of the grid.
    static const ColorRange kRange{ColorMap::Sequential, 0.0f, 1.0f};
    // (the bar, its tick labels and its vertical caption: draw_colorbar's width)
    const float bar_w = 16 + 6 + ImGui::CalcTextSize("0.5").x + 10 + ImGui::GetTextLineHeight() + 4;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float line = ImGui::GetTextLineHeight();
    const int n = int(axes.cols.size());
    // The label margins as the heatmap widget makes them (its labels: the token, after its index once
    // an axis is long enough to be thinned; vertical column labels when they do not fit their cells).
    float row_w = 0, col_w = 0;
    for (const std::string& t : axes.rows) row_w = std::max(row_w, ImGui::CalcTextSize(t.c_str()).x);
    for (const std::string& t : axes.cols) col_w = std::max(col_w, ImGui::CalcTextSize(t.c_str()).x);
    if (int(axes.rows.size()) > 32) row_w += ImGui::CalcTextSize((std::to_string(axes.rows.size()) + " ").c_str()).x;
    if (n > 32) col_w += ImGui::CalcTextSize((std::to_string(n) + " ").c_str()).x;
    const float row_label_w = std::min(row_w + 8, 120.0f);
    const float title_h = line + style.ItemSpacing.y;
    const int gl = focused ? 1 : L, gh = focused ? 1 : H + extra;
    const float gap_x = style.ItemSpacing.x, gap_y = style.ItemSpacing.y;
    auto col_label_h = [&](float side) {
        return side / float(std::max(1, n)) < col_w + 6 ? std::min(col_w, 90.0f) + 8 : line + 4;
    };
    // The image side: the grid (plus the labels of its first column and row) fills w × h.
    float side = std::min((w - bar_w - row_label_w) / float(gh) - 8 - gap_x,
                          (h - line - 12) / float(gl) - title_h - 4 - gap_y);
    side = std::min(side, (h - col_label_h(side)) / float(gl) - title_h - 4 - gap_y);
    side = std::floor(std::max(40.0f, side));
    const float top_labels = col_label_h(side);
    ImGui::BeginGroup();
    int drawn_rows = 0;
    for (int l = 0; l < L; ++l) {
        bool first_in_row = true;
        const int cells = H + (l == L - 1 ? extra : 0);
        for (int hd = 0; hd < cells; ++hd) {
            if (focused && (l != ls.focus_layer || hd != ls.focus_head)) continue;
            if (!first_in_row) ImGui::SameLine();
            const bool left = first_in_row, top = drawn_rows == 0;
            const bool mean = hd == H;  // the last layer's heads averaged
            first_in_row = false;
            char id[32], title[96];
            std::snprintf(id, sizeof id, "att%d_%d", l, hd);
            if (mean)
                std::snprintf(title, sizeof title, focused ? "layer %d, mean of heads (click: all)" : "layer %d, mean of heads",
                              l);
            else
                std::snprintf(title, sizeof title, focused ? "layer %d head %d (click: all heads)" : "layer %d head %d", l,
                              hd);
            const std::string key = "lab/train/" + std::to_string(s.run) + "/" + std::to_string(f.step) + "/" +
                                    std::to_string(l) + "/" + (mean ? std::string("mean") : std::to_string(hd));
            const auto& layer = f.attention[std::size_t(l)];
            const MatT<float> M = shown_map(mean ? mean_of_heads(layer) : layer[std::size_t(hd)], axes);
            const CachedMatrix& cm =
                view_cache().get(key, ValueKind::Probability, [&] { return std::make_shared<const Mat>(M); });
            HeatmapInput in;
            in.matrix = &cm;
            in.row_axis = &rows;
            in.col_axis = &cols;
            in.range = &kRange;
            HeatmapOptions opt;
            opt.labels = true;  // the widget thins them to what fits (every k-th, rotated when crowded)
            opt.row_labels = left;
            opt.col_labels = top;
            opt.width = side + 8 + (left ? row_label_w : 0.0f);
            opt.height = side + title_h + 4 + (top ? top_labels : 0.0f);
            opt.center = false;
            opt.row_label_click = false;
            opt.axis_titles = false;
            opt.colorbar = false;
            opt.numbers = focused;
            opt.title = title;
            ImGui::BeginGroup();
            const HeatmapResult r = heatmap_widget(id, ls.views[std::size_t(l * (H + extra) + hd)], in, opt);
            ImGui::EndGroup();
            remember_item_rect(state, "training_head_" + std::to_string(l) + "_" + (mean ? std::string("mean") : std::to_string(hd)));
            if (r.clicked) {
                ls.focus_layer = focused ? -1 : l;
                ls.focus_head = focused ? -1 : hd;
            }
            if (r.hovered && r.row >= 0 && r.col >= 0 && r.row < M.rows() && r.col < M.cols())
                ImGui::SetTooltip("layer %d %s, step %ld\n%s %d (%s) -> %s %d (%s)\nweight %s\n%s", l,
                                  mean ? "mean of heads" : ("head " + std::to_string(hd)).c_str(), f.step,
                                  axes.cross ? "writing target word" : "query", r.row, rows.label(r.row).c_str(),
                                  axes.cross ? "source word" : "key", r.col, cols.label(r.col).c_str(),
                                  format_value(M(r.row, r.col)).c_str(),
                                  focused ? "click: back to all heads" : "click: this map alone, large");
        }
        if (!first_in_row) ++drawn_rows;
    }
    ImGui::EndGroup();
    ImGui::SameLine();
    draw_colorbar(kRange, bar_w, std::max(60.0f, side), false);
    for (const std::string& t : axes.rows) state.lab_glyph_text += t;
    for (const std::string& t : axes.cols) state.lab_glyph_text += t;
}

nlohmann::json training_log(const TrainingSnapshot& s, const TrainLabState& ls, const TimelineFrame* f,
                            const std::vector<RefLine>& marks) {
    nlohmann::json j;
    j["preset"] = ls.setup.preset;
    j["task"] = ls.setup.task.name;
    j["status"] = training_status_name(s.status);
    j["run"] = s.run;
    j["step"] = s.step;
    j["total_steps"] = s.total_steps;
    j["evals"] = s.evals.size();
    j["cliff_step"] = s.cliff_step;
    j["cliff_seconds"] = s.cliff_seconds;
    j["running_seconds"] = s.running_seconds;
    j["tokens_per_second"] = s.tokens_per_second;
    j["timeline_frames"] = s.timeline.size();
    j["frame_step"] = f ? f->step : -1;
    j["follow"] = ls.follow;
    j["error"] = s.error;
    j["saved"] = ls.last_saved;
    j["text_bpe"] = ls.text_bpe;
    j["preparing"] = s.preparing;
    j["vocab_size"] = s.config.vocab_size;  // of the run (a text's: its characters or BPE tokens)
    j["task_files"] = nlohmann::json::array();
    for (const auto& f : s.task_files) j["task_files"].push_back(f.first);
    j["cliff_before_start"] = s.cliff_before_start;
    j["scores"] = nlohmann::json::array();  // the score curves shown (the task's declaration)
    for (HeadScore k : shown_scores(s, ls)) j["scores"].push_back(head_score_name(k));
    j["marks"] = nlohmann::json::array();
    for (const HeadScoreMark& m : s.marks)
        j["marks"].push_back({{"score", head_score_name(m.score)},
                              {"step", m.step},
                              {"layer", m.layer},
                              {"head", m.head},
                              {"at_start", m.at_start}});
    j["mark_scores"] = nlohmann::json::array();
    for (const HeadScoreMark& m : s.marks) j["mark_scores"].push_back(head_score_name(m.score));
    j["scrub_step"] = f && !ls.follow ? f->step : -1;
    j["curve_marks"] = nlohmann::json::array();  // the labels of the lines drawn on the curves
    for (const RefLine& r : marks) j["curve_marks"].push_back(r.label);
    j["probe_labels"] = probe_labels(s);
    {
        const ProbeAxes axes = probe_axes(s);
        j["probe_rows"] = axes.rows;
        j["probe_cols"] = axes.cols;
        j["cross_attention"] = axes.cross;
    }
    j["figures"] = nlohmann::json::object();  // the task's figures at the newest evaluation
    if (!s.evals.empty())
        for (const auto& [name, value] : s.evals.back().figures) j["figures"][name] = value;
    j["figure_steps"] = nlohmann::json::object();  // when each first reached 0.8 (-1: not yet)
    for (std::size_t k = 0; k < s.figure_names.size() && k < s.figure_step.size(); ++k)
        j["figure_steps"][s.figure_names[k]] = s.figure_step[k];
    j["encoder_layers"] = s.config.encoder_layers;
    j["focus"] =
        ls.focus_layer >= 0 ? std::to_string(ls.focus_layer) + "/" + std::to_string(ls.focus_head) : "";
    j["loss_legend"] = s.first_label;
    j["tokenizer"] = s.tokenizer;
    j["heldout_note"] = s.heldout_note;
    j["confirm"] = ls.pending_preset >= 0 ? preset_names()[std::size_t(ls.pending_preset)] : "";
    return j;
}

}  // namespace

void draw_lab_training(AppState& state, LabContext& ctx) {
    TrainLabState& ls = ctx.state<TrainLabState>();
    state.lab_glyph_text.clear();
    if (ctx.closing) {
        if (ls.session) ls.session->pause();  // closing the window stops the training (it can resume)
        return;
    }
    // Each new snapshot wakes the event loop (one frame per publication, ≤ ~20 a second), so the
    // window neither polls at full speed while training nor misses an update.
    if (!ls.session)
        ls.session = std::make_unique<TrainingSession>(kTimelineBytes, [] { glfwPostEmptyEvent(); });
    // `--lab training:1` starts training the preset at once (screenshots, measurements).
    const int tab = ctx.requested_tab;
    ctx.requested_tab = -1;

    lab_export_button(state, "training");
    ImGui::SameLine();
    lab_explanation(preset_explanation(ls.setup.preset));
    draw_setup(state, ls, *ls.session->snapshot());
    if (tab == 1 && !ls.autostart_done) {
        ls.autostart_done = true;
        TrainingSetup setup;
        if (setup_to_train(state, ls, &setup)) ls.session->start(setup);
    }
    // (taken after the knobs: the preset's confirmation may have reset the run)
    const std::shared_ptr<const TrainingSnapshot> snap = ls.session->snapshot();
    const TrainingSnapshot& s = *snap;
    draw_buttons(state, ls, s);
    ImGui::SameLine();
    draw_load(state, ls);
    draw_status(s);

    // The frame the timeline shows, chosen before the curves so they can mark its step.
    const TimelineFrame* shown = select_frame(ls, s);
    const std::vector<RefLine> marks = curve_marks(s, shown && !ls.follow ? shown->step : -1);
    const std::vector<HeadScore> kinds = shown_scores(s, ls);

    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float left_w = std::floor(avail.x * 0.45f), right_w = avail.x - left_w - 12;
    const float plot_h = std::max(160.0f, (avail.y - 40 - 2 * line) * 0.4f);
    ImGui::BeginGroup();
    draw_curves(s, marks, left_w, kinds.empty() ? 2 * plot_h : plot_h);
    draw_heldout_note(s, left_w);
    draw_scores(state, s, kinds, marks, left_w, plot_h);
    draw_lr(s, marks, left_w, std::max(100.0f, avail.y - 2 * plot_h - 30 - 2 * line));
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    const TimelineFrame* f = draw_timeline(state, ls, s);
    if (f) {
        ImGui::SameLine();
        if (ImGui::Button("Export frame PNG")) export_frame(state, s, *f);
        remember_item_rect(state, "training_export_frame");
        if (!s.probe_source_ids.empty())
            lab_heading(ls.focus_layer >= 0
                            ? "cross-attention: row = target word being written, column = source word"
                            : "cross-attention, every decoder layer × head (rows: target, columns: source; click "
                              "one to enlarge it)");
        else
            lab_heading(ls.focus_layer >= 0
                            ? "attention of the probe sequence, one head (row = query, column = key)"
                            : "attention of the probe sequence, every layer × head (click one to enlarge it)");
        draw_grid(state, ls, s, *f, right_w, std::max(200.0f, ImGui::GetContentRegionAvail().y - 8));
    }
    ImGui::EndGroup();
    state.training_log = training_log(s, ls, f, marks);
}

}  // namespace attnviz::app
