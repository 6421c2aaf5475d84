#include "app/model_session.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>

#include "app/compute_worker.hpp"
#include "app/seq2seq_run.hpp"
#include "app/settings.hpp"
#include "core/error.hpp"
#include "core/model_trace.hpp"
#include "core/sampling.hpp"
#include "io/cli.hpp"
#include "io/files.hpp"
#include "io/model_loader.hpp"
#include "io/story_grammar.hpp"

namespace attnviz::app {

namespace {

std::string base_name(std::string dir) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const auto slash = dir.rfind('/');
    return slash == std::string::npos ? dir : dir.substr(slash + 1);
}

std::string mib(std::uint64_t bytes) {
    return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

}  // namespace

LoadedModel load_model_folder(const std::string& dir, const ProgressFn& progress) {
    progress("reading config", 0.05f);
    require_model_folder(dir);
    parse_model_config(read_file(dir + "/config.json", 1u << 20), base_name(dir) + "/config.json");
    progress("mapping weights", 0.2f);
    auto weights = std::make_shared<const ModelWeights>(load_model_dir(dir));
    progress("loading tokenizer", 0.85f);
    LoadedModel m;
    m.tokenizer = Tokenizer::load_dir(dir);
    if (auto grammar = read_story_grammar(dir, &m.grammar_problem))
        m.grammar = std::make_shared<const StoryWords>(std::move(*grammar));
    const ModelSpec& s = weights->spec;
    auto vocab = std::make_shared<std::vector<std::string>>();
    vocab->reserve(std::size_t(s.vocab_size));
    for (int id = 0; id < s.vocab_size; ++id) vocab->push_back(m.tokenizer->token_label(id));
    m.vocab = std::move(vocab);
    m.weights = std::move(weights);
    m.dir = dir;
    // (an encoder–decoder: "2 + 2 layers", the encoder's and the decoder's)
    m.name = base_name(dir) + " · " + s.architecture + " (" +
             (s.encoder_decoder ? std::to_string(s.s2s.n_encoder_layer) + " + " : std::string()) +
             std::to_string(s.n_layer) + " layers × " + std::to_string(s.n_head) + " heads)";
    progress("ready", 1.0f);
    return m;
}

std::pair<std::string, int> mask_token_of(const Tokenizer& tokenizer) {
    for (const char* t : {"[MASK]", "<mask>"})
        if (const std::optional<int> id = tokenizer.token_id(t)) return {t, *id};
    return {"", -1};
}

ModelRun run_model_on_text(const LoadedModel& model, const std::string& text, int layer, int threads,
                           const std::atomic<bool>* cancel, std::uint64_t keep_all_bytes) {
    return run_model_on_input(model, TextInput{text, "", 0}, layer, threads, cancel, keep_all_bytes);
}

ModelRun run_model_on_input(const LoadedModel& model, const TextInput& input, int layer, int threads,
                            const std::atomic<bool>* cancel, std::uint64_t keep_all_bytes) {
    const ModelSpec& s = model.weights->spec;
    const bool encoder = is_encoder(s);
    ModelRun r;
    // with [CLS]/<s>... as the model wants; an encoder's pair with its segments
    const Tokenizer::ModelInput mi = encoder && !input.text_b.empty()
                                         ? model.tokenizer->encode_pair_for_model(input.text, input.text_b)
                                         : model.tokenizer->encode_for_model(input.text);
    r.ids = mi.ids;
    std::vector<int> types;
    if (encoder && s.type_vocab > 1) {
        types = mi.type_ids;
        for (int& t : types) t = std::min(t, s.type_vocab - 1);
    }
    if (r.ids.empty()) throw TextError("the text gives no tokens: type something");
    const int n = int(r.ids.size());
    if (n > s.max_positions)
        throw Error(std::to_string(n) + " tokens are more than the model's " +
                    std::to_string(s.max_positions) + " positions");
    check_ids_in_vocab(*model.tokenizer, r.ids, s.vocab_size);
    ModelRunOptions o;
    o.keep_layers = true;
    o.all_logits = encoder;  // an encoder's guesses at every [MASK]
    o.rollout = true;
    o.threads = threads;
    o.cancel = cancel;
    const std::uint64_t all = model_forward_bytes(s, n, o);
    if (all > keep_all_bytes || all + model.weights->weight_bytes > kModelMemoryLimit) {
        o.keep_heads.assign(std::size_t(s.n_layer), false);
        o.keep_heads[std::size_t(std::clamp(layer, 0, s.n_layer - 1))] = true;
        r.note = "n = " + std::to_string(n) + ": all " + std::to_string(s.n_head) + " heads of layer " +
                 std::to_string(layer) + " kept; the other layers summarised (residual norms, rollout) — " +
                 "every layer's heads would need " + mib(all);
    }
    const std::uint64_t need = model_forward_bytes(s, n, o) + model.weights->weight_bytes;
    if (need > kModelMemoryLimit)
        throw Error(std::to_string(n) + " tokens need " + mib(need) +
                    " with the weights, over the 3 GiB limit; shorten the text");
    r.kept_heads = o.keep_heads.empty() ? std::vector<bool>(std::size_t(s.n_layer), true) : o.keep_heads;
    r.forward = std::make_shared<const ModelForward>(run_model(*model.weights, r.ids, types, o));
    auto tokens = std::make_shared<std::vector<std::string>>();
    for (int id : r.ids) tokens->push_back(model.tokenizer->token_label(id));
    r.tokens = std::move(tokens);
    if (encoder) {
        const int mask_id = mask_token_of(*model.tokenizer).second;
        for (int i = 0; i < n; ++i)
            if (r.ids[std::size_t(i)] == mask_id) r.mask_positions.push_back(i);
        if (!r.mask_positions.empty())
            r.logits_row = r.mask_positions[std::size_t(
                input.mask_choice >= 0 && input.mask_choice < int(r.mask_positions.size()) ? input.mask_choice
                                                                                           : 0)];
    }
    for (int l = 0; l < s.n_layer; ++l)
        r.layers.push_back(std::make_shared<const Trace>(
            model_layer_trace(s, r.forward, l, r.tokens, model.weights, model.vocab, r.logits_row)));
    return r;
}

ModelSession::ModelSession(int threads, LoadFn load) : load_fn_(std::move(load)), threads_(threads) {
    if (!load_fn_) load_fn_ = load_model_folder;
    thread_ = std::thread([this] { thread_main(); });
}

ModelSession::~ModelSession() {
    shutdown();
}

void ModelSession::shutdown() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        cancel_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void ModelSession::load(const std::string& dir) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_load_ = dir;
        load_result_.reset();  // a finished load not yet taken is not wanted either
        ++load_generation_;
        progress_ = {true, "waiting", 0.0f};
    }
    wake_.notify_all();
}

