#include "core/stages/common.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz {

LayerWords::LayerWords(const Config& c, const LayerTextContext& context, int head, TextLanguage language)
    : cfg(c),
      x(context),
      hd(head),
      lang(language),
      modes(layer_modes(c)),
      d_k(c.resolved_d_k()),
      d_v(c.resolved_d_v()),
      dk_s(std::to_string(d_k)),
      dm_s(std::to_string(c.d_model)) {}

std::string LayerWords::H() const {
    return " (head " + std::to_string(hd) + ")";
}
std::string LayerWords::H_zh() const {
    return "（头 " + std::to_string(hd) + "）";
}
std::string LayerWords::in() const {
    return modes.pre_ln ? "LN(X)" : "X";
}
std::string LayerWords::kin() const {
    return cfg.cross_attention() ? (modes.pre_ln ? "LN(Y)" : "Y") : in();
}
std::string LayerWords::designed() const {
    return hd >= 0 && hd < int(x.designed.size()) ? x.designed[std::size_t(hd)] : std::string();
}

ModelWords::ModelWords(const ModelSpec& spec, int hd)
    : s(spec),
      head(hd),
      gpt2(spec.family == ModelFamily::Gpt2),
      layernorm(norm_kind(spec) == NormKind::LayerNorm),
      rope_pos(position_kind(spec) == PositionKind::Rope),
      gelu(gelu_mlp(mlp_kind(spec))),
      geglu(mlp_kind(spec) == MlpKind::GeGLU),
      h(hd >= 0 ? cell_text::sub(hd) : ""),
      norm(layernorm ? "LayerNorm" : "RMSNorm"),
      norm_formula(layernorm ? "γ ⊙ (x − μ) / √(σ² + ε) + β" : "γ ⊙ x / √(mean(x²) + ε)"),
      norm_why(layernorm ? "LayerNorm subtracts each token's mean over d_model, divides by its standard "
                           "deviation, then scales by γ and shifts by β (both learned)."
                         : "RMSNorm divides each token's vector by its root mean square (no mean subtracted, "
                           "no shift), then scales by the learned γ."),
      rope(rope_pos ? "RoPE(" : ""),
      rope_end(rope_pos ? ")" : ""),
      bias(gpt2 ? " + b" : "") {
    const int group = spec.n_head / std::max(1, spec.n_kv_head);
    if (group > 1 && hd >= 0) {
        const int kv = hd / group;
        shared = " Grouped-query attention: K and V shared by heads " + std::to_string(kv * group) + ".." +
                 std::to_string(kv * group + group - 1) + " (K/V head " + std::to_string(kv) + " of " +
                 std::to_string(spec.n_kv_head) + ").";
    }
}

namespace stages {

std::string text_num(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
}

DotText dot_text(int count, const std::function<double(int)>& a, const std::function<double(int)>& b) {
    DotText d;
    for (int t = 0; t < count; ++t) {
        d.sum += a(t) * b(t);
        if (t < 3) d.text += std::string(t ? " + " : "") + "(" + f(a(t), 2) + ")(" + f(b(t), 2) + ")";
    }
    if (count > 3) d.text += " + … (" + std::to_string(count) + " terms)";
    if (count == 0) d.text = "0 (no terms)";
    return d;
}

std::string mask_reason(const Config& c) {
    switch (c.mask) {
        case MaskKind::Causal:
            return "the causal mask (a token may not see later tokens)";
        case MaskKind::Padding:
            return "the padding mask (keys from position " + std::to_string(c.valid_length) +
                   " on are padding)";
        case MaskKind::Window:
            return "the window mask (only the last " + std::to_string(c.window) + " keys are visible)";
        case MaskKind::Custom:
            return "your custom mask";
        case MaskKind::None:
            break;
    }
    return "no mask";
}

Mat stage_matrix(const Trace& t, const std::string& name, int head) {
    const Stage* s = t.get(name, head);
    return s ? s->matrix() : Mat();
}

Mat query_input(const Trace& t) {
    const Stage* ln = t.get("layernorm");
    return ln ? ln->matrix() : stage_matrix(t, "input");
}

Mat key_input(const Trace& t) {
    if (!t.get("source")) return query_input(t);
    const Mat Y = stage_matrix(t, "source");
    return t.config.layernorm == LayerNormMode::Pre ? layernorm_rows(Y) : Y;
}

const HeadWeights& head_weights(const Trace& t, int h) {
    if (!t.weights || h < 0 || h >= int(t.weights->heads.size()))
        throw Error("explain: the trace carries no weights for head " + std::to_string(h));
    return t.weights->heads[std::size_t(h)];
}

void explain_sum(const CellQuery& q, Lines& L) {
    const std::string& name = q.st.name;
    const std::string& cell = q.cell;
    const int i = q.i, j = q.j;
    const Mat A = stage_matrix(q.t, name == "input" ? "embedding" : "input");
    const Mat B = stage_matrix(q.t, name == "input" ? "positional" : "output");
    L.push_back(name == "input" ? "X" + cell + " = E" + cell + " + P" + cell
                                : "residual" + cell + " = X" + cell + " + output" + cell +
                                      "  (the change vector added to the input)");
    L.push_back("= (" + f(A(i, j), 4) + ") + (" + f(B(i, j), 4) + ")");
    L.push_back(final_line(double(A(i, j)) + double(B(i, j))));
}

void explain_layernorm(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const int i = q.i, j = q.j;
    const Mat X = q.st.name == "layernorm" ? stage_matrix(t, "input")
                                           : stage_matrix(t, t.get("residual") ? "residual" : "output");
    double mean = 0, var = 0;
    const int d = int(X.cols());
    for (int k = 0; k < d; ++k) mean += X(i, k);
    mean /= d;
    for (int k = 0; k < d; ++k) var += (X(i, k) - mean) * (X(i, k) - mean);
    var /= d;
    L.push_back("LN(x" + sub(i) + ")" + sub(j) + " = (x_ik − mean(x_i)) / √(var(x_i) + ε)");
    L.push_back("= (" + f(X(i, j), 4) + " − " + f(mean, 4) + ") / √(" + f(var, 4) + " + 1e−5)");
    L.push_back(final_line((X(i, j) - mean) / std::sqrt(var + 1e-5)));
}

void explain_parameter(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const std::string& name = q.st.name;
    const int h = q.h;
    const bool designed =
        h >= 0 && (name == "W_Q" || name == "W_K") && t.weights && !head_weights(t, h).designed.empty();
    const bool seeded = !t.weights || t.weights->source == "seeded" || t.weights->source == "designed";
    L.push_back(name + q.cell + (h >= 0 ? " of head " + std::to_string(h) : "") +
                (designed ? ": set by hand for the designed head (see the explanation)"
                 : seeded ? ": a learned parameter (here drawn at random)"
                          : ": a learned parameter (" + t.weights->source + ")"));
    L.push_back(final_line(q.st.matrix()(q.i, q.j)));
}

}  // namespace stages
}  // namespace attnviz
