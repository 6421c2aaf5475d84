// app/model_session: loading reports its phases and hands back either a model or one error line;
// runs are latest-wins and label their tokens; a text the tokenizer cannot use is one error.
#include "app/model_session.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "app/scene_landing.hpp"
#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz::app {
namespace {

// A tiny random GPT-2-shaped model (2 layers × 2 heads, d_model 8) and a 6-token byte-level tokenizer.
LoadedModel tiny_loaded() {
    auto m = std::make_shared<ModelWeights>();
    std::uint64_t seed = 3;
    auto mat = [&](int rows, int cols, double sd) {
        auto buf = std::make_shared<Mat>(random_normal(rows, cols, sd, seed++));
        m->storage.push_back(buf);
        return WeightRef{buf->data(), rows, cols, cols};
    };
    auto vec = [&](int n, double mean) {
        auto buf = std::make_shared<Mat>(random_normal(1, n, 0.1, seed++));
        buf->array() += float(mean);
        m->storage.push_back(buf);
        return static_cast<const float*>(buf->data());
    };
    ModelSpec& s = m->spec;
    s.architecture = "gpt2";
    s.n_layer = 2;
    s.n_head = s.n_kv_head = 2;
    s.d_head = 4;
    s.d_model = 8;
    s.d_ff = 16;
    s.vocab_size = 6;
    s.max_positions = 32;
    m->wte = mat(6, 8, 1.0);
    m->wpe = mat(32, 8, 0.5);
    m->lm_head = m->wte;
    m->ln_f = Norm{vec(8, 1), vec(8, 0), 8};
    auto lin = [&](int in, int out) {
        Linear L;
        L.out_in = false;
        L.weight = mat(in, out, 0.3);
        L.bias = vec(out, 0);
        return L;
    };
    for (int l = 0; l < 2; ++l) {
        BlockWeights w;
        w.ln_1 = Norm{vec(8, 1), vec(8, 0), 8};
        w.ln_2 = Norm{vec(8, 1), vec(8, 0), 8};
        w.q = lin(8, 8);
        w.k = lin(8, 8);
        w.v = lin(8, 8);
        w.o = lin(8, 8);
        w.fc = lin(8, 16);
        w.proj = lin(16, 8);
        m->blocks.push_back(w);
    }
    validate_model(*m);
    LoadedModel lm;
    lm.weights = m;
    lm.tokenizer = Tokenizer::from_gpt2(R"({"a": 0, "b": 1, "c": 2, "Ġ": 3, "ab": 4, "Ġc": 5})",
                                        "#version: 0.2\na b\nĠ c\n");
    lm.dir = "tiny";
    lm.name = "tiny";
    return lm;
}

TEST(ModelSession, RunLabelsTokensAndKeepsEveryLayersHeadsWhenSmall) {
    const LoadedModel m = tiny_loaded();
    const ModelRun r = run_model_on_text(m, "ab c", 1, 1, nullptr);
    ASSERT_EQ(r.ids.size(), 2u);
    EXPECT_EQ((*r.tokens)[0], "ab");
    EXPECT_EQ((*r.tokens)[1], " c");
    EXPECT_EQ(r.kept_heads, std::vector<bool>({true, true}));
    EXPECT_TRUE(r.note.empty());
    EXPECT_EQ(r.forward->layers[0].heads.size(), 2u);
    EXPECT_EQ(r.forward->logits.rows(), 1);  // only the last position: the next token
    EXPECT_THROW(run_model_on_text(m, "", 0, 1, nullptr), Error);
}

TEST(ModelSession, OverTheBudgetOnlyTheViewedLayersHeadsAreKeptAndTheNoteSaysSo) {
    const LoadedModel m = tiny_loaded();
    const ModelRun r = run_model_on_text(m, "ab c ab c", 1, 1, nullptr, /*keep_all_bytes=*/16);
    EXPECT_EQ(r.kept_heads, std::vector<bool>({false, true}));
    EXPECT_TRUE(r.forward->layers[0].heads.empty());
    EXPECT_EQ(r.forward->layers[1].heads.size(), 2u);
    EXPECT_EQ(r.forward->layers[0].resid_post.rows(),
              Eigen::Index(r.ids.size()));  // every layer's [n, d] stages stay
    EXPECT_NE(r.note.find("heads of layer 1 kept"), std::string::npos) << r.note;
    EXPECT_NE(r.note.find("summarised"), std::string::npos) << r.note;
}

TEST(ModelSession, AFailedLoadIsOneLineAndProgressIsReported) {
    std::vector<std::string> phases;
    ModelSession session(1, [&](const std::string& dir, const ProgressFn& progress) -> LoadedModel {
        progress("reading config", 0.1f);
        phases.push_back("reading config");
        if (dir == "bad") throw Error("bad/model.safetensors: truncated\nsecond line");
        return tiny_loaded();
    });
    session.load("bad");
    ASSERT_TRUE(session.wait_idle(30));
    auto r = session.poll_load();
    ASSERT_TRUE(r.has_value());
    EXPECT_FALSE(r->model.has_value());
    EXPECT_EQ(r->error.find('\n'), std::string::npos) << r->error;
    EXPECT_NE(r->error.find("truncated"), std::string::npos);
    EXPECT_FALSE(session.progress().loading);
    session.load("good");
    ASSERT_TRUE(session.wait_idle(30));
    r = session.poll_load();
    ASSERT_TRUE(r && r->model);
    EXPECT_EQ(phases.size(), 2u);
}

// A load that waits for the test's word, so the test can cancel or replace it while it runs.
struct GatedLoads {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<std::string> started, finished;
    bool open = false;
    ModelSession::LoadFn fn() {
        return [this](const std::string& dir, const ProgressFn& progress) -> LoadedModel {
            progress("reading config", 0.1f);
            {
                std::unique_lock<std::mutex> lock(mutex);
                started.push_back(dir);
                cv.notify_all();
                cv.wait(lock, [&] { return open; });
            }
            progress("mapping weights", 0.2f);  // a load no longer wanted stops here
            std::lock_guard<std::mutex> lock(mutex);
            finished.push_back(dir);
            LoadedModel m = tiny_loaded();
            m.name = dir;
            return m;
        };
    }
    void wait_started(std::size_t count) {
        std::unique_lock<std::mutex> lock(mutex);
        ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return started.size() >= count; }));
    }
    void release() {
        std::lock_guard<std::mutex> lock(mutex);
        open = true;
        cv.notify_all();
    }
};

