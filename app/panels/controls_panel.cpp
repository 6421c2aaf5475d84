// The control panel: every knob of the attention layer. Each edit changes state.config at once; the
// shell validates it every frame and only sends valid configs to the compute worker. What is wrong
// is said in red right under the control concerned (the ConfigIssue's key), while the heatmaps keep
// showing the last good trace.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "app/fonts.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/view_state.hpp"
#include "io/npy.hpp"

namespace attnviz::app {

namespace {

const ImVec4 kIssueColour(1.0f, 0.42f, 0.38f, 1.0f);

// Shows the issues of the given keys (in red, wrapped) and remembers that they were shown, so the
// panel can list the rest at the top.
struct IssueShower {
    const std::vector<ConfigIssue>& issues;
    std::set<std::string> shown;
    const std::map<std::string, std::string>* refused = nullptr;  // values typed and not applied

    void show(std::initializer_list<const char*> keys) {
        for (const char* key : keys) {
            shown.insert(key);
            if (refused) {
                auto it = refused->find(key);
                if (it != refused->end()) {
                    ImGui::PushStyleColor(ImGuiCol_Text, kIssueColour);
                    ImGui::PushTextWrapPos(0.0f);
                    ImGui::TextUnformatted(("not applied: " + it->second).c_str());
                    ImGui::PopTextWrapPos();
                    ImGui::PopStyleColor();
                }
            }
            for (const ConfigIssue& issue : issues) {
                if (issue.key != key) continue;
                ImGui::PushStyleColor(ImGuiCol_Text, kIssueColour);
                ImGui::PushTextWrapPos(0.0f);
                ImGui::TextUnformatted(issue.message.c_str());
                ImGui::PopTextWrapPos();
                ImGui::PopStyleColor();
            }
        }
    }
    bool has(const char* key) const {
        return std::any_of(issues.begin(), issues.end(), [&](const ConfigIssue& i) { return i.key == key; });
    }
};

// Applies an edit only when the core accepts it: `set` changes a copy of the config, validate() checks
// it, and an issue with `key` keeps the old value and remembers the core's own message, which the
// panel shows in place under the control (until the next accepted edit of that key). Sliders take
// typed values (Ctrl+click) beyond their range; this is where those are refused or accepted.
bool apply_or_refuse(AppState& state, const std::string& key, const std::function<void(Config&)>& set) {
    Config candidate = state.config;
    set(candidate);
    std::map<std::string, std::string>& refused = views(state).controls.refused;
    for (const ConfigIssue& issue : validate(candidate)) {
        if (issue.key != key) continue;
        refused[key] = issue.message;
        return false;
    }
    refused.erase(key);
    state.config = candidate;
    return true;
}

template <class E>
bool enum_combo(const char* label, E& value, std::initializer_list<std::pair<E, const char*>> items) {
    const char* preview = "?";
    for (const auto& [v, name] : items)
        if (v == value) preview = name;
    bool changed = false;
    if (ImGui::BeginCombo(label, preview)) {
        for (const auto& [v, name] : items) {
            const bool selected = v == value;
            if (ImGui::Selectable(name, selected) && !selected) {
                value = v;
                changed = true;
            }
            if (selected) ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    return changed;
}

// An int field clamped to [lo, hi] (the user may still type anything; out-of-range values are
// clamped here and real conflicts, like heads not dividing d_model, are left to validate()).
bool int_field(const char* label, int& value, int lo, int hi, int step = 1) {
    int v = value;
    if (!ImGui::InputInt(label, &v, step, step * 8)) return false;
    v = std::clamp(v, lo, hi);
    if (v == value) return false;
    value = v;
    return true;
}

void section_heading(const char* title, const char* help) {
    ImGui::Spacing();
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::TextUnformatted(title);
    ImGui::PopFont();
    help_marker(help);
    ImGui::Separator();
}

// The last item's frame (without its label, which ImGui counts in the item rectangle).
void record_rect(AppState& state, const char* name, float frame_w) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    state.widget_rects[name] = {a.x, a.y, frame_w, b.y - a.y};
}

int token_count_hint(const AppState& state) {
    // Upper bound for the mask sliders: the number of key tokens of the trace on screen.
    if (state.trace) return std::max(1, state.trace->m);
    return 64;
}

}  // namespace

// The controls while a real model is open: its text, layer, the next-token panel; the single layer's
// knobs are hidden (the checkpoint fixes them) and the panel says so.
void draw_model_controls(AppState& state) {
    ModelUi& m = state.model;
    section_heading("Model",
                    "A real, trained transformer read from a Hugging Face folder. Every layer does the same "
                    "steps as the single layer: normalise, Q/K/V per head, scores, causal softmax, weighted "
                    "sum of values, output projection, residual; then an MLP and another residual. Pick a "
                    "layer and a head and step through its stages; hover a cell to see how it was made.");
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(m.name.c_str());
    ImGui::TextDisabled("%s", m.description.c_str());
    if (m.n_kv_head > 0 && m.n_kv_head < m.n_head)
        ImGui::TextDisabled("grouped-query attention: %d K/V heads shared by %d query heads", m.n_kv_head,
                            m.n_head);
    ImGui::PopTextWrapPos();
    section_heading("Text",
                    "What the model reads, split by its own tokenizer (subword pieces; · marks a space in "
                    "token labels). Every token is one row of every matrix. Editing recomputes every layer.");
    ImGui::InputTextMultiline("##model_text", &m.text, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 3.6f));
    if (m.seq2seq)
        draw_seq2seq_target(state);  // (an encoder–decoder: the text above is its source)
    else
        ImGui::TextDisabled("%d tokens", m.n);
    draw_attention_family(state);
    const float label_w = ImGui::GetFontSize() * 5.0f;
    ImGui::PushItemWidth(-label_w);
    ImGui::SliderInt("layer", &m.layer, 0, std::max(0, m.n_layer - 1));
    record_rect(state, "layer", ImGui::CalcItemWidth());
    if (state.trace) ImGui::SliderInt("head", &state.head, 0, std::max(0, state.trace->heads - 1));
    ImGui::PopItemWidth();
    if (!m.note.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.8f, 0.35f, 1.0f));
        ImGui::TextWrapped("%s", m.note.c_str());
        ImGui::PopStyleColor();
    }
    draw_next_token_panel(state);
    ImGui::Spacing();
    ImGui::Separator();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled(
        "The single layer's knobs (d_model, heads, masks, positional encoding, scoring, seed, …) are hidden: "
        "a trained model's weights fix them. The single layer is where they live:");
    ImGui::PopTextWrapPos();
    if (ImGui::Button("Back to the single layer")) m.close_request = true;
}

