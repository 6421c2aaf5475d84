// The Training lab's background run: see app/training_session.hpp.
#include "app/training_session.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <vector>

#include "app/clock.hpp"
#include "app/compute_worker.hpp"
#include "core/error.hpp"
#include "core/task_registry.hpp"
#include "io/bpe_train.hpp"
#include "io/checkpoint.hpp"
#include "io/cli.hpp"

namespace attnviz::app {

TrainingSetup training_preset(const std::string& name) {
    const TaskInfo* info = find_task(name);
    if (!info) {
        std::string names;
        for (const std::string& n : training_preset_names()) names += (names.empty() ? "" : ", ") + n;
        throw ConfigError("There is no training preset '" + name + "' (presets: " + names + ").");
    }
    TrainingSetup s;
    s.preset = name;
    s.options.seed = 1;
    s.options.eval_every = 10;
    if (info->lab_preset) info->lab_preset(s.model, s.options);
    if (info->file_option()) {
        // The task (and the vocabulary) come from the file the learner picks (the lab reads it when
        // Train is pressed).
        s.task.name = info->name;
        return s;
    }
    TaskRequest request;
    request.vocab_size = s.model.vocab_size;
    request.context = s.model.context;
    s.task = make_task(*info, request);
    if (info->fits_model) {  // the model fits the task: its vocabulary, and at least its sequence length
        s.model.vocab_size = s.task.vocab_size;
        s.model.context = std::max(s.model.context, s.task.context);
    }
    return s;
}

std::vector<std::string> training_preset_names() {
    std::vector<std::string> names;
    for (const TaskInfo& t : task_registry()) names.push_back(t.name);
    return names;
}

const char* training_preset_label(const std::string& name) {
    const TaskInfo* info = find_task(name);
    return info ? info->label.c_str() : "custom";
}

const char* training_status_name(TrainingStatus s) {
    switch (s) {
        case TrainingStatus::Idle:
            return "idle";
        case TrainingStatus::Running:
            return "running";
        case TrainingStatus::Paused:
            return "paused";
        case TrainingStatus::Done:
            return "done";
        case TrainingStatus::Failed:
            return "failed";
    }
    return "idle";
}

bool Timeline::offer(std::shared_ptr<const TimelineFrame> frame) {
    const std::size_t index = offered_++;
    if (index % stride_ != 0) return false;
    if (frames_.size() >= max_frames_) {
        // Full: keep the frames at even positions (offer indices multiple of 2·stride).
        std::vector<std::shared_ptr<const TimelineFrame>> kept;
        for (std::size_t i = 0; i < frames_.size(); i += 2) kept.push_back(frames_[i]);
        frames_ = std::move(kept);
        stride_ *= 2;
        if (index % stride_ != 0) return false;
    }
    frames_.push_back(std::move(frame));
    return true;
}

std::size_t timeline_capacity(std::size_t budget_bytes, std::size_t frame_bytes) {
    const std::size_t n = frame_bytes ? budget_bytes / frame_bytes : 512;
    return std::max<std::size_t>(2, std::min<std::size_t>(512, n));
}

void ThinnedSeries::offer(double xv, double yv) {
    const std::size_t index = offered++;
    if (index % stride != 0) return;
    if (x.size() >= max_points) {
        std::size_t k = 0;
        for (std::size_t i = 0; i < x.size(); i += 2, ++k) {
            x[k] = x[i];
            y[k] = y[i];
        }
        x.resize(k);
        y.resize(k);
        stride *= 2;
        if (index % stride != 0) return;
    }
    x.push_back(xv);
    y.push_back(yv);
}

void RunMarks::offer(const EvalPoint& e, double running_seconds) {
    const bool first = !started_;
    started_ = true;
    if (has_repeats_) {
        if (first) {
            start_repeat_loss_ = e.heldout_split.repeat;
            cliff_before_start_ = e.heldout_split.repeat < 1.0;
        } else if (cliff_step_ < 0 && !cliff_before_start_ && e.heldout_split.repeat < 1.0) {
            cliff_step_ = e.step;
            cliff_seconds_ = running_seconds;
        }
    }
    for (HeadScore k : scores_) {
        if (std::any_of(marks_.begin(), marks_.end(), [k](const HeadScoreMark& m) { return m.score == k; }))
            continue;
        HeadScoreMark best;
        best.score = k;
        best.value = -1;
        for (std::size_t l = 0; l < e.scores.size(); ++l)
            for (std::size_t h = 0; h < e.scores[l].size(); ++h) {
                const double v = head_score_value(e.scores[l][h], k);
                if (v > best.value) {
                    best.value = v;
                    best.layer = int(l);
                    best.head = int(h);
                }
            }
        if (best.layer < 0 || !(best.value >= head_score_info(k).threshold)) continue;
        best.step = e.step;
        best.at_start = first;
        marks_.push_back(best);
    }
}

// The worker's run: the trainer and the history it builds (touched by the worker thread only).
struct TrainingSession::Run {
    TrainingSetup setup;
    std::unique_ptr<Trainer> trainer;
    TrainingSnapshot snap;  // the history; published as a copy
    Timeline timeline{64};
    RunMarks marks;
    std::string error;
};

TrainingSession::TrainingSession(std::size_t timeline_bytes, std::function<void()> on_publish)
    : timeline_bytes_(timeline_bytes),
      on_publish_(std::move(on_publish)),
      snapshot_(std::make_shared<TrainingSnapshot>()) {
    thread_ = std::thread([this] { thread_main(); });
}

TrainingSession::~TrainingSession() {
    shutdown();
}

void TrainingSession::shutdown() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        task_cancel_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void TrainingSession::start(const TrainingSetup& setup, bool paused) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_ = std::make_unique<TrainingSetup>(setup);
        task_cancel_ = true;  // a task still being made for the previous start is not wanted
        ++runs_started_;
        pending_paused_ = paused;
        reset_ = false;
        step_requests_ = 0;
        running_ = !paused;
    }
    wake_.notify_all();
}

