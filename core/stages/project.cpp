// Phase "project": each head's weights and the queries, keys and values they make; RoPE's rotation.
#include <cmath>

#include "core/stages/common.hpp"
#include "core/stages/layer_run.hpp"

namespace attnviz {
namespace {

using namespace stages;

const char* const kRandomWeights =
    "A learned matrix (here: random, N(0, 1/d_model) so that projected entries stay about unit "
    "size). ";
const char* const kRandomWeightsZh =
    "一个学出来的矩阵（这里是随机的，取自 N(0, 1/d_model)，使投影后的元素大约保持单位大小）。";

// --- W_Q, W_K, W_V --------------------------------------------------------------------------------

StageText w_q_text(const LayerWords& w) {
    const std::string designed = w.designed();
    StageText text{
        w.tr("Query weights W_Q" + w.H(), "查询权重 W_Q" + w.H_zh()),
        "W_Q" + sub(w.hd) + " ∈ ℝ^(d_model×d_k) = " + w.dm_s + "×" + w.dk_s,
        designed.empty()
            ? kRandomWeights +
                  std::string("Each column is one question direction: a token's query is its input "
                              "projected "
                              "onto "
                              "these d_k = ") +
                  w.dk_s +
                  " directions, i.e. what this head is looking for (e.g. 'is there an adjective "
                  "before "
                  "me?'). Each "
                  "head has its own W_Q, so each looks at a different subspace of the input." +
                  (w.cfg.preset != HeadPreset::None
                       ? " This head is random; the designed pattern is in head 0."
                       : "")
            : designed};
    if (designed.empty())  // (a designed head's text comes with its weights, in English)
        text.explanation =
            w.tr(std::move(text.explanation),
                 kRandomWeightsZh + std::string("每一列是一个提问方向：词元的查询就是它的输入在这 d_k = ") +
                     w.dk_s +
                     " 个方向上的投影，也就是这个头在寻找什么（例如“我前面有形容词吗？”）。"
                     "每个头有自己的 W_Q，因此各自关注输入的不同子空间。" +
                     (w.cfg.preset != HeadPreset::None ? "这个头是随机的；设计好的模式在头 0。" : ""));
    return text;
}

StageText w_k_text(const LayerWords& w) {
    const std::string designed = w.designed();
    StageText text{
        w.tr("Key weights W_K" + w.H(), "键权重 W_K" + w.H_zh()),
        "W_K" + sub(w.hd) + " ∈ ℝ^(d_model×d_k) = " + w.dm_s + "×" + w.dk_s,
        designed.empty()
            ? kRandomWeights + std::string("W_K maps each token to a key: how it advertises itself "
                                           "to the questions of the other "
                                           "tokens. A query and a key match when they point the "
                                           "same way in the d_k-dimensional "
                                           "space the two matrices define together.")
            : designed};
    if (designed.empty())
        text.explanation =
            w.tr(std::move(text.explanation),
                 kRandomWeightsZh + std::string("W_K 把每个词元映射成一个键：它如何向其他词元的提问"
                                                "展示自己。当查询和键在这两个矩阵共同定义的 d_k "
                                                "维空间中指向同一方向时，二者匹配。"));
    return text;
}

StageText w_v_text(const LayerWords& w) {
    return StageText{
        w.tr("Value weights W_V" + w.H(), "值权重 W_V" + w.H_zh()),
        "W_V" + sub(w.hd) + " ∈ ℝ^(d_model×d_v) = " + w.dm_s + "×" + std::to_string(w.d_v),
        w.tr(kRandomWeights + std::string("W_V maps each token to the information it passes on when "
                                          "attended to: a "
                                          "value is the change "
                                          "this token proposes to make to whoever looks at it."),
             kRandomWeightsZh + std::string("W_V 把每个词元映射成它被关注时传递出去的信息：值就是这个"
                                            "词元向关注它的词元提议做出的改变。"))};
}

void w_q_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    r.add(x.dm_ax, x.dk_ax, ValueKind::Signed, 0, x.heads[std::size_t(hd)].W_Q);
}
void w_k_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    r.add(x.dm_ax, x.dk_ax, ValueKind::Signed, 0, x.heads[std::size_t(hd)].W_K);
}
void w_v_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    r.add(x.dm_ax, x.dv_ax, ValueKind::Signed, 0, x.heads[std::size_t(hd)].W_V);
}

// --- Q, K, V --------------------------------------------------------------------------------------

