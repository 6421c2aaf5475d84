#include "app/app_state.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/head_labels.hpp"
#include "app/panels/heatmap_widget.hpp"
#include "app/panels/view_state.hpp"
#include "app/tour_player.hpp"
#include "core/stage_catalogue.hpp"

namespace attnviz::app {

namespace {

int clamp_int(int v, int lo, int hi) {
    return std::max(lo, std::min(v, hi));
}

int index_of(const std::vector<StageId>& list, const std::string& name) {
    for (std::size_t i = 0; i < list.size(); ++i)
        if (list[i].name == name) return int(i);
    return -1;
}

}  // namespace

std::vector<StageId> stage_list(const AppState& state) {
    return state.trace ? state.trace->stage_ids(state.head) : std::vector<StageId>{};
}

int stage_count(const AppState& state) {
    return int(stage_list(state).size());
}

int stage_index(const AppState& state) {
    return std::max(0, index_of(stage_list(state), state.cursor.name));
}

StageId current_stage_id(const AppState& state) {
    const std::vector<StageId> list = stage_list(state);
    if (list.empty()) return StageId{};
    return list[std::size_t(std::max(0, index_of(list, state.cursor.name)))];
}

void set_stage_index(AppState& state, int index) {
    const std::vector<StageId> list = stage_list(state);
    if (list.empty()) return;
    state.cursor = list[std::size_t(clamp_int(index, 0, int(list.size()) - 1))];
}

void detach_scene_model(AppState& state) {
    if (state.scene_model.empty()) return;
    state.scene_model.clear();
    state.scene_title = "Single layer (random weights)";
    state.scene_note.clear();
    state.scene_path.clear();  // Ctrl+S must not overwrite the model's scene with a single layer
    state.scene_config = state.config;
}

std::string current_stage_name(const AppState& state) {
    return current_stage_id(state).name;
}

const Stage* current_stage(const AppState& state) {
    if (!state.trace) return nullptr;
    const StageId id = current_stage_id(state);
    return id.name.empty() ? nullptr : state.trace->get(id);
}

void step_stage(AppState& state, int delta) {
    if (stage_count(state) == 0) return;
    set_stage_index(state, stage_index(state) + delta);
}

bool select_stage(AppState& state, const std::string& name) {
    const std::vector<StageId> list = stage_list(state);
    const int i = index_of(list, name);
    if (i < 0) return false;
    state.cursor = list[std::size_t(i)];
    return true;
}

bool current_stage_is_per_head(const AppState& state) {
    const Stage* s = current_stage(state);
    return s != nullptr && s->head >= 0;
}

void accept_trace(AppState& state, std::shared_ptr<const Trace> trace, double compute_ms) {
    const std::string previous = state.cursor.name;
    const int previous_index = state.trace ? index_of(stage_list(state), previous) : -1;
    state.trace = std::move(trace);
    ++state.trace_generation;
    state.compute_ms = compute_ms;
    if (!state.trace) return;
    state.head = clamp_int(state.head, 0, std::max(0, state.trace->heads - 1));
    // Stay on the same stage across recomputations (e.g. "weights" while dragging T); stages that
    // disappeared (switching softmax -> linear removes "scaled") fall back to the same position.
    if (previous.empty() || !select_stage(state, previous))
        set_stage_index(state, std::max(0, previous_index));
    state.cursor = current_stage_id(state);  // this trace's layer and the (clamped) head
    const int n = state.trace->n;
    if (state.pinned_row >= n) state.pinned_row = -1;
    if (state.hover_row >= n) state.hover_row = -1;
}

const char* family_name(AttnFamily f) {
    return f == AttnFamily::Encoder ? "encoder" : f == AttnFamily::Decoder ? "decoder" : "cross";
}

const char* language_code(TextLanguage l) {
    return l == TextLanguage::Chinese ? "zh" : "en";
}

bool parse_language_code(const std::string& code, TextLanguage* out) {
    if (code.rfind("zh", 0) == 0) return *out = TextLanguage::Chinese, true;
    if (code.rfind("en", 0) == 0) return *out = TextLanguage::English, true;
    return false;
}

const char* attention_stage(const AppState& state) {
    return state.model.active && state.model.seq2seq && state.model.family == AttnFamily::Cross
               ? "cross_weights"
               : "weights";
}

std::string stage_phase(const std::string& name) {
    return stage_phase_of(name);
}

std::uint64_t matrix_checksum(const Mat& M) {
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](const void* p, std::size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (std::size_t i = 0; i < n; ++i) {
            h ^= b[i];
            h *= 1099511628211ull;
        }
    };
    const std::int64_t shape[2] = {M.rows(), M.cols()};
    mix(shape, sizeof shape);
    mix(M.data(), std::size_t(M.size()) * sizeof(float));
    return h;
}