void draw_controls_panel(AppState& state) {
    if (state.model.active) {
        draw_model_controls(state);
        return;
    }
    Config& c = state.config;
    IssueShower issues{state.issues, {}, &views(state).controls.refused};
    const float label_w = ImGui::GetFontSize() * 9.0f;
    ImGui::PushItemWidth(-label_w);

    // Problems that belong to no Config field (memory estimate, ...) go first, so they are seen; a
    // field's problems appear under its control below (and at the end, if no control showed them).
    auto show_issue = [](const std::string& text) {
        ImGui::PushStyleColor(ImGuiCol_Text, kIssueColour);
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextUnformatted(text.c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
    };
    for (const ConfigIssue& issue : state.issues)
        if (!find_config_field(issue.key)) show_issue(issue.message);
    if (!state.issues.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, kIssueColour);
        ImGui::TextWrapped(state.trace ? "Not applied: the heatmaps still show the last valid settings."
                                       : "Fix the settings marked in red below to compute the layer.");
        ImGui::PopStyleColor();
    }

    // --- text -----------------------------------------------------------------------------------
    section_heading("Text",
                    "Each word and each punctuation mark becomes one token (a Chinese character is one "
                    "token each). Every token becomes one ROW of every matrix: n tokens give n rows. "
                    "Self-attention: the text attends to itself. Cross-attention: queries come from this "
                    "text, keys and values from the second one (m rows), as in a translator's decoder "
                    "looking at the source sentence.");
    ImGui::InputTextMultiline("##text", &c.text, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 3.6f));
    issues.show({"text"});
    // The box stays open while the second text is empty (being retyped); meanwhile the layer is
    // self-attention, which is what an empty source text means.
    ControlsView& cv = views(state).controls;
    std::string& stashed_source = cv.stashed_source;
    bool& cross = cv.cross;
    if (c.cross_attention()) cross = true;
    if (ImGui::Checkbox("Cross-attention (second text)", &cross)) {
        if (cross) {
            c.source_text = stashed_source;
        } else {
            stashed_source = c.source_text;
            c.source_text.clear();
        }
    }
    if (cross) {
        ImGui::TextDisabled("Keys and values come from:");
        ImGui::InputTextMultiline("##source", &c.source_text,
                                  ImVec2(-1.0f, ImGui::GetTextLineHeight() * 2.6f));
        if (c.source_text.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, kIssueColour);
            ImGui::TextWrapped("Type the text the queries should look at (empty = self-attention).");
            ImGui::PopStyleColor();
        }
    }
    issues.show({"source_text"});
    int_field("length", c.length, 0, 1 << 20, 1);
    help_marker(
        "0 = use the text as typed. N > 0 repeats the tokens until there are exactly N, to see "
        "how cost grows: the score matrix S has n×m cells, so doubling the text quadruples it.");
    issues.show({"length", "max_tokens"});

    // --- sizes ----------------------------------------------------------------------------------
    section_heading("Sizes",
                    "d_model is the width of each token's vector. With h heads, each head gets its own "
                    "smaller projections of width d_k (queries, keys) and d_v (values); usually "
                    "d_k = d_v = d_model / h, so h heads cost about as much as one big head, and the "
                    "layer has 4·d_model² weights (W_Q, W_K, W_V, W_O).");
    int_field("d_model", c.d_model, 1, 4096, 1);
    issues.show({"d_model"});
    int_field("heads", c.heads, 1, 256, 1);
    issues.show({"heads"});
    if (ImGui::Checkbox("link d_k = d_v = d_model / h", &state.link_head_dims)) {
        if (state.link_head_dims) {
            c.d_k = 0;
            c.d_v = 0;
        } else {
            // Start the unlinked fields from the values in use, so unlinking changes nothing yet.
            if (c.heads > 0 && c.d_model % c.heads == 0) {
                c.d_k = c.d_model / c.heads;
                c.d_v = c.d_model / c.heads;
            } else {
                c.d_k = c.d_k > 0 ? c.d_k : 16;
                c.d_v = c.d_v > 0 ? c.d_v : 16;
            }
        }
    }
    if (state.link_head_dims) {
        if (c.d_k != 0 || c.d_v != 0) state.link_head_dims = false;  // a scene set them explicitly
    }
    if (state.link_head_dims) {
        ImGui::TextDisabled("d_k = d_v = %d / %d = %s", c.d_model, c.heads,
                            (c.heads > 0 && c.d_model % c.heads == 0)
                                ? std::to_string(c.d_model / c.heads).c_str()
                                : "(does not divide)");
    } else {
        int_field("d_k", c.d_k, 1, 4096, 1);
        help_marker(
            "Width of queries and keys. Scores are dot products of d_k numbers, so their spread "
            "grows like √d_k; that is why scaled dot-product attention divides by √d_k.");
        issues.show({"d_k"});
        int_field("d_v", c.d_v, 1, 4096, 1);
        help_marker(
            "Width of values: each head outputs n×d_v, and the h heads are concatenated into "
            "n×(h·d_v) before W_O maps them back to d_model.");
        issues.show({"d_v"});
    }

    // --- attention ------------------------------------------------------------------------------
    section_heading("Attention",
                    "Softmax attention: A = softmax(S / T) row by row, then output = A·V. Each row of A "
                    "is a probability distribution over the keys: how much query i listens to key j. "
                    "Linear attention replaces exp(q·k) by φ(q)ᵀφ(k), so (φ(K)ᵀV) can be computed once: "
                    "cost grows like n instead of n².");
    enum_combo("attention", c.attention,
               {{AttentionKind::Softmax, "softmax"}, {AttentionKind::Linear, "linear (kernel φ)"}});
    issues.show({"attention"});
    if (c.attention == AttentionKind::Linear) {
        enum_combo("φ", c.phi,
                   {{PhiKind::Elu1, "elu(x) + 1"},
                    {PhiKind::Relu, "relu(x)"},
                    {PhiKind::Softmax, "softmax (Q over features, K over tokens)"}});
        help_marker(
            "φ must keep similarities non-negative so the weights can be normalised: "
            "A_ij = φ(q_i)ᵀφ(k_j) / Σ_j φ(q_i)ᵀφ(k_j).");
        issues.show({"phi"});
    } else {
        enum_combo("scoring", c.scoring,
                   {{Scoring::ScaledDot, "scaled dot  q·k / √d_k"},
                    {Scoring::Dot, "dot  q·k"},
                    {Scoring::Additive, "additive  vᵀtanh(W₁q + W₂k)"},
                    {Scoring::Bilinear, "bilinear  qᵀ W k"},
                    {Scoring::Gaussian, "Gaussian kernel  exp(−‖q−k‖²/2σ²)"},
                    {Scoring::Boxcar, "boxcar  1[‖q−k‖ ≤ σ]"},
                    {Scoring::Epanechnikov, "Epanechnikov  max(0, 1 − ‖q−k‖²/σ²)"}});
        help_marker(
            "How a query and a key are compared. Dot products grow with d_k, so the plain dot "
            "score saturates the softmax for wide heads; dividing by √d_k keeps their variance "
            "near 1. Additive (Bahdanau) scoring uses a small network; kernels (Nadaraya-Watson) "
            "score by distance: near keys get large weights.");
        issues.show({"scoring"});
        if (c.scoring == Scoring::Additive) {
            int hidden = c.additive_hidden;
            if (ImGui::InputInt("hidden size", &hidden)) c.additive_hidden = std::clamp(hidden, 0, 4096);
            help_marker("Width of the additive scoring network's hidden layer; 0 = d_k.");
            issues.show({"additive_hidden"});
        }
        if (c.scoring == Scoring::Gaussian || c.scoring == Scoring::Boxcar ||
            c.scoring == Scoring::Epanechnikov) {
            float bw = float(c.bandwidth);
            if (ImGui::SliderFloat("bandwidth σ", &bw, 0.01f, 100.0f, "%.3g", ImGuiSliderFlags_Logarithmic))
                apply_or_refuse(state, "bandwidth", [&](Config& k) { k.bandwidth = double(bw); });
            help_marker("Kernel width: small σ attends only to very close keys, large σ to all of them.");
            issues.show({"bandwidth"});
        }
    }
    float T = float(c.temperature);
    const float t_frame_w = ImGui::CalcItemWidth();
    // Linear attention has no softmax, so T has nothing to divide: the slider is off, and says why.
    const bool t_inert = c.attention == AttentionKind::Linear;
    ImGui::BeginDisabled(t_inert);
    if (ImGui::SliderFloat("temperature T", &T, 0.01f, 100.0f, "T = %.3g", ImGuiSliderFlags_Logarithmic))
        apply_or_refuse(state, "temperature", [&](Config& k) { k.temperature = double(T); });
    ImGui::EndDisabled();
    record_rect(state, "temperature", t_frame_w);
    help_marker(
        "softmax(S / T). T < 1 sharpens each row towards its largest score (T → 0: one-hot, "
        "\"hard\" attention); T > 1 flattens it (T → ∞: uniform, every key weighted 1/m). "
        "The slider is logarithmic: the middle is T = 1. Ctrl+click to type a value.");
    if (t_inert) ImGui::TextDisabled("T has no effect in linear attention (no softmax to sharpen)");
    issues.show({"temperature"});

    // --- mask -----------------------------------------------------------------------------------
    section_heading("Mask",
                    "A mask hides some keys from some queries by setting their score to −∞ before the "
                    "softmax, so exp(−∞) = 0 and the remaining weights of the row still sum to 1. "
                    "Causal: a token sees only itself and earlier tokens (text generation). Padding: "
                    "keys past the valid length are filler. Window: only the last w tokens.");
    enum_combo("mask", c.mask,
               {{MaskKind::None, "none"},
                {MaskKind::Causal, "causal (j ≤ i)"},
                {MaskKind::Padding, "padding (valid length)"},
                {MaskKind::Window, "window (last w tokens)"},
                {MaskKind::Custom, "custom (click cells)"}});
    issues.show({"mask"});
    const int m_hint = token_count_hint(state);
    if (c.mask == MaskKind::Padding) {
        int vl = c.valid_length;
        if (ImGui::SliderInt("valid length", &vl, -1, m_hint, vl < 0 ? "all" : "%d")) c.valid_length = vl;
        issues.show({"valid_length"});
    }
    if (c.mask == MaskKind::Window) {
        int w = c.window;
        if (ImGui::SliderInt("window w", &w, 1, std::max(1, m_hint))) c.window = w;
        issues.show({"window"});
    }
    if (c.mask == MaskKind::Custom) {
        ImGui::TextWrapped(
            "Click cells of the scores, masked or weights heatmap to hide key j from query i.");
        if (ImGui::Button("Clear custom mask")) c.custom_mask = MaskGrid{};
        // A mask made elsewhere (numpy: np.save("mask.npy", np.triu(np.ones((n, n)), 1))): nonzero
        // hides the key. A broken file only costs a message; the mask being edited is kept.
        std::string& mask_path = views(state).controls.mask_path;
        ImGui::SetNextItemWidth(std::max(80.0f, ImGui::GetContentRegionAvail().x - 120.0f));
        ImGui::InputText("##mask_npy", &mask_path);
        ImGui::SameLine();
        if (ImGui::Button("Load .npy")) {
            try {
                c.custom_mask = read_mask_npy(mask_path);
                state.set_status("Loaded a " + std::to_string(c.custom_mask.rows) + "×" +
                                     std::to_string(c.custom_mask.cols) + " mask from " + mask_path,
                                 false);
            } catch (const std::exception& e) {
                state.set_status(e.what(), true);
            }
        }
        help_marker(
            "Load a custom mask saved with numpy: a 2-D array, rows = queries, columns = keys, nonzero = "
            "hidden. Example: np.save('mask.npy', np.triu(np.ones((8, 8)), 1)) is the causal mask.");
        issues.show({"custom_mask"});
    }

    // --- position -------------------------------------------------------------------------------
    section_heading("Position",
                    "Attention itself ignores word order: shuffle the keys and each query gets the same "
                    "weights. Positional information fixes that. Sinusoidal: add sin/cos waves of "
                    "different frequencies to each token vector. Learned: a trained vector per position. "
                    "RoPE: rotate pairs of q and k coordinates by an angle growing with position, so q·k "
                    "depends on the distance i − j. ALiBi: add −slope·|i − j| to the scores.");
    enum_combo("positional", c.positional,
               {{Positional::None, "none"},
                {Positional::Sinusoidal, "sinusoidal (added)"},
                {Positional::Learned, "learned (added)"},
                {Positional::Rope, "RoPE (rotary)"},
                {Positional::Alibi, "ALiBi (score bias)"}});
    issues.show({"positional"});
    if (c.positional == Positional::Sinusoidal || c.positional == Positional::Rope) {
        double base = c.pe_base;
        if (ImGui::InputDouble("base", &base, 0, 0, "%.0f")) c.pe_base = base;
        help_marker(
            "Wavelengths grow geometrically from 2π up to 2π·base: a larger base lets far-apart "
            "positions stay distinguishable.");
        issues.show({"pe_base"});
    }

    // --- block ----------------------------------------------------------------------------------
    section_heading("Block",
                    "Around attention, a Transformer block adds a residual connection (output = X + "
                    "attention(X): the layer only has to learn a correction) and LayerNorm (each row "
                    "rescaled to mean 0, variance 1), before (pre-LN, most modern models) or after "
                    "(post-LN, the original Transformer) the sub-layer.");
    enum_combo(
        "LayerNorm", c.layernorm,
        {{LayerNormMode::None, "none"}, {LayerNormMode::Pre, "pre-LN"}, {LayerNormMode::Post, "post-LN"}});
    issues.show({"layernorm"});
    ImGui::Checkbox("residual  X + attention(X)", &c.residual);
    issues.show({"residual"});
    enum_combo("designed head", c.preset,
               {{HeadPreset::None, "none (random weights)"},
                {HeadPreset::PreviousToken, "previous token"},
                {HeadPreset::FirstToken, "first token"},
                {HeadPreset::SameToken, "same token"},
                {HeadPreset::AdjectiveNoun, "adjective → noun"}});
    help_marker(
        "Instead of random W_Q, W_K, build them by hand so one head has a known job (attend to "
        "the previous token, to the first token, ...). Watch its weights form the pattern.");
    issues.show({"preset"});
    unsigned long long seed = c.seed;
    if (ImGui::InputScalar("seed", ImGuiDataType_U64, &seed)) c.seed = seed;
    help_marker(
        "The random weights (embeddings, W_Q, W_K, W_V, W_O) come from this seed: the same "
        "seed always gives the same numbers.");
    if (ImGui::Button("New seed")) c.seed = c.seed * 6364136223846793005ull + 1442695040888963407ull;
    issues.show({"seed"});

    ImGui::Spacing();
    ImGui::Separator();
    if (ImGui::Button("Reset to scene")) {
        c = state.scene_config;
        state.link_head_dims = c.d_k == 0 && c.d_v == 0;
    }
    ImGui::SameLine();
    if (ImGui::Button("Defaults")) {
        c = Config{};
        state.link_head_dims = true;
    }
    help_marker("Reset to scene: the settings the scene was loaded with. Defaults: the built-in example.");

    // --- performance ----------------------------------------------------------------------------
    ImGui::Spacing();
    int threads = state.compute_threads;
    if (ImGui::SliderInt("compute threads", &threads, 1, 8)) state.compute_threads = threads;
    help_marker(
        "Threads the background computation may use. 1 leaves the other cores to drawing, so "
        "the window stays smooth while a big text is recomputed.");
    // A field's problem whose control is not on screen (hidden by another choice) is never lost.
    for (const ConfigIssue& issue : state.issues)
        if (find_config_field(issue.key) && !issues.shown.count(issue.key))
            show_issue(issue.key + ": " + issue.message);
    ImGui::PopItemWidth();
}

}  // namespace attnviz::app
