// A real model in the GUI: loads a Hugging Face folder (weights + tokenizer) and runs it on the text,
// both on one background thread so a frame never blocks. Latest wins, as in ComputeWorker: a newer run
// request replaces one not yet started and cancels the one running (ModelRunOptions::cancel). A load
// that fails leaves the current model alone: the caller keeps what it has and shows the error line.
// On the GUI thread, frame() does the rest once per frame: the panels' requests in AppState::model
// (open, close, cancel a load, append a token), entering and leaving the model, the layer on screen,
// the next-token ranking. No OpenGL, no ImGui.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "app/app_state.hpp"
#include "core/model.hpp"
#include "core/story.hpp"
#include "core/trace.hpp"
#include "io/tokenizer.hpp"

namespace attnviz::app {

/// The app's memory limit (3.0 GiB): weights + kept stages of a run must fit in it.
inline constexpr std::uint64_t kModelMemoryLimit = 3ull << 30;
/// Every layer's per-head stages are kept while they need at most this much; above it only the
/// viewed layer's heads are kept and the other layers are summarised.
inline constexpr std::uint64_t kKeepAllHeadsBytes = 512ull << 20;

struct LoadedModel {
    std::shared_ptr<const ModelWeights> weights;
    std::shared_ptr<const Tokenizer> tokenizer;
    std::string dir;
    std::string name;  // e.g. "gpt2 · tiny-gpt2 (2 layers × 2 heads)"
    /// The folder's story_grammar.json (a story model: which words are nouns, adjectives, names,
    /// pronouns), or null; grammar_problem: the one line a broken one gave (the model still opens).
    std::shared_ptr<const StoryWords> grammar;
    std::string grammar_problem;
    std::shared_ptr<const std::vector<std::string>> vocab;  // [V] every id's readable label (logits, probs)
};

/// Loads DIR (config, weights, tokenizer), reporting phases with a fraction in [0, 1].
/// Throws attnviz::Error with one line naming the file and what is wrong.
using ProgressFn = std::function<void(const char* phase, float fraction)>;
LoadedModel load_model_folder(const std::string& dir, const ProgressFn& progress);

struct ModelRun {
    std::shared_ptr<const ModelForward> forward;
    std::shared_ptr<const std::vector<std::string>> tokens;  // [n] readable token texts
    std::vector<int> ids;                                    // [n]
    std::vector<int> mask_positions;  // an encoder's [MASK] tokens (indices into ids), in order
    int logits_row = -1;              // the row the layers' logits / probs stages show (-1: the last)
    std::vector<bool> kept_heads;     // per layer: its per-head stages are kept
    std::string note;  // what is summarised at this length ("" when every layer's heads are kept)
    /// Every layer as a Trace (core/model_trace.hpp), built on the worker thread; stages alias `forward`.
    std::vector<std::shared_ptr<const Trace>> layers;
    /// An encoder–decoder (app/seq2seq_run.hpp): the fields above are the decoder's (its layers hold
    /// the cross-attention too); these are the encoder's.
    std::vector<std::shared_ptr<const Trace>> encoder_layers;
    std::shared_ptr<const std::vector<std::string>> source_tokens;
    std::vector<int> source_ids;
};

/// Tokenizes `text` and runs the model, keeping every layer's heads when they fit in
/// kKeepAllHeadsBytes, else only `layer`'s. Throws attnviz::Error (no tokens, too many tokens, over
/// the memory limit) or Cancelled.
/// `keep_all_bytes`: the budget for keeping every layer's heads (tests pass a small one).
ModelRun run_model_on_text(const LoadedModel& model, const std::string& text, int layer, int threads,
                           const std::atomic<bool>* cancel,
                           std::uint64_t keep_all_bytes = kKeepAllHeadsBytes);
/// An encoder's input is its text or a sentence pair (`text_b` non-empty: [CLS] A [SEP] B [SEP] with
/// segments); its logits are kept at every position and the layers' logits stage shows the
/// `mask_choice`-th [MASK] (the first when out of range; the last token when there is none).
struct TextInput {
    std::string text, text_b;
    int mask_choice = 0;
};
ModelRun run_model_on_input(const LoadedModel& model, const TextInput& input, int layer, int threads,
                            const std::atomic<bool>* cancel,
                            std::uint64_t keep_all_bytes = kKeepAllHeadsBytes);
/// The tokenizer's mask token as written in a text ("[MASK]", "<mask>") and its id, or "" and -1.
std::pair<std::string, int> mask_token_of(const Tokenizer& tokenizer);

class ModelSession {
  public:
    struct LoadResult {
        std::optional<LoadedModel> model;  // empty on error
        std::string error;                 // one line
    };
    struct RunResult {
        std::uint64_t request = 0;
        std::optional<ModelRun> run;  // empty on error
        std::string error;
        double ms = 0;
    };
    struct Progress {
        bool loading = false;
        std::string phase;
        float fraction = 0;
    };
    using LoadFn = std::function<LoadedModel(const std::string&, const ProgressFn&)>;

    explicit ModelSession(int threads = 1, LoadFn load = {});
    ~ModelSession();
    ModelSession(const ModelSession&) = delete;
    ModelSession& operator=(const ModelSession&) = delete;

