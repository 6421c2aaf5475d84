// Everything the GUI knows, in one place: the Config being edited, the last computed Trace, and the
// cursor/selection state that stepping, hovering and exporting use. Panels read and edit it; only
// the compute worker produces traces. No OpenGL here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.hpp"
#include "core/trace.hpp"
#include "io/word_classes.hpp"

namespace attnviz {
struct Tour;  // io/tour.hpp
}

namespace attnviz::app {

/// Lines: BertViz's head view (app/panels/lines_view.cpp); Interventions: ablation, patching and
/// attribution on a real model (app/panels/interventions_panel.cpp).
enum class MainView { Stage, HeadsGrid, Compare, Model, Lines, Interventions };

/// An encoder–decoder's three attention families (t5, bart): the model, lines and stage views show one.
/// Encoder: the source's bidirectional self-attention; Decoder: the target's causal self-attention;
/// Cross: decoder→encoder attention (rows = target tokens, columns = source tokens).
enum class AttnFamily { Encoder, Decoder, Cross };
/// "encoder", "decoder", "cross" (the state log's and --family's names).
const char* family_name(AttnFamily f);
/// "en" or "zh": the state log's and settings.json's name of a UI language (View ▸ Language).
const char* language_code(TextLanguage l);
/// Sets *out from a code ("zh…" Chinese, "en…" English); false (and *out untouched) for anything else.
bool parse_language_code(const std::string& code, TextLanguage* out);

/// A real model opened with File ▸ Open model… or `--model DIR` (app/model_session.hpp runs it).
/// Panels read it and leave requests in it; ModelSession::frame() carries them out at the start of
/// the next frame (never while a panel draws).
struct ModelUi {
    bool active = false;  // a model is open and its layer is the trace on screen
    std::string name, dir, description;
    static constexpr const char* kDefaultText = "The cat sat on the mat because it";
    std::string text = kDefaultText;  // what the model reads (the text box)
    int layer = 0, n_layer = 0, n_head = 0, n_kv_head = 0, n = 0;
    // An encoder (BERT, RoBERTa, DistilBERT): the next-token panel fills a [MASK] instead.
    bool encoder = false;
    std::string text_b;               // the second text of a sentence pair ("" = one text)
    std::string mask_token;           // how the tokenizer writes its mask ("[MASK]", "<mask>"; "" = none)
    std::vector<int> mask_positions;  // the last run's [MASK] tokens (indices into its tokens)
    int mask_choice = 0;              // which of them the panel ranks (index into mask_positions)
    bool has_head = true;             // false: a bare encoder (BertModel) with no masked-LM head
    std::vector<bool> kept_heads;     // per layer: its per-head stages are in the last run
    /// Word classes of the folder's story_grammar.json (the head labels' adjective→noun; null: none).
    std::shared_ptr<const WordClassTable> grammar;
    std::string note;  // what is summarised at this length ("" = nothing)
    // Loading (File ▸ Open model…): phase and fraction for the progress bar.
    bool loading = false;
    std::string load_phase;
    float load_fraction = 0;
    // The next-token panel: sampling knobs and the last run's ranking.
    float temperature = 1.0f;
    int top_k = 0;       // 0 = off
    float top_p = 1.0f;  // 1 = off
    std::uint64_t seed = 1;
    struct Candidate {
        int id = 0;
        std::string text;
        double p = 0;         // softmax(logits / T)
        double p_model = 0;   // softmax(logits): the model's raw probability
        double p_sample = 0;  // the chance sampling draws it (after T, top-k, top-p; 0 = cannot)
    };
    std::vector<Candidate> top;  // the 10 most likely next tokens (core/sampling.hpp)
    int sample_kept = 0;         // how many tokens sampling can draw (the first sample_kept by logit)
    std::string sample_cut;      // what cut them: "top-k", "top-p" or "" (nothing)
    std::string last_appended;   // text of the last token appended
    // The workspace's model (app/workspace.cpp): the folder it reopens at start and where the learner
    // was in it. The model session applies it once that folder has loaded, and drops it when the load
    // fails, another model is opened or the model is closed.
    struct Resume {
        std::string dir;  // "" = nothing to resume
        int layer = 0, head = 0, pinned_row = -1;
        bool model_view = false;  // the layers x heads view was on screen
        std::string stage;        // the stage to land on once the first run is on screen ("" = keep)
    };
    Resume resume;
    // Requests from panels, dialogs and commands (ModelSession::frame() carries them out and clears them).
    std::string open_request;          // a folder to load
    bool close_request = false;        // back to the single layer
    bool close_for_scene = false;      // ... because a scene was opened (its "Opened" line stays)
    bool cancel_load = false;          // a model still loading must not replace the scene just opened
    int append_request = 0;            // 1 = greedy, 2 = sampled (an encoder: fill the chosen mask)
    std::uint64_t run_generation = 0;  // increments with every finished run
    bool run_failed = false;           // the last run failed (its line is in the status bar)
    // An encoder–decoder (t5, bart): `text` is the source (the encoder's input), `target` the decoder's
    // input after its start token ("" = the start token alone); the views show one attention family.
    bool seq2seq = false;
    std::string target;
    AttnFamily family = AttnFamily::Cross;
    int n_source = 0;  // the source's tokens in the last run
    int n_encoder_layer = 0, n_decoder_layer = 0;
    bool pin_new_row = false;  // a token was appended to the target: its cross-attention row gets pinned
};

/// The guided tour (io/tour.hpp; app/tour_player.hpp applies its steps, the Start here panel shows it).
struct TourUi {
    std::shared_ptr<const Tour> tour;  // null = no tour loaded
    int step = 0;                      // the step the learner is on (index into tour->steps)
    bool open = false;                 // the Start here panel is shown
    std::string lab_opened;            // the lab the applied step opened (the next step closes it)
    /// The workspace's tour (file, step, panel open), loaded by the shell at start without changing the
    /// restored view ("" = none).
    std::string resume_file;
    int resume_step = 0;
    bool resume_open = false;
};

/// The Interventions panel (app/panels/interventions_panel.cpp) on a real model: what the learner chose
/// and what the background runs (app/interventions_worker.hpp) found. Losses are NaN until known.
struct InterventionsUi {
    // --- choices ----------------------------------------------------------------------------------
    bool mean_mode = false;            // mean ablation (every row of z its mean over positions), else zero
    std::vector<std::string> ablated;  // heads knocked out together, "L.H", sorted
    bool patching = false;             // the patching tab is open
    std::string clean_text, corrupt_text, answer, wrong;  // patching: two texts, two single tokens
    int target = -1;  // the token attributed (id; -1 = the most likely next token)
    // --- results ----------------------------------------------------------------------------------
    struct Bar {
        int id = 0;
        std::string text;
        double p = 0, p_base = 0;  // with the heads ablated, and without (the ghost)
    };
    std::string for_text;  // the text the results below belong to ("" = none yet)
    int n = 0;             // its tokens
    double base_loss = 0, base_repeat_loss = 0, loss = 0, repeat_loss = 0;
    int repeat_count = 0;   // predictions that repeat an earlier pair of tokens (what induction copies)
    std::vector<Bar> bars;  // the ten most likely next tokens with the heads ablated
    std::vector<std::vector<double>>
        importance;  // [L][H] Δloss of each head ablated alone (empty: computing)
    std::vector<std::vector<double>>
        importance_repeat;            // [L][H] Δ repeat loss alike (small models with repeats)
    double importance_ms = 0;         // its background computation (wall ms)
    double importance_shown_ms = -1;  // from opening the panel to the grid on screen
    std::string importance_mode;      // "zero" / "mean": the mode the grid was computed in
    // patching (metric m = logit(answer) − logit(wrong) at the last position)
    double m_clean = 0, m_corrupt = 0;
    std::vector<std::vector<double>> patched;  // [L][H] (m_patched − m_corrupt) / (m_clean − m_corrupt)
    std::string patch_for;                     // the inputs the grid belongs to
    // direct logit attribution and the logit lens (the unablated run)
    std::string target_text;
    double target_logit = 0, parts_sum = 0;
    std::vector<std::pair<std::string, double>> parts;  // "embed", "L.H", "attn_bias.L", "mlp.L", "ln_f_bias"
    struct LensRow {
        std::string layer;                                // "embed", "0", "1", …
        std::vector<std::pair<std::string, double>> top;  // token, probability
    };
    std::vector<LensRow> lens;
    std::string error, patch_error;  // one line each ("" = none); the results above stay
    bool busy = false;
};

struct ViewStates;  // app/panels/view_state.hpp

struct AppState {
    // --- the document ----------------------------------------------------------------------
    Config config;                    // what the user is editing (may be invalid)
    std::vector<ConfigIssue> issues;  // validate(config); shown next to the offending control
    std::string scene_path;           // file the scene came from / was saved to ("" = built-in)
    std::string scene_title = "Built-in example";
    std::string scene_note;
    Config scene_config;  // the config as loaded from the scene: Reset returns here
    /// The model folder the scene opened ("" = none): its title and note describe that model while it
    /// is open; leaving it (Back to the single layer) leaves the scene too (detach_scene_model).
    std::string scene_model;

