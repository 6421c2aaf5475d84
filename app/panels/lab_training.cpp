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
};

// A layer's probe attention as a Trace of `weights` stages (one per head), for io/figure.
Trace frame_layer_trace(const TimelineFrame& f, int layer, const std::vector<int>& ids) {
    Trace t;
    auto tokens = std::make_shared<std::vector<std::string>>();
    for (int id : ids) tokens->push_back(std::to_string(id));
    const auto& heads = f.attention[std::size_t(layer)];
    t.query_tokens = t.key_tokens = tokens;
    t.n = t.m = int(ids.size());
    t.heads = int(heads.size());
    for (int h = 0; h < t.heads; ++h) {
        Stage s;
        s.name = "weights";
        s.head = h;
        s.title = "Layer " + std::to_string(layer) + " attention, step " + std::to_string(f.step);
        s.formula = "A = softmax(QKᵀ/√d_h + causal mask)";
        s.rows = Axis{Axis::Kind::QueryTokens, "query tokens", t.n, tokens};
        s.cols = Axis{Axis::Kind::KeyTokens, "key tokens", t.m, tokens};
        s.kind = ValueKind::Probability;
        s.data = std::make_shared<const Mat>(heads[std::size_t(h)]);
        t.stages.push_back(std::move(s));
    }
    return t;
}

// Every layer's heads grid stacked top to bottom: one PNG of the frame.
Image frame_figure(const TimelineFrame& f, const std::vector<int>& ids) {
    std::vector<Image> layers;
    int w = 0, h = 0;
    for (int l = 0; l < int(f.attention.size()); ++l) {
        layers.push_back(render_heads_grid_figure(frame_layer_trace(f, l, ids), "weights", FigureOptions{2}));
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
        write_png(path, frame_figure(f, s.probe_ids));
        state.last_export_path = path;
        state.set_status("Exported " + path, false);
    } catch (const Error& e) {
        state.set_status(e.what(), true);
    }
}

double score_value(const HeadScores& s, int kind) {
    return kind == 0 ? s.previous_token : kind == 1 ? s.induction : kind == 2 ? s.first_token : s.same_token;
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

// The knobs: preset, model size, steps, learning rate, seed, threads.
void draw_setup(AppState& state, TrainLabState& ls) {
    const std::vector<std::string>& names = preset_names();
    ls.preset = std::clamp(ls.preset, 0, int(names.size()) - 1);
    if (!ls.have_setup) {
        ls.setup = training_preset(names[std::size_t(ls.preset)]);
        ls.setup.options.threads = 2;
        ls.have_setup = true;
    }
    ImGui::SetNextItemWidth(em(260));
    {
        const ImVec2 at = ImGui::GetCursorScreenPos();  // (the GUI tests click the combo, then an entry)
        state.widget_rects["training_preset"] = {at.x, at.y, em(260), ImGui::GetFrameHeight()};
    }
    if (ImGui::BeginCombo("preset", training_preset_label(names[std::size_t(ls.preset)]))) {
        for (int i = 0; i < int(names.size()); ++i) {
            if (ImGui::Selectable(training_preset_label(names[std::size_t(i)]), i == ls.preset)) {
                ls.preset = i;
                ls.have_setup = false;
                ls.task_values.clear();
            }
            remember_item_rect(state, "training_preset_" + names[std::size_t(i)]);
        }
        ImGui::EndCombo();
    }
    if (!ls.have_setup) {
        ls.setup = training_preset(names[std::size_t(ls.preset)]);
        ls.setup.options.threads = 2;
        ls.have_setup = true;
    }
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
    ImGui::SliderInt("layers", &c.n_layer, 1, 6);
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
        "which has one layer with a GELU MLP and strong weight decay. heads must divide d_model. The run is "
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
    if (ImGui::Button(has_run ? "Train again" : "Train")) {
        TrainingSetup setup;
        if (setup_to_train(state, ls, &setup)) {
            session.start(setup);
            ls.follow = true;
        }
    }
    remember_item_rect(state, "training_train");
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
    ImGui::SameLine();
    if (ImGui::Button("Load checkpoint and train")) {
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
    if (s.cliff_step >= 0) {
        ImGui::SameLine();
        ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.35f, 1.0f), "· phase change at step %ld, %.1f s after Train",
                           s.cliff_step, s.cliff_seconds);
    }
}

void draw_curves(const TrainingSnapshot& s, float w, float h) {
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
    if (s.cliff_step >= 0)
        spec.ref_lines.push_back({false, double(s.cliff_step), "phase change", IM_COL32(255, 200, 90, 220)});
    std::vector<PlotSeries> series{train, held};
    if (!s.first_label.empty()) series.push_back(first);  // tasks without that kind of position skip it
    if (!s.repeat_label.empty()) series.push_back(repeat);
    draw_line_plot("loss", spec, series, ImVec2(w, h));
}