void ModelSession::cancel_load() {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_load_.reset();
    load_result_.reset();
    ++load_generation_;
    progress_ = {};
}

ModelSession::Progress ModelSession::progress() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return progress_;
}

std::optional<ModelSession::LoadResult> ModelSession::poll_load() {
    std::lock_guard<std::mutex> lock(mutex_);
    auto r = std::move(load_result_);
    load_result_.reset();
    return r;
}

std::uint64_t ModelSession::run(const LoadedModel& model, const std::string& text, int layer,
                                const std::string& target) {
    return run(model, TextInput{text, "", 0}, layer, target);
}

std::uint64_t ModelSession::run(const LoadedModel& model, const TextInput& input, int layer,
                                const std::string& target) {
    std::uint64_t id;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        id = ++next_id_;
        pending_run_ = RunRequest{id, model, input, layer, target};
        cancel_ = true;  // the running one is stale now
    }
    wake_.notify_all();
    return id;
}

std::optional<ModelSession::RunResult> ModelSession::poll_run() {
    std::lock_guard<std::mutex> lock(mutex_);
    auto r = std::move(run_result_);
    run_result_.reset();
    return r;
}

bool ModelSession::busy() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return working_ || pending_load_ || pending_run_;
}

bool ModelSession::wait_idle(double timeout_seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    return idle_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                          [&] { return !working_ && !pending_load_ && !pending_run_; });
}