StageText q_text(const LayerWords& w) {
    const std::string in = w.in();
    return StageText{w.tr("Queries  Q = " + in + "·W_Q" + w.H(), "查询  Q = " + in + "·W_Q" + w.H_zh()),
                     "Q = " + in + " W_Q   (n×d_k)",
                     w.tr("One query row per token: the input row times W_Q. q_i is token i's question. "
                          "Each entry is a "
                          "dot "
                          "product of the token's " +
                              w.dm_s + " input numbers with one column of W_Q.",
                          "每个词元一行查询：输入行乘以 W_Q。q_i 是词元 i 的提问。每个元素是该词元的 " +
                              w.dm_s + " 个输入数与 W_Q 的一列的点积。")};
}

StageText k_text(const LayerWords& w) {
    const std::string kin = w.kin();
    return StageText{
        w.tr("Keys  K = " + kin + "·W_K" + w.H(), "键  K = " + kin + "·W_K" + w.H_zh()),
        "K = " + kin + " W_K   (m×d_k)",
        w.tr("One key row per " + std::string(w.cfg.cross_attention() ? "source " : "") +
                 "token: what each token offers to be matched against. The score of query i "
                 "for key j will be "
                 "large "
                 "when q_i and k_j point the same way.",
             std::string("每个") + (w.cfg.cross_attention() ? "源" : "") +
                 "词元一行键：每个词元拿出来供查询匹配的内容。当 q_i 与 k_j 指向同一方向时，查询 i "
                 "对键 j 的注意力分数会很大。")};
}

StageText v_text(const LayerWords& w) {
    const std::string kin = w.kin();
    return StageText{
        w.tr("Values  V = " + kin + "·W_V" + w.H(), "值  V = " + kin + "·W_V" + w.H_zh()),
        "V = " + kin + " W_V   (m×d_v)",
        w.tr("One value row per token: what a token contributes to the output of every query "
             "that attends to "
             "it, in "
             "proportion to the attention weight.",
             "每个词元一行值：它为每个关注它的查询的输出所贡献的内容，按注意力权重的比例计入。")};
}

StageText q_model_text(const ModelWords& w) {
    return {
        "Queries Q" + w.h, "Q" + w.h + " = " + w.rope + "x̂ W_Q" + w.h + w.bias + w.rope_end,
        "What each token looks for, as head " + std::to_string(w.head) + " sees it: x̂ times the head's " +
            "learned query weights." +
            (!w.rope_pos
                 ? std::string(" GPT-2 adds learned position embeddings to the input instead of rotating.")
                 : " RoPE then rotates pairs of coordinates by an angle proportional to the "
                   "token's position, so Q·K depends on how far apart two tokens are.")};
}

StageText k_model_text(const ModelWords& w) {
    return {
        "Keys K" + w.h, "K" + w.h + " = " + w.rope + "x̂ W_K" + w.h + w.bias + w.rope_end,
        "What each token offers to be found by. A query's score with a key is their dot product." + w.shared};
}

StageText v_model_text(const ModelWords& w) {
    return {"Values V" + w.h, "V" + w.h + " = x̂ W_V" + w.h + w.bias,
            "What each token hands over when it is attended to." + w.shared};
}

// Q, K, V: the input row times a column of the head's weights, plus the bias if the weights have one.
void qkv_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const std::string& name = q.st.name;
    const int h = q.h, i = q.i, j = q.j;
    const Mat Xin = name == "Q" ? query_input(t) : key_input(t);
    const Mat W = stage_matrix(t, "W_" + name, h);
    const std::string x = name == "Q" ? (t.get("layernorm") ? "LN(x)" : "x") : (t.get("source") ? "y" : "x");
    L.push_back(name + q.cell + " = " + x + sub(i) + " · W_" + name + "[:, " + std::to_string(j) + "] = Σₖ " +
                x + sub(i) + "ₖ W_" + name + "[k, " + std::to_string(j) + "]");
    const DotText d = dot_text(
        int(Xin.cols()), [&](int k) { return double(Xin(i, k)); }, [&](int k) { return double(W(k, j)); });
    const RowVec& bias = name == "Q"   ? head_weights(t, h).b_Q
                         : name == "K" ? head_weights(t, h).b_K
                                       : head_weights(t, h).b_V;
    if (bias.size() == 0) {
        L.push_back("= " + d.text);
        L.push_back(final_line(d.sum));
    } else {
        L.push_back("= " + d.text + " + b_" + name + "[" + std::to_string(j) + "] (" + f(bias(j), 4) + ")");
        L.push_back(final_line(d.sum + double(bias(j))));
    }
}

void q_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    r.add(x.q_ax, x.dk_ax, ValueKind::Signed, 2 * x.nf * x.df * x.dkf, x.heads[std::size_t(hd)].Q);
}
void k_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    r.add(x.k_ax, x.dk_ax, ValueKind::Signed, 2 * x.mf * x.df * x.dkf, x.heads[std::size_t(hd)].K);
}
void v_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    r.add(x.k_ax, x.dv_ax, ValueKind::Signed, 2 * x.mf * x.df * x.dvf, x.heads[std::size_t(hd)].V);
}