// The story task's heads: every head's adjective→noun, pronoun→antecedent and induction score, one
// colour per kind of score (core/task_registry.hpp's HeadScore, the columns of metrics.csv).
void draw_story_scores(const TrainingSnapshot& s, float w, float h) {
    const struct {
        HeadScore kind;
        const char* label;
        int colour;
    } kinds[] = {{HeadScore::AdjectiveNoun, "adjective→noun (each head)", 0},
                 {HeadScore::PronounAntecedent, "pronoun→antecedent (each head)", 3},
                 {HeadScore::Induction, "induction (each head)", 1}};
    std::vector<PlotSeries> series;
    for (const auto& k : kinds)
        for (int l = 0; l < s.config.n_layer; ++l)
            for (int hd = 0; hd < s.config.n_head; ++hd) {
                PlotSeries p;
                if (l == 0 && hd == 0) p.label = k.label;
                p.color = palette(k.colour);
                p.thickness = 1.5f;
                for (const EvalPoint& e : s.evals) {
                    if (int(e.scores.size()) <= l || int(e.scores[std::size_t(l)].size()) <= hd) continue;
                    p.x.push_back(double(e.step));
                    p.y.push_back(head_score_value(e.scores[std::size_t(l)][std::size_t(hd)], k.kind));
                }
                series.push_back(std::move(p));
            }
    PlotSpec spec;
    spec.title = "head scores on the probe stories: noun→its adjectives, pronoun→antecedent, induction";
    spec.x_label = "step";
    spec.y_min = 0;
    spec.y_max = 1;
    spec.x_min = 0;
    spec.x_max = std::max(1.0, double(s.total_steps));
    spec.legend_right = false;
    spec.legend_bottom = false;
    draw_line_plot("scores", spec, series, ImVec2(w, h));
}

void draw_scores(const TrainingSnapshot& s, float w, float h) {
    if (s.task == "story") return draw_story_scores(s, w, h);
    // Layer 0: previous-token scores; later layers: induction scores — the two halves of the circuit.
    // One colour per layer (every head of the layer a curve), so the legend stays two lines.
    std::vector<PlotSeries> series;
    const int L = s.config.n_layer, H = s.config.n_head;
    for (int l = 0; l < L; ++l)
        for (int hd = 0; hd < H; ++hd) {
            PlotSeries p;
            const int kind = l == 0 ? 0 : 1;
            if (hd == 0)
                p.label = l == 0 ? "layer 0 heads: previous-token score"
                                 : "layer " + std::to_string(l) + " heads: induction score";
            p.color = palette(l == 0 ? 0 : l == 1 ? 3 : 1 + l);
            p.thickness = 1.5f;
            for (const EvalPoint& e : s.evals) {
                if (int(e.scores.size()) <= l || int(e.scores[std::size_t(l)].size()) <= hd) continue;
                p.x.push_back(double(e.step));
                p.y.push_back(score_value(e.scores[std::size_t(l)][std::size_t(hd)], kind));
            }
            series.push_back(std::move(p));
        }
    PlotSpec spec;
    spec.title = "head scores on the probe batch (layer 0: previous-token; later layers: induction)";
    spec.x_label = "step";
    spec.y_min = 0;
    spec.y_max = 1;
    spec.x_min = 0;
    spec.x_max = std::max(1.0, double(s.total_steps));
    spec.legend_right = false;
    spec.legend_bottom = false;
    if (s.cliff_step >= 0)
        spec.ref_lines.push_back({false, double(s.cliff_step), "phase change", IM_COL32(255, 200, 90, 220)});
    draw_line_plot("scores", spec, series, ImVec2(w, h));
}

void draw_lr(const TrainingSnapshot& s, float w, float h) {
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
    draw_line_plot("lr", spec, {lr}, ImVec2(w, h));
}

// The timeline slider and the layer × head grid of the frame it selects.
const TimelineFrame* draw_timeline(AppState& state, TrainLabState& ls, const TrainingSnapshot& s) {
    const int count = int(s.timeline.size());
    if (count == 0 || !s.live) return nullptr;
    if (ls.frame_run != s.run) {
        ls.frame_run = s.run;
        ls.follow = true;
    }
    // The slider's last position is the live frame (newer than the last kept one while training).
    const bool live_is_extra = s.timeline.back()->step != s.live->step;
    const int positions = count + (live_is_extra ? 1 : 0);
    if (ls.follow) ls.frame = positions - 1;
    ls.frame = std::max(0, std::min(ls.frame, positions - 1));
    const TimelineFrame* f = ls.frame < count ? s.timeline[std::size_t(ls.frame)].get() : s.live.get();
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
        "Drag it back to watch the heads form; 'follow' shows the newest.");
    return f;
}