void ModelSession::cancel_runs() {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_run_.reset();
    run_result_.reset();
    ++next_id_;  // a result still running is stale
    cancel_ = true;
}

void ModelSession::thread_main() {
    lower_priority_of_this_thread("attnviz-model");
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stop_ || pending_load_ || pending_run_; });
        if (stop_) return;
        working_ = true;
        if (pending_load_) {
            const std::string dir = *pending_load_;
            pending_load_.reset();
            const std::uint64_t generation = load_generation_;
            lock.unlock();
            LoadResult result;
            // Thrown from the progress callback once the load is no longer wanted (cancelled, replaced
            // or the session closing): the load stops at its next phase instead of running to its end. Not a
            // std::exception, so no loader's own handler mistakes it for a bad file.
            struct Abandoned {};
            try {
                result.model = load_fn_(dir, [&](const char* phase, float fraction) {
                    std::lock_guard<std::mutex> g(mutex_);
                    if (stop_ || generation != load_generation_) throw Abandoned{};
                    progress_ = {true, phase, fraction};
                });
            } catch (const Abandoned&) {
                result = {};  // dropped below: the generation has moved on
            } catch (const std::exception& e) {
                result.error = one_line(e.what());
            }
            lock.lock();
            if (generation == load_generation_) {
                progress_ = {};
                load_result_ = std::move(result);
            }  // else: cancelled or replaced meanwhile; a newer load (if any) reports its own progress
        } else {
            RunRequest req = std::move(*pending_run_);
            pending_run_.reset();
            cancel_ = false;
            lock.unlock();
            RunResult result;
            result.request = req.id;
            const auto t0 = std::chrono::steady_clock::now();
            bool cancelled = false;
            try {
                result.run =
                    req.model.weights->spec.encoder_decoder
                        ? run_seq2seq_on_text(req.model, req.input.text, req.target, threads_, &cancel_)
                        : run_model_on_input(req.model, req.input, req.layer, threads_, &cancel_);
            } catch (const Cancelled&) {
                cancelled = true;
            } catch (const std::exception& e) {
                result.error = one_line(e.what());
            }
            result.ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            lock.lock();
            if (!cancelled && req.id == next_id_) run_result_ = std::move(result);
        }
        working_ = false;
        if (!pending_load_ && !pending_run_) idle_.notify_all();
    }
}

// --- the GUI thread's side ----------------------------------------------------------------------

void ModelSession::start(AppState& state, Startup startup) {
    startup_ = std::move(startup);
    if (startup_.model_dir.empty()) return;
    state.model.resume = {};  // --model DIR replaces the workspace's model
    state.model.open_request = startup_.model_dir;
    startup_pending_ = true;
}

