#include "app/interventions_worker.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>

#include "app/compute_worker.hpp"
#include "core/error.hpp"
#include "core/model_trace.hpp"
#include "io/cli.hpp"

namespace attnviz::app {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string heads_text(const std::vector<HeadRef>& heads) {
    std::string s;
    for (const HeadRef& h : heads) s += (s.empty() ? "" : ",") + head_name(h);
    return s;
}

// The ten most likely next tokens of `logits` (T = 1) with their probability under `base` as ghosts.
std::vector<InterventionsUi::Bar> top_bars(const RowVec& logits, const RowVec& base, const Tokenizer& tok) {
    const Vec p = next_token_probs(logits, 1.0), pb = next_token_probs(base, 1.0);
    std::vector<InterventionsUi::Bar> bars;
    for (const TokenProb& t : top_tokens(p, 10))
        bars.push_back({t.id, tok.token_label(t.id), t.p, double(pb(t.id))});
    return bars;
}

// One token of the model's tokenizer, or one line saying why not.
int single_token(const Tokenizer& tok, const std::string& text, const char* what) {
    const std::vector<int> ids = tok.encode(text);
    if (ids.size() != 1)
        throw Error(std::string(what) + " \"" + text + "\" is " + std::to_string(ids.size()) +
                    " tokens for this tokenizer; it must be exactly one");
    return ids[0];
}

}  // namespace

std::vector<bool> repeated_pairs(const std::vector<int>& ids) {
    const int n = int(ids.size());
    std::vector<bool> mask(std::size_t(std::max(0, n - 1)), false);
    for (int i = 1; i + 1 < n; ++i)
        for (int j = 0; j < i; ++j)
            if (ids[std::size_t(j)] == ids[std::size_t(i)] &&
                ids[std::size_t(j) + 1] == ids[std::size_t(i) + 1]) {
                mask[std::size_t(i)] = true;
                break;
            }
    return mask;
}

double masked_mean(const std::vector<double>& losses, const std::vector<bool>& mask) {
    double sum = 0;
    int count = 0;
    for (std::size_t i = 0; i < losses.size() && i < mask.size(); ++i)
        if (mask[i]) {
            sum += losses[i];
            ++count;
        }
    return count ? sum / count : kNaN;
}

// --- the worker thread ----------------------------------------------------------------------------

InterventionsWorker::InterventionsWorker(int threads) : threads_(std::max(1, threads)) {
    thread_ = std::thread([this] { thread_main(); });
}

InterventionsWorker::~InterventionsWorker() {
    shutdown();
}

void InterventionsWorker::shutdown() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        for (auto& c : running_cancel_)
            if (c) *c = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

bool InterventionsWorker::busy() const {
    std::lock_guard<std::mutex> lock(mutex_);
    // A result finished but not yet shown (the next frame takes it) still counts: the values on
    // screen are not its answer yet.
    if (running_ || !results_.empty()) return true;
    for (const auto& p : pending_)
        if (p) return true;
    return false;
}

bool InterventionsWorker::wait_idle(double timeout_seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    return idle_.wait_for(lock, std::chrono::duration<double>(timeout_seconds), [&] {
        if (running_) return false;
        for (const auto& p : pending_)
            if (p) return false;
        return true;
    });
}

std::string InterventionsWorker::key_of(const Job& j) {
    const std::string mode = ablation_mode_name(j.mode);
    switch (j.kind) {
        case Base:
            return j.model.dir + "\x1f" + mode + "\x1f" + j.text;
        case Ablate:
            return j.model.dir + "\x1f" + mode + "\x1f" + j.text + "\x1f" + heads_text(j.heads);
        case Patch:
            return j.model.dir + "\x1f" + j.clean + "\x1f" + j.corrupt + "\x1f" + j.answer + "\x1f" + j.wrong;
        case Attribute:
            return j.model.dir + "\x1f" + j.text + "\x1f" + std::to_string(j.target);
        default:
            return "";
    }
}

void InterventionsWorker::submit(Job job) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job.id = ++next_id_;
        job.cancel = std::make_shared<std::atomic<bool>>(false);
        if (auto& c = running_cancel_[job.kind]) *c = true;  // the running one of this kind is stale now
        pending_[job.kind] = std::move(job);
    }
    wake_.notify_all();
}

void InterventionsWorker::thread_main() {
    lower_priority_of_this_thread("attnviz-interv");
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] {
            if (stop_) return true;
            for (const auto& p : pending_)
                if (p) return true;
            return false;
        });
        if (stop_) return;
        // The kinds in order: the grid and the loss first, they are what the panel opens on.
        Job job;
        for (auto& p : pending_)
            if (p) {
                job = std::move(*p);
                p.reset();
                break;
            }
        running_cancel_[job.kind] = job.cancel;
        ++running_;
        lock.unlock();
        std::optional<Result> result;
        try {
            result = run(job);
        } catch (const Cancelled&) {
        } catch (const std::exception& e) {
            Result r;
            r.kind = job.kind;
            r.key = key_of(job);
            r.error = one_line(e.what());
            result = std::move(r);
        }
        lock.lock();
        --running_;
        if (running_cancel_[job.kind] == job.cancel) running_cancel_[job.kind].reset();
        if (result && !*job.cancel) results_.push_back(std::move(*result));
        bool idle = !running_;
        for (const auto& p : pending_) idle = idle && !p;
        if (idle) idle_.notify_all();
    }
}