    // --- a real model (when model.active, `trace` is its current layer) --------------------------
    ModelUi model;
    /// Every kept layer's traces of the last run (index = layer; null where the heads were not kept),
    /// for the model view's grid.
    std::vector<std::shared_ptr<const Trace>> model_layers;

    // --- the guided tour -------------------------------------------------------------------------
    TourUi tour;
    InterventionsUi interventions;  // the Interventions panel (a real model only)

    // --- computed --------------------------------------------------------------------------
    std::shared_ptr<const Trace> trace;  // the trace on screen (last successful computation)
    std::uint64_t trace_generation = 0;  // increments whenever `trace` is replaced
    bool updating = false;               // a newer config is being computed right now
    double compute_ms = 0;               // wall time of the last finished computation

    // --- step-through: the cursor walks trace->stage_ids(head) ---------------------------------
    /// The stage on screen. Only its name is authoritative: cursor.layer and cursor.head are those of
    /// the last step and go stale when the head selector or the layer changes; read the whole
    /// StageId with current_stage_id(), which takes them from the trace on screen and `head`.
    StageId cursor;
    int head = 0;          // head shown for per-head stages
    bool playing = false;  // Play advances the cursor every play_seconds
    float play_seconds = 1.5f;
    double play_last_advance = 0;

    // --- interaction -----------------------------------------------------------------------
    MainView view = MainView::Stage;
    int pinned_row = -1;  // query row pinned by a click (-1 = none)
    int hover_row = -1, hover_col = -1;