ModelSession::FrameEvents ModelSession::frame(AppState& state) {
    FrameEvents ev;
    ModelUi& m = state.model;
    if (m.cancel_load) {
        m.cancel_load = false;
        cancel_load();
        m.resume = {};
        startup_pending_ = false;
    }
    if (!m.open_request.empty()) {
        load(m.open_request);
        m.open_request.clear();
    }
    if (m.close_request) {
        const bool for_scene = m.close_for_scene;
        m.close_request = m.close_for_scene = false;
        const int pinned = state.pinned_row;  // a scene opened meanwhile set its own pinned row
        leave_model(state);
        if (for_scene) state.pinned_row = pinned;
        ev.left_model = true;
        if (!for_scene) {
            detach_scene_model(state);  // the scene's title and note were about the model
            state.set_status("Back to the single layer: the random weights and every knob", false);
        }
    }
    const Progress p = progress();
    m.loading = p.loading;
    m.load_phase = p.phase;
    m.load_fraction = p.fraction;
    if (auto loaded = poll_load()) {
        const bool at_start = startup_pending_;
        startup_pending_ = false;
        if (loaded->model) {
            const std::string grammar_problem = loaded->model->grammar_problem;
            enter_model(state, std::move(*loaded->model));
            if (!grammar_problem.empty()) state.set_status(grammar_problem, true);
            if (at_start && startup_.layer) {
                if (*startup_.layer >= m.n_layer) {
                    ev.exit_code = 2;
                    ev.exit_message = "--layer: " + std::to_string(*startup_.layer) +
                                      " is out of range; this model has layers 0 to " +
                                      std::to_string(m.n_layer - 1);
                    return ev;
                }
                m.layer = *startup_.layer;
            }
            if (at_start && startup_.view) state.view = *startup_.view;
            // A flag the opened model has no use for is said, not silently dropped.
            const std::vector<std::string>& unused =
                !at_start                                       ? std::vector<std::string>{}
                : !m.seq2seq && !startup_.seq2seq_flags.empty() ? startup_.seq2seq_flags
                : !m.encoder && !startup_.encoder_flags.empty() ? startup_.encoder_flags
                                                                : std::vector<std::string>{};
            if (!unused.empty()) {
                const bool for_s2s = unused == startup_.seq2seq_flags;
                const std::string what = unused.front() +
                                         (for_s2s ? " applies to t5 / bart (encoder–decoder) models"
                                                  : " applies to encoders (bert, roberta, distilbert)") +
                                         "; " + m.name + " is not one";
                if (startup_.batch) {
                    ev.exit_code = 2;
                    ev.exit_message = what;
                    return ev;
                }
                state.set_status(what + ": ignored", true);
            }
            resume_model(state);
        } else {
            // A scene's model that cannot be opened: its title and note are not about the single layer
            // that stays on screen.
            if (!m.resume.dir.empty() && m.resume.dir == state.scene_model && !m.active)
                detach_scene_model(state);
            m.resume = {};  // the workspace's model is gone: the single layer stays
            // The same line the command line prints; the current model (or the single layer) stays.
            state.set_status(loaded->error, true);
            if (at_start && startup_.batch) {
                ev.exit_code = 1;
                ev.exit_message = loaded->error;
            }
        }
    }
    if (!m.active || !model_) return ev;
    if (m.encoder && state.view == MainView::Interventions) state.view = MainView::Model;

    if (m.append_request != 0) {
        const bool sampled = m.append_request == 2;
        m.append_request = 0;
        append_next_token(state, sampled);
    }
    if (m.seq2seq) m.n_layer = m.family == AttnFamily::Encoder ? m.n_encoder_layer : m.n_decoder_layer;
    m.layer = std::clamp(m.layer, 0, std::max(0, m.n_layer - 1));
    const bool layer_kept = run_ && (m.seq2seq || (std::size_t(m.layer) < run_->kept_heads.size() &&
                                                   run_->kept_heads[std::size_t(m.layer)]));
    if (!run_submitted_ || m.text != run_text_ || (m.seq2seq && m.target != run_target_) ||
        (m.encoder && (m.text_b != run_text_b_ || m.mask_choice != run_mask_choice_)) ||
        (!layer_kept && m.layer != run_layer_))
        submit_model_run(state);
    else if (run_ && layer_kept && (m.layer != shown_layer_ || int(m.family) != shown_family_))
        show_model_layer(state);

    if (auto r = poll_run()) {
        state.compute_ms = r->ms;
        if (r->run) {
            // A landing that waited for this run (a scene on the open model, with another text).
            if (!m.resume.dir.empty() && m.resume.dir == m.dir && r->request == next_id_) resume_model(state);
            run_ = std::move(*r->run);
            m.n = int(run_->ids.size());
            m.mask_positions = run_->mask_positions;
            m.kept_heads = run_->kept_heads;
            m.note = run_->note;
            ++m.run_generation;
            m.n_source = int(run_->source_ids.size());
            shown_layer_ = -1;
            show_model_layer(state);
            if (m.pin_new_row && m.seq2seq) {  // the row that wrote the appended token ("→ token")
                m.pin_new_row = false;
                state.pinned_row = std::max(0, m.n - 2);
            }
            top_temperature_ = -1;
            ev.run_done = true;
        } else {
            state.set_status(r->error, true);
            ev.run_error = r->error;
        }
    }
    if (run_ && (m.temperature != top_temperature_ || m.top_k != top_k_ || m.top_p != top_p_))
        update_next_tokens(state);
    return ev;
}