TEST(ModelSession, ACancelledLoadNeverArrives) {
    GatedLoads gate;
    ModelSession session(1, gate.fn());
    session.load("first");
    gate.wait_started(1);
    EXPECT_TRUE(session.progress().loading);
    session.cancel_load();  // a single-layer scene was opened meanwhile
    EXPECT_FALSE(session.progress().loading);
    gate.release();
    ASSERT_TRUE(session.wait_idle(30));
    EXPECT_FALSE(session.poll_load().has_value());
    EXPECT_FALSE(session.progress().loading);
    EXPECT_TRUE(gate.finished.empty()) << "the cancelled load ran on past its next phase";
    session.load("again");  // and a later load still works
    ASSERT_TRUE(session.wait_idle(30));
    auto r = session.poll_load();
    ASSERT_TRUE(r && r->model);
    EXPECT_EQ(r->model->name, "again");
}

TEST(ModelSession, ALoadAskedForDuringAnotherIsTheOneThatArrives) {
    GatedLoads gate;
    ModelSession session(1, gate.fn());
    session.load("first");
    gate.wait_started(1);
    session.load("second");
    EXPECT_TRUE(session.progress().loading);
    gate.release();
    ASSERT_TRUE(session.wait_idle(30));
    auto r = session.poll_load();
    ASSERT_TRUE(r && r->model);
    EXPECT_EQ(r->model->name, "second");
    EXPECT_EQ(gate.finished, std::vector<std::string>{"second"});  // "first" stopped at its next phase
    EXPECT_FALSE(session.poll_load().has_value());
    EXPECT_FALSE(session.progress().loading);
}

TEST(ModelSession, LatestRunWins) {
    ModelSession session(1);
    const LoadedModel m = tiny_loaded();
    session.run(m, "a", 0);
    session.run(m, "ab", 0);
    const std::uint64_t last = session.run(m, "ab c", 0);
    ASSERT_TRUE(session.wait_idle(30));
    auto r = session.poll_run();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->request, last);
    ASSERT_TRUE(r->run.has_value()) << r->error;
    EXPECT_EQ(r->run->ids.size(), 2u);
    EXPECT_FALSE(session.poll_run().has_value());
    session.run(m, "", 0);
    ASSERT_TRUE(session.wait_idle(30));
    r = session.poll_run();
    ASSERT_TRUE(r.has_value());
    EXPECT_FALSE(r->run.has_value());
    EXPECT_NE(r->error.find("no tokens"), std::string::npos) << r->error;
}

// Drives frame() until the model is open and its first run is on screen (or 20 s pass).
bool frame_until_shown(ModelSession& session, AppState& state) {
    for (int i = 0; i < 2000; ++i) {
        session.frame(state);
        if (state.model.active && state.model.run_generation > 0 && state.trace) return true;
        session.wait_idle(0.01);
    }
    return false;
}

ModelSession::LoadFn tiny_loader() {
    return [](const std::string& dir, const ProgressFn&) {
        LoadedModel m = tiny_loaded();
        m.dir = dir;
        return m;
    };
}

