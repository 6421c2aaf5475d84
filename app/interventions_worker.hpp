// The Interventions panel's background work (core/interventions.hpp on the open model): the clean run,
// every head's Δloss (the importance grid), the direct logit attribution and the logit lens of a text;
// the run with the chosen heads ablated; activation patching between a clean and a corrupt text. One
// thread, one slot per kind of job: a newer request of a kind replaces the one waiting and cancels the
// one running (latest wins, as the compute worker). frame() is the GUI thread's side: it turns the
// panel's choices (AppState::interventions) into requests and the results back into that state. No
// OpenGL, no ImGui.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/app_state.hpp"
#include "app/model_session.hpp"
#include "core/interventions.hpp"

namespace attnviz::app {

/// The predictions i (of token i+1 after token i) whose pair (ids[i], ids[i+1]) already occurred earlier
/// in the text: what an induction head can copy. Their mean loss is the "repeat loss".
std::vector<bool> repeated_pairs(const std::vector<int>& ids);
/// Mean of losses[i] over the i where `mask` is set (NaN when none).
double masked_mean(const std::vector<double>& losses, const std::vector<bool>& mask);

/// Models with at most this many heads also get each head's Δ repeat loss (one forward per head).
inline constexpr int kRepeatSweepHeads = 64;

class InterventionsWorker {
  public:
    explicit InterventionsWorker(int threads = 1);
    ~InterventionsWorker();
    InterventionsWorker(const InterventionsWorker&) = delete;
    InterventionsWorker& operator=(const InterventionsWorker&) = delete;

    /// Once per frame on the GUI thread: `model` is the open model (null: none). While `wanted` (the
    /// panel is on screen) requests what the choices in state.interventions need and is not yet
    /// computed; always takes finished results into state.interventions.
    void frame(AppState& state, const LoadedModel* model, bool wanted, double now_seconds);
    /// A job is waiting or running.
    bool busy() const;
    /// Blocks until idle or the time-out (tests); true when idle.
    bool wait_idle(double timeout_seconds);
    void shutdown();

  private:
    enum Kind { Base, Ablate, Patch, Attribute, kKinds };
    struct Job {
        Kind kind = Base;
        std::uint64_t id = 0;
        LoadedModel model;
        std::string text;
        AblationMode mode = AblationMode::Zero;
        std::vector<HeadRef> heads;                 // Ablate
        std::string clean, corrupt, answer, wrong;  // Patch
        int target = -1;                            // Attribute
        std::shared_ptr<std::atomic<bool>> cancel;
    };
    struct Result {
        Kind kind = Base;
        std::string key;         // what the result answers (compared with the current choices)
        std::string error;       // one line, or ""
        InterventionsUi values;  // the fields this kind fills
    };
    void submit(Job job);
    void thread_main();
    Result run(const Job& job);
    static std::string key_of(const Job& job);

    int threads_;
    mutable std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::array<std::optional<Job>, kKinds> pending_;
    std::array<std::shared_ptr<std::atomic<bool>>, kKinds> running_cancel_;
    std::vector<Result> results_;
    int running_ = 0;
    bool stop_ = false;
    std::uint64_t next_id_ = 0;
    std::thread thread_;

    // The GUI thread's side.
    std::array<std::string, kKinds> requested_;  // key of the last request of each kind
    std::string model_dir_;
    std::vector<InterventionsUi::Bar> base_bars_;  // the unablated next tokens of the last base result
    bool was_wanted_ = false;
    double opened_at_ = 0;  // when the panel came on screen (for importance_shown_ms)
};

}  // namespace attnviz::app