void ModelSession::enter_model(AppState& state, LoadedModel model) {
    ModelUi& m = state.model;
    const ModelSpec& s = model.weights->spec;
    const bool same_shape = m.active && m.n_layer == s.n_layer && m.n_head == s.n_head;
    m.active = true;
    m.run_failed = false;
    m.name = model.name;
    m.dir = model.dir;
    m.description = model.tokenizer->description();
    m.n_layer = s.n_layer;
    m.n_head = s.n_head;
    m.n_kv_head = s.n_kv_head;
    m.seq2seq = s.encoder_decoder;
    m.n_encoder_layer = s.encoder_decoder ? s.s2s.n_encoder_layer : 0;
    m.n_decoder_layer = s.n_layer;
    if (m.seq2seq) m.n_layer = m.family == AttnFamily::Encoder ? m.n_encoder_layer : m.n_decoder_layer;
    m.n_source = 0;
    m.pin_new_row = false;
    shown_family_ = -1;
    m.encoder = is_encoder(s);
    m.has_head = s.unembeds;
    m.mask_token = mask_token_of(*model.tokenizer).first;
    m.mask_positions.clear();
    m.mask_choice = 0;
    m.top.clear();
    if (!same_shape) {
        // (an encoder–decoder opens on its last layer, where a translation's alignment forms)
        m.layer = m.seq2seq ? std::max(0, m.n_layer - 1) : 0;
        state.head = 0;
    }
    if (state.view == MainView::Compare) state.view = MainView::Stage;
    model_ = std::move(model);
    run_.reset();
    if (!startup_.batch) {  // (a screenshot run is a batch job: it leaves the settings alone)
        remember_recent(state.recent_files, m.dir);  // File ▸ Open recent lists model folders too
        (void)save_settings(state);
    }
    run_submitted_ = false;
    state.pinned_row = -1;
    state.set_status("Opened " + m.name + " from " + m.dir, false);
    // The word classes of a story model (head labels: adjective→noun), from the grammar the folder's
    // loading read (a broken file was reported there: the model is labelled without them).
    m.grammar.reset();
    if (model_->grammar)
        m.grammar = std::make_shared<const WordClassTable>(word_class_table(*model_->grammar));
    // A model trained here on its own small language cannot read the app's default English sentence:
    // opened without a text of its own, it reads the seeds' sentence of that language instead.
    if (m.grammar && m.text == ModelUi::kDefaultText)
        m.text = "a fluffy blue creature roamed the verdant forest.";
    // An encoder fills a mask: the default sentence gets one to fill.
    if (m.encoder && !m.mask_token.empty() && m.text == ModelUi::kDefaultText)
        m.text = "The cat sat on the " + m.mask_token + " because it was warm.";
}

void ModelSession::resume_model(AppState& state) {
    ModelUi& m = state.model;
    const ModelUi::Resume r = m.resume;
    m.resume = {};
    if (r.dir.empty() || r.dir != m.dir) return;  // another model was opened meanwhile
    m.layer = std::clamp(r.layer, 0, std::max(0, m.n_layer - 1));
    state.head = std::clamp(r.head, 0, std::max(0, m.n_head - 1));
    state.pinned_row = r.pinned_row;
    if (r.model_view) state.view = MainView::Model;
    resume_stage_ = r.stage;  // once the first run is on screen (show_model_layer)
}

void ModelSession::leave_model(AppState& state) {
    cancel_runs();
    resume_stage_.clear();
    model_.reset();
    run_.reset();
    run_submitted_ = false;
    shown_layer_ = -1;
    const std::string text = state.model.text, text_b = state.model.text_b, target = state.model.target;
    const AttnFamily family = state.model.family;
    state.model = ModelUi{};
    state.model.text = text;
    state.model.text_b = text_b;
    state.model.target = target;
    state.model.family = family;
    shown_family_ = -1;
    state.model_layers.clear();
    state.trace = nullptr;
    ++state.trace_generation;
    state.pinned_row = -1;
    if (state.view == MainView::Model || state.view == MainView::Interventions) state.view = MainView::Stage;
}