    /// Per-view memory (zoom, choices); see app/panels/view_state.hpp. Reset on scene load.
    /// mutable: remembering a zoom is not a change of the document, and const views draw too.
    mutable std::shared_ptr<ViewStates> views;
    /// A text field has the keyboard (ImGui's WantTextInput), for the state log and scripts.
    bool text_input_active = false;
    /// Where ImGui saw the mouse this frame (window pixels; -1 when outside), for the state log.
    int mouse_x = -1, mouse_y = -1;
    /// The window's size this frame (ImGui's display size, in window pixels), for the state log.
    int window_w = 0, window_h = 0;

    // --- export ----------------------------------------------------------------------------
    std::string export_dir = "attnviz-exports";
    int export_scale = 2;  // 1, 2 or 4
    /// Scenes opened or saved and model folders opened lately, newest first (File ▸ Open recent;
    /// kept in settings.json).
    std::vector<std::string> recent_files;
    /// The desktop's file chooser is open (the shell copies it from its dialogs each frame), and which
    /// backend answered last ("portal", "zenity", "kdialog"; "" = none yet), for the state log.
    bool chooser_open = false;
    std::string chooser_backend;
    /// Path of the file the last successful export wrote (export functions set it; the status bar
    /// and `--state-log` report it).
    std::string last_export_path;

    // --- status bar ------------------------------------------------------------------------
    std::string status;  // last error or export path
    bool status_is_error = false;
    double frame_ms = 0;
    float ui_scale = 1.0f;
    /// View ▸ Language: the Explanation panel's language (English, or Chinese where a stage has it).
    /// Kept in settings.json; the first default follows the locale (chinese_locale).
    TextLanguage language = TextLanguage::English;
    // --- layout (View menu) -----------------------------------------------------------------
    bool presentation = false;     // F11: side panels, pipeline strip and status bar fold away
    bool show_controls = true;     // the left column (Ctrl+B)
    bool show_explanation = true;  // the right column, explanation + export (Ctrl+Alt+B)
    /// Set by a panel during a frame when it waits for something (a tooltip computed in the
    /// background): the main loop then draws the next frame without waiting for input. Cleared by
    /// the main loop every frame.
    bool redraw_soon = false;

    // --- settings (persisted in user_config_dir()/settings.json by the shell) ---------------------
    int compute_threads = 1;     // threads compute_trace may use; 1 leaves the other core to the GUI
    bool link_head_dims = true;  // d_k = d_v = d_model / h while set (the controls' "link" box)