void TrainingSession::pause() {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    step_requests_ = 0;
    wake_.notify_all();
}

void TrainingSession::resume() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        running_ = true;
    }
    wake_.notify_all();
}

void TrainingSession::step_once() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        running_ = false;
        step_requests_ += 1;
    }
    wake_.notify_all();
}

void TrainingSession::reset() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_.reset();
        reset_ = true;
        task_cancel_ = true;
        running_ = false;
        step_requests_ = 0;
    }
    wake_.notify_all();
}

std::shared_ptr<const TrainingSnapshot> TrainingSession::snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return snapshot_;
}

bool TrainingSession::wait_for(const std::function<bool(const TrainingSnapshot&)>& pred,
                               double timeout_seconds) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                             [&] { return pred(*snapshot_); });
}

void TrainingSession::publish_locked(Run& run) {
    auto s = std::make_shared<TrainingSnapshot>(run.snap);
    s->version = ++version_;
    s->timeline = run.timeline.frames();
    s->timeline_stride = run.timeline.stride();
    s->timeline_capacity = run.timeline.max_frames();
    snapshot_ = std::move(s);
    changed_.notify_all();
    if (on_publish_) on_publish_();
}

namespace {

// Evaluates the trainer now and records the point, the marks, the live probe attention and a
// timeline frame.
void record_eval(TrainingSnapshot& snap, Timeline& timeline, RunMarks& marks, const Trainer& trainer) {
    EvalPoint e = trainer.evaluate();
    marks.offer(e, snap.running_seconds);
    snap.cliff_step = marks.cliff_step();
    snap.cliff_seconds = marks.cliff_seconds();
    snap.cliff_before_start = marks.cliff_before_start();
    snap.start_repeat_loss = marks.start_repeat_loss();
    snap.marks = marks.marks();
    for (std::size_t k = 0; k < e.figures.size() && k < snap.figure_step.size(); ++k)
        if (snap.figure_step[k] < 0 && e.figures[k].second >= 0.8) {
            snap.figure_step[k] = e.step;
            snap.figure_seconds[k] = snap.running_seconds;
        }
    snap.evals.push_back(std::move(e));
    if (snap.evals.size() > kMaxCurvePoints) {  // thin by halves, keeping the newest
        std::vector<EvalPoint> kept;
        for (std::size_t i = snap.evals.size() % 2 ? 0 : 1; i < snap.evals.size(); i += 2)
            kept.push_back(std::move(snap.evals[i]));
        snap.evals = std::move(kept);
    }
    auto frame = std::make_shared<TimelineFrame>();
    frame->step = trainer.steps_done();
    frame->attention = trainer.probe_attention();
    snap.live = frame;
    timeline.offer(frame);
    snap.params = std::make_shared<const Params<float>>(trainer.params());
}

}  // namespace