void ModelSession::submit_model_run(const AppState& state) {
    const ModelUi& m = state.model;
    run(*model_, TextInput{m.text, m.encoder ? m.text_b : std::string(), m.mask_choice}, m.layer, m.target);
    run_text_b_ = m.encoder ? m.text_b : std::string();
    run_mask_choice_ = m.mask_choice;
    run_text_ = state.model.text;
    run_target_ = state.model.target;
    run_layer_ = state.model.layer;
    run_submitted_ = true;
}

void ModelSession::show_model_layer(AppState& state) {
    // An encoder–decoder's encoder family shows the encoder's layers; the decoder's traces hold both
    // its self-attention and its cross-attention.
    const ModelUi& m = state.model;
    const bool encoder = m.seq2seq && m.family == AttnFamily::Encoder;
    const std::vector<std::shared_ptr<const Trace>>& layers = encoder ? run_->encoder_layers : run_->layers;
    if (layers.empty()) return;
    state.model_layers.assign(layers.size(), nullptr);
    for (std::size_t l = 0; l < layers.size(); ++l)
        if (encoder || run_->kept_heads[l]) state.model_layers[l] = layers[l];
    const std::size_t layer = std::min(std::size_t(std::max(0, m.layer)), layers.size() - 1);
    const bool cross_before =
        current_stage_name(state).rfind("cross_", 0) == 0;  // (before the trace changes)
    accept_trace(state, layers[layer], state.compute_ms);
    shown_layer_ = int(layer);
    if (m.seq2seq && int(m.family) != shown_family_) {
        // The family's own attention stage on a change of family (the cross_ stages are the decoder's).
        if (m.family == AttnFamily::Cross && current_stage_name(state).rfind("cross_", 0) != 0)
            select_stage(state, "cross_weights");
        else if (m.family != AttnFamily::Cross && (cross_before || shown_family_ < 0))
            select_stage(state, "weights");
        if (shown_family_ >= 0 &&
            (m.family == AttnFamily::Encoder) != (shown_family_ == int(AttnFamily::Encoder)))
            state.pinned_row = -1;  // rows are other tokens now
        shown_family_ = int(m.family);
    }
    if (!resume_stage_.empty()) {
        if (!select_stage(state, resume_stage_))
            state.set_status("this model's layer has no stage '" + resume_stage_ + "'", true);
        resume_stage_.clear();
    }
}

void ModelSession::update_next_tokens(AppState& state) {
    ModelUi& m = state.model;
    const Mat& logits = run_->forward->logits;  // [1, V], an encoder's [n, V]
    top_temperature_ = m.temperature;
    top_k_ = m.top_k;
    top_p_ = m.top_p;
    m.top.clear();
    // An encoder ranks the tokens for its chosen [MASK]; with no mask (or no head) there is nothing to rank.
    const int row = m.encoder ? run_->logits_row : int(logits.rows()) - 1;
    if (row < 0 || row >= logits.rows()) return;
    // The same distribution "Append sampled" draws from (the knobs clamped to the sliders' ranges).
    const SamplingDistribution d =
        sampling_distribution(logits.row(row), std::max(1e-3, double(m.temperature)), std::max(0, m.top_k),
                              std::clamp(double(m.top_p), 1e-6, 1.0));
    for (std::size_t r = 0; r < std::min<std::size_t>(10, d.order.size()); ++r) {
        const int id = d.order[r];
        m.top.push_back({id, model_->tokenizer->token_label(id), double(d.tempered(id)), double(d.model(id)),
                         double(d.sampling(id))});
    }
    m.sample_kept = d.kept;
    m.sample_cut = d.cut == SamplingCut::TopK ? "top-k" : d.cut == SamplingCut::TopP ? "top-p" : "";
}

