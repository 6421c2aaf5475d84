// The Training lab's model under training: a core Trainer (core/tasks.hpp) driven step by step on its
// own thread, so the GUI keeps its frame rate while it trains. Start / pause / resume / step once /
// reset; the history of the run (per-step loss and learning rate, the evaluations with held-out
// losses and head scores); and a timeline of probe-attention snapshots kept within a memory bound.
//
// The GUI never waits for a step: the worker publishes an immutable TrainingSnapshot (a shared_ptr
// swapped under a mutex held only for the swap) and the GUI takes the newest one each frame.
// Deterministic for a seed and thread count: the same setup gives the same losses bit for bit,
// however the run is paused and resumed. No OpenGL, no ImGui.
#pragma once

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/task_registry.hpp"
#include "core/tasks.hpp"
#include "core/train.hpp"

namespace attnviz::app {

/// What to train: the model, the task and the optimiser settings.
struct TrainingSetup {
    std::string preset;  // the preset it came from ("" = custom)
    TrainConfig model;
    Task task;
    TrainOptions options;
    std::shared_ptr<const Params<float>> initial;  // start from these weights (a loaded checkpoint)
    /// When set, the task is made on the session's thread when the run starts (learning a text's BPE
    /// takes a moment), and the model's vocabulary follows it; a throw fails the run with its line.
    /// `stop` turns true when the run is no longer wanted (Train again, Reset, quit): make_task may
    /// then throw BpeCancelled (io/bpe_train.hpp) to end early.
    std::function<Task(const std::atomic<bool>& stop)> make_task;
    std::string preparing;  // shown while make_task runs ("learning 512 BPE tokens from book.txt…")
};

/// The lab's presets, one per task of core/task_registry (training_preset_names(), in its order):
/// the task with the model and options its entry's lab_preset trains it with (a model that fits its
/// task). A task that reads a text ("text") has no task yet: it is read from the file when training
/// starts. Throws ConfigError for an unknown name.
TrainingSetup training_preset(const std::string& name);
std::vector<std::string> training_preset_names();
/// What the lab's preset menu shows for a preset ("copy a sequence").
const char* training_preset_label(const std::string& name);

/// [layer][head] → attention [n, n] of the probe sequence at one step.
using ProbeAttention = std::vector<std::vector<MatT<float>>>;

struct TimelineFrame {
    long step = 0;
    ProbeAttention attention;
};

/// Keeps every stride-th frame offered; when `max_frames` are kept, drops every other one and
/// doubles the stride (so the kept frames stay evenly spread over the whole run, from step 0, and
/// memory never exceeds max_frames frames). Pure; unit-tested.
class Timeline {
  public:
    explicit Timeline(std::size_t max_frames = 64) : max_frames_(max_frames < 2 ? 2 : max_frames) {}
    /// Offers the next frame (frames are offered in step order); returns true when it was kept.
    bool offer(std::shared_ptr<const TimelineFrame> frame);
    const std::vector<std::shared_ptr<const TimelineFrame>>& frames() const { return frames_; }
    std::size_t stride() const { return stride_; }
    std::size_t max_frames() const { return max_frames_; }

  private:
    std::size_t max_frames_;
    std::size_t stride_ = 1;
    std::size_t offered_ = 0;
    std::vector<std::shared_ptr<const TimelineFrame>> frames_;
};

/// How many frames of `frame_bytes` fit in `budget_bytes` (at least 2, at most 512).
std::size_t timeline_capacity(std::size_t budget_bytes, std::size_t frame_bytes);

/// The default memory bound of the timeline (the lab's help text states it).
inline constexpr std::size_t kTimelineBytes = 64ull << 20;
/// A running session publishes a snapshot at most this often (and on every pause / end): each one
/// costs the GUI a frame, which under software OpenGL takes CPU from the training.
inline constexpr double kPublishSeconds = 0.25;
/// Per-step curves keep at most this many points (thinned by halves like the timeline).
inline constexpr std::size_t kMaxCurvePoints = 4096;

/// A series thinned by halves: keeps every stride-th point offered, at most `max_points`.
struct ThinnedSeries {
    std::size_t max_points = kMaxCurvePoints;
    std::size_t stride = 1, offered = 0;
    std::vector<double> x, y;
    void offer(double xv, double yv);
};

/// The step at which a head type appeared in the run: the first evaluation at which some head's score
/// reached the score's threshold (head_score_info). At the run's first evaluation (step 0: fresh
/// weights, or a loaded checkpoint's) a score already over it is no appearance but a head the model
/// came with (`at_start`).
struct HeadScoreMark {
    HeadScore score = HeadScore::PreviousToken;
    long step = -1;
    int layer = -1, head = -1;  // the head of the highest score at that evaluation
    double value = 0;
    bool at_start = false;
};

/// The marks of a run, from its evaluations offered in step order: one per declared head score (the
/// task's TaskInfo::scores) once it appears, and the phase change — the first evaluation whose
/// held-out repeat loss falls below 1.0, for a task with repeats. Comparisons start from the run's
/// first evaluation, so a resumed checkpoint that was already past its phase change (or already had
/// a head of some type) reports that instead of a change at its first steps. Pure; unit-tested.
class RunMarks {
  public:
    explicit RunMarks(std::vector<HeadScore> scores = {}, bool has_repeats = false)
        : scores_(std::move(scores)), has_repeats_(has_repeats) {}
    /// Offers the next evaluation; `running_seconds` is the run's training time so far.
    void offer(const EvalPoint& e, double running_seconds = 0);
    const std::vector<HeadScore>& scores() const { return scores_; }
    /// Head types that appeared (or were there at the start), in the order they did.
    const std::vector<HeadScoreMark>& marks() const { return marks_; }
    long cliff_step() const { return cliff_step_; }
    double cliff_seconds() const { return cliff_seconds_; }
    /// The first evaluation's repeat loss was already below 1.0 (a resumed, already-trained model).
    bool cliff_before_start() const { return cliff_before_start_; }
    double start_repeat_loss() const { return start_repeat_loss_; }