InterventionsWorker::Result InterventionsWorker::run(const Job& job) {
    Result r;
    r.kind = job.kind;
    r.key = key_of(job);
    const ModelWeights& model = *job.model.weights;
    const Tokenizer& tok = *job.model.tokenizer;
    InterventionOptions o;
    o.threads = threads_;
    o.cancel = job.cancel.get();
    InterventionsUi& v = r.values;
    auto encode = [&](const std::string& text, const char* what) {
        std::vector<int> ids = tok.encode(text);
        if (ids.empty()) throw Error(std::string(what) + " gives no tokens: type something");
        return ids;
    };
    switch (job.kind) {
        case Base: {
            const std::vector<int> ids = encode(job.text, "the text");
            const auto t0 = std::chrono::steady_clock::now();
            const CleanRun clean = clean_run(model, ids, o);
            const Eigen::MatrixXd sweep = ablation_sweep(model, clean, job.mode, o);  // [L, H] losses
            v.importance.assign(std::size_t(sweep.rows()), std::vector<double>(std::size_t(sweep.cols())));
            for (Eigen::Index l = 0; l < sweep.rows(); ++l)
                for (Eigen::Index h = 0; h < sweep.cols(); ++h)
                    v.importance[std::size_t(l)][std::size_t(h)] = sweep(l, h) - clean.loss;
            v.importance_mode = ablation_mode_name(job.mode);
            const std::vector<bool> rep = repeated_pairs(ids);
            v.n = int(ids.size());
            v.base_loss = clean.loss;
            v.base_repeat_loss = masked_mean(clean.token_loss, rep);
            v.repeat_count = int(std::count(rep.begin(), rep.end(), true));
            v.bars = top_bars(clean.last_logits, clean.last_logits, tok);
            v.for_text = job.text;
            // Each head's Δ repeat loss too, where a whole forward per head is cheap (the sweep above
            // resumes mid-model and reports only the text's loss).
            const ModelSpec& s = model.spec;
            if (v.repeat_count > 0 && s.n_layer * s.n_head <= kRepeatSweepHeads) {
                v.importance_repeat.assign(std::size_t(s.n_layer),
                                           std::vector<double>(std::size_t(s.n_head)));
                for (int l = 0; l < s.n_layer; ++l)
                    for (int h = 0; h < s.n_head; ++h)
                        v.importance_repeat[std::size_t(l)][std::size_t(h)] =
                            masked_mean(run_ablated(model, clean, {{l, h}}, job.mode, o).token_loss, rep) -
                            v.base_repeat_loss;
            }
            v.importance_ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            break;
        }
        case Ablate: {
            const std::vector<int> ids = encode(job.text, "the text");
            const CleanRun clean = clean_run(model, ids, o);
            const InterventionResult ab = run_ablated(model, clean, job.heads, job.mode, o);
            v.loss = ab.loss;
            v.repeat_loss = masked_mean(ab.token_loss, repeated_pairs(ids));
            v.bars = top_bars(ab.last_logits, clean.last_logits, tok);
            break;
        }
        case Patch: {
            const std::vector<int> a = encode(job.clean, "the clean text"),
                                   b = encode(job.corrupt, "the corrupt text");
            if (a.size() != b.size())
                throw Error("the clean text is " + std::to_string(a.size()) +
                            " tokens and the corrupt text " + std::to_string(b.size()) +
                            ": patching needs the same number of tokens");
            const int answer = single_token(tok, job.answer, "the answer");
            const int wrong = single_token(tok, job.wrong, "the wrong answer");
            const CleanRun ca = clean_run(model, a, o), cb = clean_run(model, b, o);
            const PatchSweep ps = patch_sweep(model, ca, cb, answer, wrong, o);
            v.m_clean = ps.m_clean;
            v.m_corrupt = ps.m_corrupt;
            v.patched.assign(std::size_t(ps.patched_fraction.rows()),
                             std::vector<double>(std::size_t(ps.patched_fraction.cols())));
            for (Eigen::Index l = 0; l < ps.patched_fraction.rows(); ++l)
                for (Eigen::Index h = 0; h < ps.patched_fraction.cols(); ++h)
                    v.patched[std::size_t(l)][std::size_t(h)] = ps.patched_fraction(l, h);
            break;
        }
        case Attribute: {
            const std::vector<int> ids = encode(job.text, "the text");
            const CleanRun clean = clean_run(model, ids, o);
            Eigen::Index best = 0;
            clean.last_logits.maxCoeff(&best);
            const int target = job.target >= 0 && job.target < model.spec.vocab_size ? job.target : int(best);
            const Attribution at = direct_logit_attribution(model, clean, target);
            v.target = target;
            v.target_text = tok.token_label(target);
            v.target_logit = at.logit;
            v.parts_sum = at.parts_sum;
            for (const AttributionPart& p : at.parts) v.parts.push_back({p.name, p.value});
            for (const LensRow& row : logit_lens(model, clean, 5)) {
                InterventionsUi::LensRow lr;
                lr.layer = row.layer < 0 ? "embed" : std::to_string(row.layer);
                for (std::size_t k = 0; k < row.ids.size(); ++k)
                    lr.top.push_back({tok.token_label(row.ids[k]), row.probs[k]});
                v.lens.push_back(std::move(lr));
            }
            break;
        }
        default:
            break;
    }
    return r;
}