// --- Q_rot, K_rot (RoPE) --------------------------------------------------------------------------

std::string rope_explanation(const LayerWords& w) {
    return "RoPE: each pair of coordinates (2i, 2i+1) of the row at position p is rotated by the angle "
           "p·ωᵢ, "
           "ωᵢ = " +
           text_num(w.cfg.pe_base) +
           "^(−2i/d_k). Rotations preserve length, and rotating q by p·ω and k by s·ω makes q·k depend "
           "only "
           "on the offset s − p: relative position enters the scores directly, nothing is added to X.";
}
StageText q_rot_text(const LayerWords& w) {
    return StageText{"Rotated queries (RoPE)" + w.H(), "q̃_p = R(p·ω) q_p", rope_explanation(w)};
}
StageText k_rot_text(const LayerWords& w) {
    return StageText{"Rotated keys (RoPE)" + w.H(), "k̃_s = R(s·ω) k_s", rope_explanation(w)};
}

void rot_explain(const CellQuery& q, Lines& L) {
    const std::string& name = q.st.name;
    const int i = q.i, j = q.j;
    const Mat M = stage_matrix(q.t, name == "Q_rot" ? "Q" : "K", q.h);
    const int pair = j / 2, d = int(M.cols());
    const double w = std::pow(q.c.pe_base, -2.0 * pair / d), th = i * w;
    const double a = M(i, 2 * pair), b = M(i, 2 * pair + 1);
    const std::string v = name == "Q_rot" ? "q" : "k";
    if (j % 2 == 0) {
        L.push_back(v + "̃" + q.cell + " = " + v + "_" + std::to_string(2 * pair) + "·cos(pω) − " + v + "_" +
                    std::to_string(2 * pair + 1) + "·sin(pω),  p = " + std::to_string(i) +
                    ", ω = " + f(w, 4));
        L.push_back("= (" + f(a, 4) + ")·cos(" + f(th, 4) + ") − (" + f(b, 4) + ")·sin(" + f(th, 4) + ")");
        L.push_back(final_line(a * std::cos(th) - b * std::sin(th)));
    } else {
        L.push_back(v + "̃" + q.cell + " = " + v + "_" + std::to_string(2 * pair) + "·sin(pω) + " + v + "_" +
                    std::to_string(2 * pair + 1) + "·cos(pω),  p = " + std::to_string(i) +
                    ", ω = " + f(w, 4));
        L.push_back("= (" + f(a, 4) + ")·sin(" + f(th, 4) + ") + (" + f(b, 4) + ")·cos(" + f(th, 4) + ")");
        L.push_back(final_line(a * std::sin(th) + b * std::cos(th)));
    }
}

void q_rot_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    if (x.modes.rope)
        r.add(x.q_ax, x.dk_ax, ValueKind::Signed, 3 * x.nf * x.dkf, x.heads[std::size_t(hd)].Q_rot);
}
void k_rot_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    if (x.modes.rope)
        r.add(x.k_ax, x.dk_ax, ValueKind::Signed, 3 * x.mf * x.dkf, x.heads[std::size_t(hd)].K_rot);
}

}  // namespace

std::vector<StageEntry> project_stages() {
    using K = ValueKind;
    // name, phase, kind, kind varies, role, per head, layer text, model text, explain, record
    return {
        {"W_Q", "project", K::Signed, false, "a head's query weights", true, w_q_text, nullptr,
         explain_parameter, w_q_record},
        {"W_K", "project", K::Signed, false, "a head's key weights", true, w_k_text, nullptr,
         explain_parameter, w_k_record},
        {"W_V", "project", K::Signed, false, "a head's value weights", true, w_v_text, nullptr,
         explain_parameter, w_v_record},
        {"Q", "project", K::Signed, false, "queries: what each token looks for", true, q_text, q_model_text,
         qkv_explain, q_record},
        {"K", "project", K::Signed, false, "keys: what each token offers to be found by", true, k_text,
         k_model_text, qkv_explain, k_record},
        {"V", "project", K::Signed, false, "values: what each token hands over", true, v_text, v_model_text,
         qkv_explain, v_record},
        {"Q_rot", "project", K::Signed, false, "queries rotated by RoPE", true, q_rot_text, nullptr,
         rot_explain, q_rot_record},
        {"K_rot", "project", K::Signed, false, "keys rotated by RoPE", true, k_rot_text, nullptr, rot_explain,
         k_rot_record},
    };
}

}  // namespace attnviz
