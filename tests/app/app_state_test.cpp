// AppState helpers: the step-through cursor, keeping the stage across recomputations, phases of the
// pipeline strip, the weights checksum and the state-log line the GUI tests read; plus settings.
#include "app/app_state.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "app/settings.hpp"

namespace attnviz::app {
namespace {

std::shared_ptr<const Trace> trace_for(const Config& cfg) {
    return std::make_shared<const Trace>(compute_trace(cfg));
}

TEST(AppState, NoTraceMeansNoStage) {
    AppState state;
    EXPECT_EQ(current_stage_name(state), "");
    EXPECT_EQ(current_stage(state), nullptr);
    EXPECT_EQ(stage_count(state), 0);
    step_stage(state, 3);  // must not crash or move
    EXPECT_EQ(stage_index(state), 0);
    EXPECT_EQ(current_stage_id(state), StageId{});
    EXPECT_FALSE(select_stage(state, "weights"));
}

TEST(AppState, StepsAndClampsTheCursor) {
    AppState state;
    accept_trace(state, trace_for(Config{}), 1.0);
    const int count = stage_count(state);
    ASSERT_GT(count, 5);
    EXPECT_EQ(current_stage_name(state), state.trace->stage_names().front());
    step_stage(state, 1);
    EXPECT_EQ(stage_index(state), 1);
    EXPECT_EQ(state.cursor.name, state.trace->stage_names()[1]);
    step_stage(state, -10);
    EXPECT_EQ(stage_index(state), 0);
    step_stage(state, 1000);
    EXPECT_EQ(stage_index(state), count - 1);
    EXPECT_EQ(current_stage_name(state), state.trace->stage_names().back());
}

TEST(AppState, SelectsStagesAndHeads) {
    AppState state;
    accept_trace(state, trace_for(Config{}), 1.0);
    ASSERT_TRUE(select_stage(state, "weights"));
    EXPECT_EQ(current_stage_name(state), "weights");
    EXPECT_TRUE(current_stage_is_per_head(state));
    state.head = 2;
    const Stage* s = current_stage(state);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->name, "weights");
    EXPECT_EQ(s->head, 2);
    ASSERT_TRUE(select_stage(state, "concat"));
    EXPECT_FALSE(current_stage_is_per_head(state));
    EXPECT_FALSE(select_stage(state, "no_such_stage"));
    EXPECT_EQ(current_stage_name(state), "concat");
}

TEST(AppState, NewTraceKeepsTheStageAndClampsTheHead) {
    AppState state;
    accept_trace(state, trace_for(Config{}), 1.0);
    ASSERT_TRUE(select_stage(state, "weights"));
    state.head = 3;
    state.pinned_row = 7;
    const auto gen = state.trace_generation;

    // Fewer heads, a shorter text and a causal mask (which adds no stage before "weights" here but
    // may shift indices): the cursor follows the name, the head and pinned row are clamped.
    Config c;
    c.heads = 2;
    c.text = "one two three";
    c.mask = MaskKind::Causal;
    accept_trace(state, trace_for(c), 2.5);
    EXPECT_EQ(current_stage_name(state), "weights");
    EXPECT_EQ(state.head, 1);
    EXPECT_EQ(state.pinned_row, -1);
    EXPECT_EQ(state.trace_generation, gen + 1);
    EXPECT_DOUBLE_EQ(state.compute_ms, 2.5);

    // Linear attention has no "scaled" stage: the cursor stays at the same position in the list.
    ASSERT_TRUE(select_stage(state, "scaled"));
    const int scaled_at = stage_index(state);
    ASSERT_GT(scaled_at, 0);
    Config lin;
    lin.attention = AttentionKind::Linear;
    accept_trace(state, trace_for(lin), 1.0);
    EXPECT_EQ(state.trace->find("scaled"), -1);
    EXPECT_EQ(stage_index(state), std::min(scaled_at, stage_count(state) - 1));
    EXPECT_EQ(current_stage_name(state), state.trace->stage_names()[std::size_t(stage_index(state))]);
    EXPECT_NE(current_stage(state), nullptr);
}

// The cursor walks StageIds: {layer, name, head}, the head only on per-head stages, the layer that
// of the trace on screen (-1 for the single layer, the model's layer for a model's trace).
TEST(AppState, TheCursorIsAStageId) {
    AppState state;
    accept_trace(state, trace_for(Config{}), 1.0);
    state.head = 2;
    ASSERT_TRUE(select_stage(state, "weights"));
    EXPECT_EQ(current_stage_id(state), (StageId{-1, "weights", 2}));
    const std::vector<StageId> list = stage_list(state);
    ASSERT_EQ(int(list.size()), stage_count(state));
    for (const StageId& id : list) {
        const Stage* s = state.trace->get(id);
        ASSERT_NE(s, nullptr) << id.name;
        EXPECT_EQ(s->name, id.name);
        EXPECT_EQ(s->head, id.head) << id.name;  // per-head stages at head 2, the others -1
    }
    step_stage(state, 1);
    EXPECT_EQ(current_stage_id(state).name, "head_output");
    EXPECT_EQ(current_stage(state), state.trace->get(StageId{-1, "head_output", 2}));
    ASSERT_TRUE(select_stage(state, "concat"));
    EXPECT_EQ(current_stage_id(state), (StageId{-1, "concat", -1}));

    // A trace of layer 3 (as a model's layer is): the same stage, at layer 3; a StageId of another
    // layer names nothing in it.
    auto layer3 = std::make_shared<Trace>(compute_trace(Config{}));
    layer3->layer = 3;
    accept_trace(state, layer3, 1.0);
    EXPECT_EQ(current_stage_id(state), (StageId{3, "concat", -1}));
    EXPECT_NE(current_stage(state), nullptr);
    EXPECT_EQ(layer3->get(StageId{-1, "concat", -1}), nullptr);
}

TEST(AppState, PhasesFollowTheComputation) {
    EXPECT_EQ(stage_phase("one_hot"), "embed");
    EXPECT_EQ(stage_phase("input"), "embed");
    EXPECT_EQ(stage_phase("W_Q"), "project");
    EXPECT_EQ(stage_phase("K"), "project");
    EXPECT_EQ(stage_phase("scores"), "score");
    EXPECT_EQ(stage_phase("masked"), "score");
    EXPECT_EQ(stage_phase("weights"), "normalise");
    EXPECT_EQ(stage_phase("head_output"), "combine");
    EXPECT_EQ(stage_phase("output"), "combine");
    // Phases never go backwards along a real trace (the strip draws one group per phase).
    const std::vector<std::string> order = {"embed", "project", "score", "normalise", "combine"};
    for (AttentionKind kind : {AttentionKind::Softmax, AttentionKind::Linear}) {
        Config c;
        c.attention = kind;
        c.positional = Positional::Rope;
        c.layernorm = LayerNormMode::Post;
        const Trace t = compute_trace(c);
        int last = 0;
        for (const std::string& name : t.stage_names()) {
            const int p = int(std::find(order.begin(), order.end(), stage_phase(name)) - order.begin());
            EXPECT_GE(p, last) << name << " goes back to phase " << stage_phase(name);
            last = std::max(last, p);
        }
    }
}

TEST(AppState, ChecksumSeesEveryValue) {
    Mat A = Mat::Zero(3, 4);  // 3 x 4
    const auto h0 = matrix_checksum(A);
    A(2, 3) = 1e-7f;
    EXPECT_NE(matrix_checksum(A), h0);
    Mat B = Mat::Zero(4, 3);  // same values, other shape
    EXPECT_NE(matrix_checksum(B), h0);
    EXPECT_EQ(matrix_checksum(A), matrix_checksum(Mat(A)));
}

TEST(AppState, StateLineDescribesTheScreen) {
    AppState state;
    auto j = nlohmann::json::parse(state_json_line(state));
    EXPECT_EQ(j["stage"], "");
    EXPECT_EQ(j["weights_checksum"], "");

    accept_trace(state, trace_for(Config{}), 1.0);
    ASSERT_TRUE(select_stage(state, "weights"));
    state.widget_rects["temperature"] = {10, 20, 200, 24};
    state.last_export_path = "x/weights.png";
    j = nlohmann::json::parse(state_json_line(state));
    EXPECT_EQ(j["stage"], "weights");
    EXPECT_EQ(j["head"], 0);
    EXPECT_DOUBLE_EQ(j["temperature"].get<double>(), 1.0);
    EXPECT_EQ(j["export_path"], "x/weights.png");
    EXPECT_EQ(j["widgets"]["temperature"][2], 200);
    const std::string sum1 = j["weights_checksum"];
    EXPECT_EQ(sum1.size(), 16u);

    // Another temperature gives other weights, hence another checksum.
    Config hot;
    hot.temperature = 10.0;
    state.config = hot;
    accept_trace(state, trace_for(hot), 1.0);
    j = nlohmann::json::parse(state_json_line(state));
    EXPECT_NE(j["weights_checksum"], sum1);
    EXPECT_DOUBLE_EQ(j["temperature"].get<double>(), 10.0);
}

TEST(Settings, RoundTripAndClamp) {
    AppState a;
    a.ui_scale = 1.5f;
    a.compute_threads = 2;
    a.play_seconds = 0.7f;
    a.export_dir = "/tmp/figs";
    a.export_scale = 4;
    AppState b;
    ASSERT_TRUE(apply_settings_json(settings_json(a), b));
    EXPECT_FLOAT_EQ(b.ui_scale, 1.5f);
    EXPECT_EQ(b.compute_threads, 2);
    EXPECT_FLOAT_EQ(b.play_seconds, 0.7f);
    EXPECT_EQ(b.export_dir, "/tmp/figs");
    EXPECT_EQ(b.export_scale, 4);

    AppState c;
    EXPECT_TRUE(
        apply_settings_json(R"({"ui_scale": 99, "compute_threads": -3, "export_dir": 5, "x": 1})", c));
    EXPECT_FLOAT_EQ(c.ui_scale, 3.0f);
    EXPECT_EQ(c.compute_threads, 1);
    EXPECT_EQ(c.export_dir, AppState{}.export_dir);

    AppState d;
    EXPECT_FALSE(apply_settings_json("{not json", d));
    EXPECT_FALSE(apply_settings_json("[1, 2]", d));
    EXPECT_FLOAT_EQ(d.ui_scale, 1.0f);
}

TEST(Settings, LanguageIsRememberedAndReported) {
    AppState a;
    a.language = TextLanguage::Chinese;
    EXPECT_EQ(state_json(a)["language"], "zh");
    AppState b;
    ASSERT_TRUE(apply_settings_json(settings_json(a), b));
    EXPECT_EQ(b.language, TextLanguage::Chinese);
    EXPECT_EQ(state_json(b)["language"], "zh");
    // An English settings file overrides a Chinese locale's default; an unknown code keeps the default.
    ASSERT_TRUE(apply_settings_json(R"({"language": "en"})", b));
    EXPECT_EQ(b.language, TextLanguage::English);
    EXPECT_EQ(state_json(b)["language"], "en");
    AppState c;
    c.language = TextLanguage::Chinese;
    ASSERT_TRUE(apply_settings_json(R"({"language": "klingon"})", c));
    EXPECT_EQ(c.language, TextLanguage::Chinese);
    ASSERT_TRUE(apply_settings_json(R"({"language": 5})", c));
    EXPECT_EQ(c.language, TextLanguage::Chinese);
    ASSERT_TRUE(apply_settings_json(R"({"language": "zh_TW"})", b));
    EXPECT_EQ(b.language, TextLanguage::Chinese);
}

}  // namespace
}  // namespace attnviz::app
