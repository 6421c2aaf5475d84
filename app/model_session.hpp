// A real model in the GUI: loads a Hugging Face folder (weights + tokenizer) and runs it on the text,
// both on one background thread so a frame never blocks. Latest wins, as in ComputeWorker: a newer run
// request replaces one not yet started and cancels the one running (ModelRunOptions::cancel). A load
// that fails leaves the current model alone: the caller keeps what it has and shows the error line.
// No OpenGL, no ImGui.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/model.hpp"
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
};

/// Loads DIR (config, weights, tokenizer), reporting phases with a fraction in [0, 1].
/// Throws attnviz::Error with one line naming the file and what is wrong.
using ProgressFn = std::function<void(const char* phase, float fraction)>;
LoadedModel load_model_folder(const std::string& dir, const ProgressFn& progress);

struct ModelRun {
    std::shared_ptr<const ModelForward> forward;
    std::shared_ptr<const std::vector<std::string>> tokens;  // [n] readable token texts
    std::vector<int> ids;                                    // [n]
    std::vector<bool> kept_heads;                            // per layer: its per-head stages are kept
    std::string note;  // what is summarised at this length ("" when every layer's heads are kept)
    /// Every layer as a Trace (core/model_trace.hpp), built on the worker thread; stages alias `forward`.
    std::vector<std::shared_ptr<const Trace>> layers;
};

/// Tokenizes `text` and runs the model, keeping every layer's heads when they fit in
/// kKeepAllHeadsBytes, else only `layer`'s. Throws attnviz::Error (no tokens, too many tokens, over
/// the memory limit) or Cancelled.
/// `keep_all_bytes`: the budget for keeping every layer's heads (tests pass a small one).
ModelRun run_model_on_text(const LoadedModel& model, const std::string& text, int layer, int threads,
                           const std::atomic<bool>* cancel,
                           std::uint64_t keep_all_bytes = kKeepAllHeadsBytes);

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

    /// Asks for `text` run on `model` with `layer`'s heads kept; returns the request id.
    std::uint64_t run(const LoadedModel& model, const std::string& text, int layer);
    std::optional<RunResult> poll_run();
    /// A load or a run is waiting or in progress.
    bool busy() const;
    bool wait_idle(double timeout_seconds);
    /// Drops pending runs and cancels the running one (back to the single layer).
    void cancel_runs();
    void shutdown();

  private:
    struct RunRequest {
        std::uint64_t id;
        LoadedModel model;
        std::string text;
        int layer;
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
};

}  // namespace attnviz::app