  private:
    std::vector<HeadScore> scores_;
    bool has_repeats_ = false;
    bool started_ = false;
    std::vector<HeadScoreMark> marks_;
    long cliff_step_ = -1;
    double cliff_seconds_ = -1;
    bool cliff_before_start_ = false;
    double start_repeat_loss_ = NAN;
};

enum class TrainingStatus { Idle, Running, Paused, Done, Failed };
const char* training_status_name(TrainingStatus s);  // "idle", "running", "paused", "done", "failed"

/// Everything the GUI shows, immutable once published.
struct TrainingSnapshot {
    std::uint64_t version = 0;  // increases with every publication
    std::uint64_t run = 0;      // which start() this run came from (1, 2, ...; 0 = none)
    TrainingStatus status = TrainingStatus::Idle;
    std::string error;      // one line when Failed
    std::string preparing;  // while the run's task is being made (status Running, no trainer yet)
    std::string preset;     // of the setup
    std::string task;       // task name
    std::vector<std::pair<std::string, std::string>>
        task_files;  // saved beside a checkpoint: a tokenizer (a text's BPE), a story grammar
    std::string first_label, repeat_label;
    TrainConfig config;
    long step = 0, total_steps = 0;
    double lr = 0;                              // of the last step
    double tokens_per_second = 0;               // while running
    double running_seconds = 0;                 // wall time spent training (not paused)
    ThinnedSeries train_loss, learning_rate;    // per step
    std::vector<EvalPoint> evals;               // every eval_every steps
    long cliff_step = -1;                       // first eval whose held-out repeat loss < 1.0
    double cliff_seconds = -1;                  // running seconds from Train to the cliff
    bool cliff_before_start = false;            // the loaded model was past its phase change already
    double start_repeat_loss = NAN;             // the held-out repeat loss at the run's first evaluation
    std::vector<HeadScore> scores;              // the head scores the task declares (the lab's curves)
    std::vector<HeadScoreMark> marks;           // when each head type appeared (RunMarks)
    std::vector<std::string> token_names;       // the task's (the probe maps' labels)
    std::string heldout_note;                   // where the held-out data comes from
    std::string tokenizer;                      // how a text task's text was cut ("" = not a text)
    std::vector<int> probe_ids;                 // [n] the probe sequence (an encoder–decoder: the decoder's)
    std::vector<int> probe_source_ids;          // [m] an encoder–decoder's probe source (else empty)
    std::vector<int> probe_target_ids;          // [n] what each probe row predicts (−1: not scored)
    std::vector<std::string> figure_names;      // the task's figures per evaluation (translate: alignment)
    std::vector<long> figure_step;              // [figures] the first evaluation reaching 0.8 (−1: none)
    std::vector<double> figure_seconds;         // ... and the running seconds then
    std::shared_ptr<const TimelineFrame> live;  // the newest probe attention
    std::vector<std::shared_ptr<const TimelineFrame>> timeline;  // kept frames, by step
    std::size_t timeline_stride = 1, timeline_capacity = 0;
    std::shared_ptr<const Params<float>> params;  // as of the newest evaluation / pause / end
};

class TrainingSession {
  public:
    /// `on_publish` is called on the worker thread after each new snapshot (the GUI passes
    /// glfwPostEmptyEvent, so a frame is drawn when there is something new and not otherwise).
    explicit TrainingSession(std::size_t timeline_bytes = kTimelineBytes,
                             std::function<void()> on_publish = {});
    ~TrainingSession();
    TrainingSession(const TrainingSession&) = delete;
    TrainingSession& operator=(const TrainingSession&) = delete;

    /// Replaces the run with a fresh one of `setup` and starts it (running, or paused when
    /// `paused`). A setup the trainer refuses is status Failed with its one line. Never blocks.
    void start(const TrainingSetup& setup, bool paused = false);
    void pause();
    void resume();
    /// Runs one step (when paused or idle with a run), then stays paused.
    void step_once();
    /// Drops the run: status Idle, no history.
    void reset();

    /// The newest snapshot (never null). Holds the mutex only to copy a pointer.
    std::shared_ptr<const TrainingSnapshot> snapshot() const;
    /// Waits (tests, headless) until pred(snapshot) holds or the timeout passes; false on time-out.
    bool wait_for(const std::function<bool(const TrainingSnapshot&)>& pred, double timeout_seconds) const;
    void shutdown();

  private:
    struct Run;
    void thread_main();
    void publish_locked(Run& run);

    std::size_t timeline_bytes_;
    std::function<void()> on_publish_;
    mutable std::mutex mutex_;
    mutable std::condition_variable wake_, changed_;
    std::shared_ptr<const TrainingSnapshot> snapshot_;
    std::unique_ptr<TrainingSetup> pending_;
    std::uint64_t runs_started_ = 0;  // a start() not yet taken by the worker
    bool pending_paused_ = false;
    bool reset_ = false, running_ = false, stop_ = false;
    std::atomic<bool> task_cancel_{false};  // the task being made is no longer wanted
    long step_requests_ = 0;
    std::uint64_t version_ = 0;
    std::thread thread_;
};

}  // namespace attnviz::app