void TrainingSession::thread_main() {
    lower_priority_of_this_thread("attnviz-train");
    std::unique_ptr<Run> run;
    std::unique_lock<std::mutex> lock(mutex_);
    double last_publish = 0;
    for (;;) {
        const bool can_step = run && run->trainer && run->snap.status != TrainingStatus::Done &&
                              run->snap.status != TrainingStatus::Failed;
        wake_.wait(lock, [&] {
            return stop_ || pending_ || reset_ || (can_step && (running_ || step_requests_ > 0));
        });
        if (stop_) return;
        if (reset_) {
            reset_ = false;
            run.reset();
            auto s = std::make_shared<TrainingSnapshot>();
            s->version = ++version_;
            snapshot_ = std::move(s);
            changed_.notify_all();
            continue;
        }
        if (pending_) {
            run = std::make_unique<Run>();
            run->setup = std::move(*pending_);
            pending_.reset();
            const bool paused = pending_paused_;
            run->snap.run = runs_started_;
            std::string task_error;
            if (run->setup.make_task) {
                // Say what is happening while the task is made (a BPE of a long text takes seconds).
                task_cancel_ = false;
                run->snap.status = TrainingStatus::Running;
                run->snap.preset = run->setup.preset;
                run->snap.preparing =
                    run->setup.preparing.empty() ? "preparing the task…" : run->setup.preparing;
                publish_locked(*run);
                run->snap.preparing.clear();
                lock.unlock();
                try {
                    run->setup.task = run->setup.make_task(task_cancel_);
                    run->setup.model.vocab_size = run->setup.task.vocab_size;
                } catch (const BpeCancelled&) {
                    lock.lock();
                    continue;  // Train again, Reset or quit came meanwhile: they are handled next
                } catch (const std::exception& e) {
                    task_error = one_line(e.what());
                }
            } else {
                lock.unlock();
            }
            TrainingSnapshot& snap = run->snap;
            snap.preset = run->setup.preset;
            snap.task = run->setup.task.name;
            snap.first_label = run->setup.task.first_label;
            snap.repeat_label = run->setup.task.repeat_label;
            snap.config = run->setup.model;
            snap.total_steps = run->setup.options.steps;
            {
                const TaskInfo* info = find_task(run->setup.task.name);
                snap.scores = info ? info->scores : all_head_scores();
                run->marks = RunMarks(snap.scores, !run->setup.task.repeat_label.empty());
            }
            snap.token_names = run->setup.task.token_names;
            snap.heldout_note = run->setup.task.heldout_note;
            snap.tokenizer = run->setup.task.tokenizer;
            try {
                if (!task_error.empty()) throw Error(task_error);
                run->trainer =
                    std::make_unique<Trainer>(run->setup.model, run->setup.task, run->setup.options);
                if (run->setup.initial) run->trainer->set_params(*run->setup.initial);
                // Saved with every checkpoint: a tokenizer naming the ids (the app opens the folder).
                snap.task_files = checkpoint_task_files(run->setup.task, run->setup.model.vocab_size);
                const TrainConfig& c = run->trainer->config();
                const std::size_t n = run->trainer->probe().front().size();
                const std::size_t frame_bytes = std::size_t(c.n_layer) * std::size_t(c.n_head) * n * n * 4;
                run->timeline = Timeline(timeline_capacity(timeline_bytes_, frame_bytes));
                snap.probe_ids = run->trainer->probe().front();
                snap.probe_target_ids = run->trainer->probe_targets().front();
                if (!run->trainer->probe_source().empty())
                    snap.probe_source_ids = run->trainer->probe_source().front();
                snap.figure_names = run->setup.task.figure_names;
                snap.figure_step.assign(snap.figure_names.size(), -1);
                snap.figure_seconds.assign(snap.figure_names.size(), -1);
                record_eval(snap, run->timeline, run->marks, *run->trainer);  // step 0
                snap.status = paused ? TrainingStatus::Paused : TrainingStatus::Running;
            } catch (const std::exception& e) {
                run->trainer.reset();
                snap.status = TrainingStatus::Failed;
                snap.error = one_line(e.what());
            }
            lock.lock();
            if (!pending_ && !reset_) publish_locked(*run);
            continue;
        }
        if (!can_step) continue;
        if (step_requests_ > 0) step_requests_ -= 1;
        lock.unlock();
        Trainer& trainer = *run->trainer;
        TrainingSnapshot& snap = run->snap;
        const double t0 = now_seconds();
        bool evaluated = false;
        try {
            const double loss = trainer.step();
            snap.step = trainer.steps_done();
            snap.lr = trainer.last_lr();
            snap.train_loss.offer(double(snap.step), loss);
            snap.learning_rate.offer(double(snap.step), snap.lr);
            const long done = snap.step;
            const bool last = done >= trainer.options().steps;
            if (done % trainer.options().eval_every == 0 || last) {
                snap.running_seconds += now_seconds() - t0;
                record_eval(snap, run->timeline, run->marks, trainer);
                evaluated = true;
            }
            if (last) snap.status = TrainingStatus::Done;
        } catch (const std::exception& e) {
            snap.status = TrainingStatus::Failed;
            snap.error = one_line(e.what());
        }
        const double t1 = now_seconds();
        if (!evaluated) snap.running_seconds += t1 - t0;
        snap.tokens_per_second = snap.running_seconds > 0
                                     ? trainer.tokens_per_step() * double(snap.step) / snap.running_seconds
                                     : 0.0;
        lock.lock();
        if (pending_ || reset_) continue;  // this run is being replaced
        if (snap.status == TrainingStatus::Running || snap.status == TrainingStatus::Paused)
            snap.status = running_ ? TrainingStatus::Running : TrainingStatus::Paused;
        const bool paused_now = snap.status != TrainingStatus::Running;
        if (snap.status == TrainingStatus::Paused && snap.live->step != snap.step) {
            // Paused between evaluations: show (and save) the model as it is now.
            lock.unlock();
            auto frame = std::make_shared<TimelineFrame>();
            frame->step = snap.step;
            frame->attention = trainer.probe_attention();
            snap.live = frame;
            snap.params = std::make_shared<const Params<float>>(trainer.params());
            lock.lock();
            if (pending_ || reset_) continue;
        }
        // Publish on state changes and otherwise at most every 250 ms: each publication costs the GUI
        // a frame (under software OpenGL tens of milliseconds of CPU taken from the training).
        if (paused_now || t1 - last_publish >= kPublishSeconds) {
            publish_locked(*run);
            last_publish = t1;
        }
    }
}

}  // namespace attnviz::app