// --- the GUI thread's side --------------------------------------------------------------------------

void InterventionsWorker::frame(AppState& state, const LoadedModel* model, bool wanted, double now) {
    InterventionsUi& iv = state.interventions;
    if (!model || !state.model.active) {
        was_wanted_ = false;
        return;
    }
    if (model->dir != model_dir_) {  // another model: nothing of the last one applies
        const InterventionsUi fresh;
        iv = fresh;
        requested_ = {};
        base_bars_.clear();
        model_dir_ = model->dir;
    }
    if (iv.clean_text.empty()) iv.clean_text = state.model.text;
    if (wanted && !was_wanted_) {
        opened_at_ = now;
        if (iv.importance.empty() || iv.for_text != state.model.text) iv.importance_shown_ms = -1;
    }
    was_wanted_ = wanted;

    // What the current choices need, each kind's request key.
    std::vector<HeadRef> heads;
    for (const std::string& h : iv.ablated) {
        try {
            heads.push_back(parse_head(h, model->weights->spec));
        } catch (const std::exception&) {  // (a head of another model: dropped below)
        }
    }
    auto make = [&](Kind kind) {
        Job j;
        j.kind = kind;
        j.model = *model;
        j.text = state.model.text;
        j.mode = iv.mean_mode ? AblationMode::Mean : AblationMode::Zero;
        j.heads = heads;
        j.clean = iv.clean_text;
        j.corrupt = iv.corrupt_text;
        j.answer = iv.answer;
        j.wrong = iv.wrong;
        j.target = iv.target;
        return j;
    };
    std::array<std::optional<Job>, kKinds> want;
    want[Base] = make(Base);
    if (!heads.empty()) want[Ablate] = make(Ablate);
    if (iv.patching && !iv.corrupt_text.empty() && !iv.answer.empty() && !iv.wrong.empty())
        want[Patch] = make(Patch);
    want[Attribute] = make(Attribute);

    // Finished results that still answer the current choices.
    std::vector<Result> done;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        done.swap(results_);
    }
    for (Result& r : done) {
        if (!want[r.kind] || key_of(*want[r.kind]) != r.key) continue;  // the choices moved on
        InterventionsUi& v = r.values;
        if (r.kind == Patch) {
            iv.patch_error = r.error;
            if (r.error.empty()) {
                iv.m_clean = v.m_clean;
                iv.m_corrupt = v.m_corrupt;
                iv.patched = std::move(v.patched);
                iv.patch_for = iv.clean_text + " | " + iv.corrupt_text;
            }
            continue;
        }
        iv.error = r.error;
        if (!r.error.empty()) continue;
        if (r.kind == Base) {
            iv.for_text = v.for_text;
            iv.n = v.n;
            iv.base_loss = v.base_loss;
            iv.base_repeat_loss = v.base_repeat_loss;
            iv.repeat_count = v.repeat_count;
            iv.importance = std::move(v.importance);
            iv.importance_repeat = std::move(v.importance_repeat);
            iv.importance_ms = v.importance_ms;
            iv.importance_mode = v.importance_mode;
            base_bars_ = std::move(v.bars);
            if (heads.empty()) {
                iv.loss = iv.base_loss;
                iv.repeat_loss = iv.base_repeat_loss;
                iv.bars = base_bars_;
            }
            if (wanted && iv.importance_shown_ms < 0) iv.importance_shown_ms = (now - opened_at_) * 1000.0;
        } else if (r.kind == Ablate) {
            iv.loss = v.loss;
            iv.repeat_loss = v.repeat_loss;
            iv.bars = std::move(v.bars);
        } else if (r.kind == Attribute) {
            iv.target_text = v.target_text;
            iv.target_logit = v.target_logit;
            iv.parts_sum = v.parts_sum;
            iv.parts = std::move(v.parts);
            iv.lens = std::move(v.lens);
        }
    }
    // Restored to no heads: the unablated values again, at once.
    if (heads.empty() && !requested_[Ablate].empty()) {
        requested_[Ablate].clear();
        iv.loss = iv.base_loss;
        iv.repeat_loss = iv.base_repeat_loss;
        iv.bars = base_bars_;
    }
    if (wanted)
        for (int k = 0; k < kKinds; ++k) {
            if (!want[std::size_t(k)]) continue;
            const std::string key = key_of(*want[std::size_t(k)]);
            if (key != requested_[std::size_t(k)]) {
                requested_[std::size_t(k)] = key;
                submit(std::move(*want[std::size_t(k)]));
            }
        }
    iv.busy = busy();
    if (iv.busy) state.redraw_soon = true;
}

}  // namespace attnviz::app