std::string state_json_line(const AppState& state) {
    return state_json(state).dump();
}

nlohmann::json state_json(const AppState& state) {
    nlohmann::json j;
    j["stage"] = current_stage_name(state);
    j["stage_index"] = stage_index(state);
    {
        const StageId id = current_stage_id(state);
        j["stage_id"] = {{"layer", id.layer < 0 ? nlohmann::json() : nlohmann::json(id.layer)},
                         {"name", id.name},
                         {"head", id.head < 0 ? nlohmann::json() : nlohmann::json(id.head)}};
    }
    j["stages"] = stage_count(state);
    j["head"] = state.head;
    j["temperature"] = state.config.temperature;
    j["generation"] = state.trace_generation;
    j["updating"] = state.updating;
    j["view"] = state.view == MainView::Stage           ? "stage"
                : state.view == MainView::HeadsGrid     ? "heads"
                : state.view == MainView::Model         ? "model"
                : state.view == MainView::Lines         ? "lines"
                : state.view == MainView::Interventions ? "interventions"
                                                        : "compare";
    j["model_active"] = state.model.active;
    j["model_name"] = state.model.name;
    j["model_layer"] = state.model.layer;
    j["model_loading"] = state.model.loading;
    j["model_text"] = state.model.text;
    j["model_n"] = state.model.n;
    j["model_runs"] = state.model.run_generation;
    j["model_top_token"] = state.model.top.empty() ? std::string() : state.model.top[0].text;
    // The next-token panel's rows: probability at T, the model's own, the chance sampling draws it.
    nlohmann::json next = nlohmann::json::array();
    for (const ModelUi::Candidate& c : state.model.top)
        next.push_back(
            {{"id", c.id}, {"text", c.text}, {"p", c.p}, {"p_model", c.p_model}, {"p_sample", c.p_sample}});
    j["next_tokens"] = next;
    j["sample_kept"] = state.model.sample_kept;
    j["sample_cut"] = state.model.sample_cut;
    j["top_k"] = state.model.top_k;
    j["top_p"] = state.model.top_p;
    j["model_last_appended"] = state.model.last_appended;
    j["model_seq2seq"] = state.model.seq2seq;
    j["model_target"] = state.model.target;
    j["model_family"] = family_name(state.model.family);
    j["model_n_source"] = state.model.n_source;
    j["model_encoder"] = state.model.encoder;
    j["model_text_b"] = state.model.text_b;
    j["mask_positions"] = state.model.mask_positions;
    j["mask_choice"] = state.model.mask_choice;
    j["export_path"] = state.last_export_path;
    j["status"] = state.status;
    j["status_is_error"] = state.status_is_error;
    j["issues"] = int(state.issues.size());
    j["text_input_active"] = state.text_input_active;
    j["scene_path"] = state.scene_path;
    j["model_dir"] = state.model.dir;
    j["mask"] = to_string(state.config.mask);
    j["custom_mask"] = {state.config.custom_mask.rows, state.config.custom_mask.cols};
    j["recent_files"] = state.recent_files;
    j["chooser_open"] = state.chooser_open;
    j["chooser_backend"] = state.chooser_backend;
    j["scene_title"] = state.scene_title;
    j["scene_model"] = state.scene_model;
    j["tour"] = tour_state_json(state);
    // The note shown under the formula (a model scene's note stays while its model is open).
    j["note_shown"] =
        !state.scene_note.empty() && (!state.model.active || state.model.dir == state.scene_model);
    j["text"] = state.config.text;
    j["source_text"] = state.config.source_text;
    j["pinned_row"] = state.pinned_row;
    j["mouse"] = {state.mouse_x, state.mouse_y};
    j["window_w"] = state.window_w;
    j["window_h"] = state.window_h;
    j["ui_scale"] = state.ui_scale;
    j["language"] = language_code(state.language);
    j["labs"] = state.open_labs;
    j["cross_attention_box"] = state.views ? state.views->controls.cross : false;
    // Values typed into a control and refused (key -> the core's message), shown under the control.
    j["refused"] = state.views ? state.views->controls.refused : std::map<std::string, std::string>{};
    j["scale_mode"] = scale_mode_name(view_scale().mode);
    nlohmann::json layout = nlohmann::json::array();
    for (const LayoutBox& b : layout_records())
        layout.push_back({{"id", b.id},
                          {"box", {b.x, b.y, b.w, b.h}},
                          {"clip", {b.clip_x0, b.clip_x1}},
                          {"group", b.group}});
    j["layout"] = layout;
    std::string checksum;
    if (state.trace) {
        const int head = std::max(0, std::min(state.head, state.trace->heads - 1));
        // The line is built every frame; hashing a 4096 x 4096 weight matrix each time would cost
        // more than the frame itself, so the checksum is remembered per (trace, head).
        static const Trace* cached_trace = nullptr;
        static std::uint64_t cached_generation = ~0ull;
        static int cached_head = -1;
        static std::string cached_checksum;
        if (cached_trace != state.trace.get() || cached_generation != state.trace_generation ||
            cached_head != head) {
            cached_checksum.clear();
            if (const Stage* w = state.trace->get("weights", head)) {
                char buf[32];
                std::snprintf(buf, sizeof buf, "%016llx",
                              static_cast<unsigned long long>(matrix_checksum(w->matrix())));
                cached_checksum = buf;
            }
            cached_trace = state.trace.get();
            cached_generation = state.trace_generation;
            cached_head = head;
        }
        checksum = cached_checksum;
        j["n"] = state.trace->n;
    }
    // The stage on screen: its axes' names and (token axes, up to 64) labels, e.g. an encoder–decoder's
    // cross-attention: rows "target tokens", columns "source tokens".
    if (const Stage* st = current_stage(state)) {
        auto axis = [](const Axis& a) {
            nlohmann::json labels = nlohmann::json::array();
            if (a.tokens)
                for (int i = 0; i < std::min(a.size, 64); ++i) labels.push_back(a.label(i));
            return nlohmann::json{{"name", a.name}, {"size", a.size}, {"labels", labels}};
        };
        j["stage_rows"] = axis(st->rows);
        j["explanation_title"] = st->title_for(state.language);  // as the Explanation panel shows it
        j["stage_cols"] = axis(st->cols);
        // The pinned row's values (up to 64), as the bar chart under the heatmap draws them.
        if (state.pinned_row >= 0 && state.pinned_row < st->n_rows()) {
            const RowVec r = st->row(state.pinned_row);
            std::vector<float> values(r.data(), r.data() + std::min<Eigen::Index>(r.size(), 64));
            j["pinned_values"] = values;
        }
    }
    j["weights_checksum"] = checksum;
    if (!state.training_log.is_null()) j["training"] = state.training_log;
    if (state.model.active) {
        const InterventionsUi& iv = state.interventions;
        auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
        j["interventions"] = {{"ablated", iv.ablated},
                              {"mode", iv.mean_mode ? "mean" : "zero"},
                              {"for_text", iv.for_text},
                              {"loss", num(iv.loss)},
                              {"base_loss", num(iv.base_loss)},
                              {"repeat_loss", num(iv.repeat_loss)},
                              {"base_repeat_loss", num(iv.base_repeat_loss)},
                              {"repeat_count", iv.repeat_count},
                              {"importance_ready", !iv.importance.empty()},
                              {"importance_repeat_ready", !iv.importance_repeat.empty()},
                              {"importance_ms", iv.importance_ms},
                              {"importance_shown_ms", iv.importance_shown_ms},
                              {"patching", iv.patching},
                              {"patch_ready", !iv.patched.empty()},
                              {"patch_for", iv.patch_for},
                              {"error", iv.error},
                              {"patch_error", iv.patch_error},
                              {"busy", iv.busy},
                              {"target", iv.target_text},
                              {"parts", int(iv.parts.size())},
                              {"lens_rows", int(iv.lens.size())}};
    }
    nlohmann::json rects = nlohmann::json::object();
    for (const auto& [name, r] : state.widget_rects) rects[name] = {r.x, r.y, r.w, r.h};
    j["widgets"] = rects;
    nlohmann::json labels = nlohmann::json::object();
    for (const auto& [name, l] : state.label_stats)
        labels[name] = {{"shown", l.shown},
                        {"cut", l.cut},
                        {"stride", l.stride},
                        {"upright", l.upright},
                        {"upright_small", l.upright_small}};
    j["labels"] = labels;
    j["presentation"] = state.presentation;
    j["show_controls"] = state.show_controls;
    j["show_explanation"] = state.show_explanation;
    // The current layer's head labels (core/head_types.hpp), as the heads grid shows them.
    nlohmann::json heads = nlohmann::json::array();
    if (state.trace)
        for (const HeadLabel& l : head_labels_of(state, state.trace))
            heads.push_back(
                {{"type", head_type_name(l.type)}, {"short", head_type_short(l.type)}, {"score", l.score}});
    j["head_labels"] = heads;
    return j;
}

}  // namespace attnviz::app