void ModelSession::append_next_token(AppState& state, bool sampled) {
    if (!run_ || run_text_ != state.model.text) return;  // the ranking belongs to an older text
    ModelUi& m = state.model;
    if (m.seq2seq && run_target_ != m.target) return;
    const Mat& logits = run_->forward->logits;  // [1, V], an encoder's [n, V]
    SamplingOptions o;
    o.temperature = sampled ? double(m.temperature) : 0.0;
    o.top_k = sampled ? m.top_k : 0;
    o.top_p = sampled ? double(m.top_p) : 1.0;
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(sample_rng_);
    if (m.encoder) {
        fill_mask(state, logits, o, u);
        return;
    }
    const int id = sample_next_token(logits.row(logits.rows() - 1), o, u);
    if (m.seq2seq) {
        // The decoder's next token goes on the target; the cross-attention row that wrote it is pinned
        // once the grown target has run.
        const std::string label = model_->tokenizer->token_label(id);
        if (id == model_->weights->spec.s2s.eos) {
            state.set_status("The model ends the target here (\"" + label + "\", its end-of-sequence token)",
                             false);
            return;
        }
        m.last_appended = model_->tokenizer->decode_labelled({id});
        m.target += m.last_appended;
        m.pin_new_row = true;
        if (m.family == AttnFamily::Encoder) m.family = AttnFamily::Cross;
        state.set_status(std::string(sampled ? "Sampled" : "Appended the most likely token") + " \"" + label +
                             "\" to the target; the cross-attention row that wrote it is pinned",
                         false);
        return;
    }
    m.last_appended = model_->tokenizer->decode_labelled({id});
    m.text += m.last_appended;
    state.set_status(std::string(sampled ? "Sampled" : "Appended the most likely token") + " \"" +
                         model_->tokenizer->token_label(id) + "\"",
                     false);
}

}  // namespace attnviz::app

namespace attnviz::app {

namespace {

/// Byte offset of the k-th (0-based) occurrence of `needle` in `text`, or npos.
std::size_t nth_occurrence(const std::string& text, const std::string& needle, int k) {
    std::size_t at = text.find(needle);
    for (int i = 0; i < k && at != std::string::npos; ++i) at = text.find(needle, at + needle.size());
    return at;
}

}  // namespace

void ModelSession::fill_mask(AppState& state, const Mat& logits, const SamplingOptions& o, double u) {
    ModelUi& m = state.model;
    if (run_text_b_ != m.text_b || run_->logits_row < 0) return;
    const int id = sample_next_token(logits.row(run_->logits_row), o, u);
    // The chosen mask is the k-th of text A's masks, or of text B's after them.
    const int k = std::clamp(m.mask_choice, 0, int(run_->mask_positions.size()) - 1);
    int in_a = 0;
    for (std::size_t at = m.text.find(m.mask_token); at != std::string::npos;
         at = m.text.find(m.mask_token, at + m.mask_token.size()))
        ++in_a;
    std::string& text = k < in_a ? m.text : m.text_b;
    const std::size_t at = nth_occurrence(text, m.mask_token, k < in_a ? k : k - in_a);
    const std::string label = model_->tokenizer->token_label(id);
    if (at == std::string::npos || m.mask_token.empty()) {
        state.set_status("The mask is not in the text as typed; the guess is \"" + label + "\"", false);
        return;
    }
    // "##ing" joins the word before it; "▁the" / " the" brings its own space.
    std::string piece = model_->tokenizer->decode_labelled({id});
    std::size_t start = at;
    if (label.rfind("##", 0) == 0) {
        piece = label.substr(2);
        while (start > 0 && text[start - 1] == ' ') --start;
    } else if (!piece.empty() && piece[0] == ' ' && start > 0 && text[start - 1] == ' ') {
        piece.erase(0, 1);
    }
    text.replace(start, at + m.mask_token.size() - start, piece);
    m.last_appended = piece;
    state.set_status(std::string(o.temperature > 0 ? "Filled the mask with a sampled"
                                                   : "Filled the mask with the most likely") +
                         " token \"" + label + "\"",
                     false);
}

}  // namespace attnviz::app