    // --- requests from the command line ---------------------------------------------------------
    /// `--lab NAME`: the lab to open at start-up. draw_labs()/draw_labs_menu() open it and clear it.
    std::string requested_lab;
    std::vector<std::string> open_labs;  // canonical names of the lab windows open now (draw_labs keeps it)
    /// A stage to put the cursor on when the next trace arrives (restored workspace), else "".
    std::string requested_stage;

    // --- test hooks -----------------------------------------------------------------------------
    /// Screen rectangles (window pixels) of a few widgets, by name ("temperature", ...), so the GUI
    /// tests can click them from the app's own `--state-log` instead of guessing coordinates.
    struct WidgetRect {
        float x = 0, y = 0, w = 0, h = 0;
    };
    std::map<std::string, WidgetRect> widget_rects;
    /// Per heatmap (by widget name, "heatmap", "head_tile_3"): how many axis labels it drew this
    /// frame, how many were cut to fit ("5 o…") and every how many-th token is labelled.
    struct LabelStats {
        int shown = 0, cut = 0, stride = 1;
        int upright = 0, upright_small = 0;  // crowded one-character column labels stood upright
    };
    std::map<std::string, LabelStats> label_stats;
    /// The Training lab's run as the state log reports it ("training": status, step, cliff_step,
    /// timeline frame shown, ...); null while the lab has not run.
    nlohmann::json training_log;
    /// Text a lab shows that the font atlas must have glyphs for (the Training lab's probe tokens: a
    /// text's Chinese characters); the shell feeds it to the fonts each frame.
    std::string lab_glyph_text;

    void set_status(std::string text, bool is_error) {
        status = std::move(text);
        status_is_error = is_error;
    }
};

/// The model the scene opened was closed (Back to the single layer): the scene's title, note and path
/// described that model, not the random weights now on screen, so the document becomes an unsaved
/// single layer with the same text and knobs. Nothing happens when the scene opened no model.
void detach_scene_model(AppState& state);

/// The attention-weight stage the model and lines views draw: "cross_weights" for an encoder–decoder's
/// cross-attention, else "weights".
const char* attention_stage(const AppState& state);

/// Name of the stage under the cursor ("" when there is no trace).
std::string current_stage_name(const AppState& state);
/// The stage under the cursor for the selected head (nullptr when there is no trace).
const Stage* current_stage(const AppState& state);

// --- cursor helpers (the shell's step-through; pure, unit-tested) -------------------------------

/// The step-through list: trace->stage_ids(head) of the trace on screen (empty without a trace).
std::vector<StageId> stage_list(const AppState& state);
/// Number of stages in the step-through list (0 without a trace).
int stage_count(const AppState& state);
/// Position of the cursor in the step-through list (0 when its name is not in the list).
int stage_index(const AppState& state);
/// The stage under the cursor: {the trace's layer, name, head or -1}; a default StageId without a trace.
StageId current_stage_id(const AppState& state);
/// Puts the cursor on position `index` of the step-through list (clamped).
void set_stage_index(AppState& state, int index);
/// Moves the cursor by `delta` stages, clamped to the first/last stage.
void step_stage(AppState& state, int delta);
/// Puts the cursor on the stage called `name`; false (cursor unchanged) if the trace has none.
bool select_stage(AppState& state, const std::string& name);
/// True when the stage under the cursor exists once per head (Q, scores, weights, ...).
bool current_stage_is_per_head(const AppState& state);
/// Replaces the trace on screen with a newer one, keeping the cursor on the same stage name when
/// the new trace still has it (else clamped) and the head within 0..h-1.
void accept_trace(AppState& state, std::shared_ptr<const Trace> trace, double compute_ms);

/// The phase a stage belongs to, for grouping the pipeline strip:
/// "embed", "project", "score", "normalise" or "combine".
std::string stage_phase(const std::string& stage_name);

/// FNV-1a over the float bits of a matrix: changes whenever any value changes (for the state log).
std::uint64_t matrix_checksum(const Mat& M);

/// What is on screen (stage, head, temperature, weights checksum, export path, widget rectangles,
/// whether a text field has the keyboard, ...): written by `attnviz --state-log FILE` each time it
/// changes, and what `--script` waits on. The GUI tests read it.
nlohmann::json state_json(const AppState& state);
/// state_json as one line.
std::string state_json_line(const AppState& state);

}  // namespace attnviz::app