    /// Starts loading DIR (replaces a load not yet started; one in progress stops at its next phase
    /// and its result is dropped: the newest request wins). Never blocks.
    void load(const std::string& dir);
    /// Drops the pending load and stops the one in progress at its next phase (a scene without a model
    /// was opened meanwhile: the model must not replace it). Never blocks.
    void cancel_load();
    Progress progress() const;
    std::optional<LoadResult> poll_load();

    /// Asks for `text` run on `model` with `layer`'s heads kept; returns the request id. An
    /// encoder–decoder reads `text` as its source and `target` as the decoder's input.
    std::uint64_t run(const LoadedModel& model, const std::string& text, int layer,
                      const std::string& target = "");
    std::uint64_t run(const LoadedModel& model, const TextInput& input, int layer,
                      const std::string& target = "");
    std::optional<RunResult> poll_run();
    /// A load or a run is waiting or in progress.
    bool busy() const;
    bool wait_idle(double timeout_seconds);
    /// Drops pending runs and cancels the running one (back to the single layer).
    void cancel_runs();
    void shutdown();

    // --- the GUI thread's side: frame() drives the calls above; a caller uses one or the other ------

    /// How the app was started. `model_dir` (--model DIR) is loaded at once while the single layer
    /// waits; --layer and --view apply to it. A batch run (--screenshot) leaves the settings alone and
    /// ends the app when that model cannot be opened.
    struct Startup {
        std::string model_dir;
        std::optional<int> layer;
        std::optional<MainView> view;
        bool batch = false;
        // Flags that only some models read ("--target", "--family": t5 / bart; "--text-b": encoders),
        // as given: once the model is known, one it does not apply to says so (a screenshot run exits 2).
        std::vector<std::string> seq2seq_flags, encoder_flags;
    };
    void start(AppState& state, Startup startup);
    /// The open model (null: none), for the panels' other background work (app/interventions_worker.hpp).
    const LoadedModel* loaded_model() const { return model_ ? &*model_ : nullptr; }
    /// The model asked for at start is still loading (the single layer's trace is not computed).
    bool startup_pending() const { return startup_pending_; }

    /// What one frame did that the shell acts on.
    struct FrameEvents {
        bool left_model = false;  // back to the single layer: its trace must be computed again
        bool run_done = false;    // a run arrived and is on screen
        std::string run_error;    // a run failed (one line, already in the status bar)
        int exit_code = 0;        // nonzero: the start-up model failed; print `exit_message` and quit
        std::string exit_message;
    };
    /// Once per frame, before the panels draw: carries out the requests in state.model, takes a
    /// finished load (entering the model, or the error line) and a finished run (its layer on screen
    /// as state.trace, every kept layer in state.model_layers), submits a run when the text or an
    /// unkept layer changed, and ranks the next tokens at the current temperature.
    FrameEvents frame(AppState& state);

  private:
    void enter_model(AppState& state, LoadedModel model);
    void resume_model(AppState& state);  // the workspace's layer, head, pinned row and view, once loaded
    void leave_model(AppState& state);
    void submit_model_run(const AppState& state);
    void show_model_layer(AppState& state);
    void update_next_tokens(AppState& state);
    void append_next_token(AppState& state, bool sampled);
    void fill_mask(AppState& state, const Mat& logits, const SamplingOptions& o, double u);

    struct RunRequest {
        std::uint64_t id;
        LoadedModel model;
        TextInput input;
        int layer;
        std::string target;  // an encoder–decoder's decoder input
    };
    void thread_main();

    LoadFn load_fn_;
    int threads_;
    mutable std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::optional<std::string> pending_load_;
    std::uint64_t load_generation_ =
        0;  // bumped by load() and cancel_load(): an older load's result is stale
    std::optional<RunRequest> pending_run_;
    std::uint64_t next_id_ = 0;
    bool working_ = false, stop_ = false;
    std::atomic<bool> cancel_{false};
    Progress progress_;
    std::optional<LoadResult> load_result_;
    std::optional<RunResult> run_result_;
    std::thread thread_;

    // The GUI thread's state (frame() and what it calls).
    Startup startup_;
    bool startup_pending_ = false;
    std::optional<LoadedModel> model_;       // the open model (kept when another fails to load)
    std::optional<ModelRun> run_;            // its last finished run
    std::string run_text_;                   // text of the last submitted run
    std::string run_target_;                 // an encoder–decoder's target of the last submitted run
    int shown_family_ = -1;                  // the attention family on screen (AttnFamily; -1 = none yet)
    std::string run_text_b_;                 // its second text (an encoder's pair)
    int run_mask_choice_ = 0;                // the [MASK] its logits stage shows
    int run_layer_ = -1, shown_layer_ = -1;  // layer whose heads the last request kept / on screen
    bool run_submitted_ = false;
    // The knobs the next-token ranking was computed with (temperature -1: recompute).
    float top_temperature_ = -1, top_p_ = -1;
    int top_k_ = -1;
    std::string resume_stage_;  // the stage a resumed model lands on when its first run arrives
    std::mt19937_64 sample_rng_{1};
};

}  // namespace attnviz::app