void draw_grid(TrainLabState& ls, const TrainingSnapshot& s, const TimelineFrame& f, float w, float h) {
    const int L = int(f.attention.size());
    const int H = L ? int(f.attention[0].size()) : 0;
    if (L == 0 || H == 0) return;
    auto tokens = std::make_shared<std::vector<std::string>>();
    for (int id : s.probe_ids) tokens->push_back(std::to_string(id));
    const Axis rows = label_axis("query", *tokens);
    const Axis cols = label_axis("key", *tokens);
    ls.views.resize(std::size_t(L * H));
    // One shared 0–1 scale (weights are probabilities): its colour bar sits right of the grid.
    static const ColorRange kRange{ColorMap::Sequential, 0.0f, 1.0f};
    // (the bar, its tick labels and its vertical caption: draw_colorbar's width)
    const float bar_w = 16 + 6 + ImGui::CalcTextSize("0.5").x + 10 + ImGui::GetTextLineHeight() + 4;
    const float side = std::max(40.0f, std::min((w - bar_w) / float(H) - 8, (h - 4) / float(L) - 24));
    ImGui::BeginGroup();
    for (int l = 0; l < L; ++l) {
        for (int hd = 0; hd < H; ++hd) {
            if (hd) ImGui::SameLine();
            char id[32], title[48];
            std::snprintf(id, sizeof id, "att%d_%d", l, hd);
            std::snprintf(title, sizeof title, "layer %d head %d", l, hd);
            const std::string key = "lab/train/" + std::to_string(s.run) + "/" + std::to_string(f.step) +
                                    "/" + std::to_string(l) + "/" + std::to_string(hd);
            const MatT<float>& M = f.attention[std::size_t(l)][std::size_t(hd)];  // [n, n]
            const CachedMatrix& cm =
                view_cache().get(key, ValueKind::Probability, [&] { return std::make_shared<const Mat>(M); });
            HeatmapInput in;
            in.matrix = &cm;
            in.row_axis = &rows;
            in.col_axis = &cols;
            in.range = &kRange;
            HeatmapOptions opt;
            opt.width = side;
            opt.height = side + 20;
            opt.labels = false;
            opt.axis_titles = false;
            opt.colorbar = false;
            opt.numbers = false;
            opt.title = title;
            ImGui::BeginGroup();
            const HeatmapResult r = heatmap_widget(id, ls.views[std::size_t(l * H + hd)], in, opt);
            ImGui::EndGroup();
            if (r.hovered && r.row >= 0 && r.col >= 0 && r.row < M.rows() && r.col < M.cols())
                ImGui::SetTooltip(
                    "layer %d head %d, step %ld\nquery %d (token %s) -> key %d (token %s)\nweight %s", l, hd,
                    f.step, r.row, rows.label(r.row).c_str(), r.col, cols.label(r.col).c_str(),
                    format_value(M(r.row, r.col)).c_str());
        }
    }
    ImGui::EndGroup();
    ImGui::SameLine();
    draw_colorbar(kRange, bar_w, std::max(60.0f, side), false);
}

nlohmann::json training_log(const TrainingSnapshot& s, const TrainLabState& ls, const TimelineFrame* f) {
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
    return j;
}

}  // namespace

void draw_lab_training(AppState& state, LabContext& ctx) {
    TrainLabState& ls = ctx.state<TrainLabState>();
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
    draw_setup(state, ls);
    if (tab == 1 && !ls.autostart_done) {
        ls.autostart_done = true;
        TrainingSetup setup;
        if (setup_to_train(state, ls, &setup)) ls.session->start(setup);
    }
    std::shared_ptr<const TrainingSnapshot> snap = ls.session->snapshot();
    const TrainingSnapshot& s = *snap;
    draw_buttons(state, ls, s);
    ImGui::SameLine();
    draw_load(state, ls);
    draw_status(s);

    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float left_w = std::floor(avail.x * 0.45f), right_w = avail.x - left_w - 12;
    const float plot_h = std::max(160.0f, (avail.y - 40) * 0.4f);
    ImGui::BeginGroup();
    draw_curves(s, left_w, plot_h);
    draw_scores(s, left_w, plot_h);
    draw_lr(s, left_w, std::max(100.0f, avail.y - 2 * plot_h - 30));
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    const TimelineFrame* f = draw_timeline(state, ls, s);
    if (f) {
        ImGui::SameLine();
        if (ImGui::Button("Export frame PNG")) export_frame(state, s, *f);
        remember_item_rect(state, "training_export_frame");
        lab_heading("attention of the probe sequence, every layer × head (row = query, column = key)");
        draw_grid(ls, s, *f, right_w, std::max(200.0f, ImGui::GetContentRegionAvail().y - 8));
    }
    ImGui::EndGroup();
    state.training_log = training_log(s, ls, f);
}

}  // namespace attnviz::app