// Defect 3 of issue 24: a scene that opens a model lands on the layer, head, stage and pinned row it
// names once the model has loaded (not layer 0 head 0), and its note stays shown over the model.
TEST(ModelSession, AModelSceneLandsWhereItSaysAndKeepsItsNote) {
    AppState state;
    Scene scene;
    scene.title = "Induction";
    scene.note = "layer 1 = induction stripe";
    scene.model = "tiny";
    scene.model_text = "ab c ab c";
    scene.focus.layer = 1;
    scene.focus.head = 1;
    scene.focus.pin = 2;
    scene.focus.stage = "scores";
    load_scene_into(state, scene, "induction.json");
    ModelSession session(1, tiny_loader());
    ASSERT_TRUE(frame_until_shown(session, state)) << state.status;
    EXPECT_EQ(state.model.layer, 1);
    EXPECT_EQ(state.trace->layer, 1);
    EXPECT_EQ(state.head, 1);
    EXPECT_EQ(current_stage_name(state), "scores");
    EXPECT_EQ(state.pinned_row, 2);
    EXPECT_EQ(state_json(state)["note_shown"], true);
    EXPECT_EQ(state.scene_title, "Induction");
}

// Defect 4 of issue 24: Back to the single layer from a scene's model leaves the scene too: its title
// and note described the trained model, not the random weights now on screen (and Ctrl+S must not
// overwrite the model's scene file with a single layer).
TEST(ModelSession, BackToTheSingleLayerDropsTheModelScenesTitle) {
    AppState state;
    Scene scene;
    scene.title = "Induction heads in a model trained here";
    scene.note = "layer 1 = induction stripe";
    scene.model = "tiny";
    scene.model_text = "ab c ab c";
    load_scene_into(state, scene, "induction.json");
    ModelSession session(1, tiny_loader());
    ASSERT_TRUE(frame_until_shown(session, state)) << state.status;
    state.model.close_request = true;
    session.frame(state);
    EXPECT_FALSE(state.model.active);
    EXPECT_EQ(state.scene_title, "Single layer (random weights)");
    EXPECT_EQ(state.scene_note, "");
    EXPECT_EQ(state.scene_path, "");
    EXPECT_EQ(state_json(state)["note_shown"], false);
    // A scene whose model cannot be opened leaves its title too (the single layer stays on screen).
    AppState gone;
    load_scene_into(gone, scene, "induction.json");
    ModelSession failing(1, [](const std::string& dir, const ProgressFn&) -> LoadedModel {
        throw Error(dir + "/config.json: cannot read");
    });
    for (int i = 0; i < 2000 && gone.scene_model == "tiny"; ++i) {
        failing.frame(gone);
        failing.wait_idle(0.01);
    }
    EXPECT_EQ(gone.scene_title, "Single layer (random weights)");
    EXPECT_TRUE(gone.status_is_error);
    // A single-layer scene's title is left alone by the same close.
    AppState plain;
    load_scene_into(plain, default_scene(), "");
    plain.model.close_request = true;
    session.frame(plain);
    EXPECT_EQ(plain.scene_title, "A fluffy blue creature");
}

}  // namespace
}  // namespace attnviz::app

#include "common/test_files.hpp"
#include "core/story.hpp"
#include "io/checkpoint.hpp"
#include "io/files.hpp"

namespace attnviz::app {
namespace {

// A story model folder brings its story_grammar.json with it; a broken one is one line and the model
// still opens (issue 24).
TEST(ModelSession, AStoryModelsGrammarIsReadAndABrokenOneStillOpensTheModel) {
    test::TempDir dir("story-folder");
    const Task task = story_task(16);
    TrainConfig c;
    c.n_layer = 1;
    c.n_head = 1;
    c.d_model = 16;
    c.context = 16;
    c.vocab_size = task.vocab_size;
    save_train_checkpoint(dir.path, init_params(c, 1));
    for (const auto& [name, content] : checkpoint_task_files(task, c.vocab_size))
        write_file_atomic(dir.path + "/" + name, content);
    const auto quiet = [](const char*, float) {};
    LoadedModel m = load_model_folder(dir.path, quiet);
    ASSERT_TRUE(m.grammar);
    EXPECT_TRUE(m.grammar_problem.empty()) << m.grammar_problem;
    EXPECT_EQ(m.grammar->adjectives, story_grammar().words.adjectives);
    EXPECT_EQ(m.tokenizer->encode("a fluffy blue creature").size(), 4u);

    write_file_atomic(dir.path + "/story_grammar.json", "{\"adjectives\": [");
    m = load_model_folder(dir.path, quiet);
    EXPECT_FALSE(m.grammar);
    ASSERT_TRUE(m.weights && m.tokenizer);
    EXPECT_NE(m.grammar_problem.find("story_grammar.json"), std::string::npos) << m.grammar_problem;
    EXPECT_EQ(m.grammar_problem.find('\n'), std::string::npos) << m.grammar_problem;
}

}  // namespace
}  // namespace attnviz::app
