// Phase "combine": each head's weighted average of the values, the heads side by side, the output
// projection W_O, the residual connection and post-LayerNorm.
#include <cmath>

#include "core/stages/common.hpp"
#include "core/stages/layer_run.hpp"

namespace attnviz {
namespace {

using namespace stages;

// --- head_output ----------------------------------------------------------------------------------

StageText head_output_text(const LayerWords& w) {
    const Config& cfg = w.cfg;
    if (!w.modes.linear) {
        std::string hexp =
            "Each output row is the weighted average of the value rows: o_i = Σⱼ A_ij v_j. Token i's "
            "new information is mostly the values of the keys it attends to.";
        std::string hexp_zh =
            "每个输出行是各值行的加权平均：o_i = Σⱼ A_ij v_j。词元 i 的新信息主要来自它所关注的那些键的值。";
        if (cfg.positional == Positional::Alibi && w.modes.kernel) {
            hexp += " (ALiBi adds to softmax scores; kernel weights ignore it.)";
            hexp_zh += "（ALiBi 作用于 softmax 的分数；核函数的权重忽略它。）";
        }
        return StageText{w.tr("Head output  A·V" + w.H(), "头的输出  A·V" + w.H_zh()),
                         "head" + sub(w.hd) + " = A V   (n×d_v)", w.tr(std::move(hexp), std::move(hexp_zh))};
    }
    std::string hexp =
        "o_i = φ(q_i)ᵀ(φ(K)ᵀV) / z_i: each query reads the d_k×d_v summary and divides by its "
        "normaliser. Same result as (implied weights)·V, at linear cost.";
    if (!w.x.implied_weights)
        hexp += " The implied n×m weights are not shown: for " + std::to_string(cfg.heads) +
                " heads at n = " + std::to_string(w.x.n) + " they would need " +
                text_num(std::round(double(cfg.heads) * double(w.x.n) * double(w.x.m) * 4 / 1048576.0)) +
                " MiB — exactly the quadratic cost linear attention avoids.";
    if (cfg.positional == Positional::Alibi)
        hexp +=
            " ALiBi adds a bias to softmax scores; linear attention has no score matrix, so it has "
            "no effect here.";
    return StageText{"Head output (linear)" + w.H(), "head" + sub(w.hd) + " = φ(Q)(φ(K)ᵀV) / z   (n×d_v)",
                     hexp};
}

StageText head_output_model_text(const ModelWords& w) {
    return {"Head output O" + w.h + " = A V", "O" + w.h + " = A" + w.h + " V" + w.h,
            "Each query's weighted average of the values it attends to."};
}

void head_output_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const Config& c = q.c;
    const int h = q.h, i = q.i, j = q.j;
    const std::string& cell = q.cell;
    const Mat A = stage_matrix(t, "weights", h), V = stage_matrix(t, "V", h);
    if (A.size() != 0) {
        L.push_back("head" + sub(h) + cell + " = Σⱼ A[" + q.ri + ", j] V[j, " + q.cj +
                    "]   (weighted average of the values)");
        const DotText d = dot_text(
            t.m, [&](int k) { return double(A(i, k)); }, [&](int k) { return double(V(k, j)); });
        L.push_back("= " + d.text);
        L.push_back(final_line(d.sum));
    } else {
        const Mat PQ = stage_matrix(t, "phi_Q", h), KV = stage_matrix(t, "KV", h),
                  Z = stage_matrix(t, "normalizer", h);
        L.push_back("head" + sub(h) + cell + " = φ(q" + sub(i) + ")·(φ(K)ᵀV)[:, " + q.cj + "] / z" + sub(i) +
                    "   (the n×m weights are never formed)");
        if (c.mask == MaskKind::Causal) {
            L.push_back("with the causal mask φ(K)ᵀV is the running sum over keys j ≤ " + std::to_string(i));
            L.push_back(final_line(q.st.matrix()(i, j)));
        } else {
            const DotText d = dot_text(
                int(PQ.cols()), [&](int a) { return double(PQ(i, a)); },
                [&](int a) { return double(KV(a, j)); });
            L.push_back("= (" + d.text + ") / " + f(Z(i, 0), 4));
            L.push_back(final_line(Z(i, 0) > 0 ? d.sum / Z(i, 0) : 0.0));
        }
    }
}

void head_output_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    const double flops = x.modes.linear ? 2 * x.nf * x.dkf * x.dvf + x.nf * x.dvf : 2 * x.nf * x.mf * x.dvf;
    r.add(x.q_ax, x.dv_ax, ValueKind::Signed, flops, x.heads[std::size_t(hd)].out);
}

// --- concat ---------------------------------------------------------------------------------------

StageText concat_text(const LayerWords& w) {
    const int h = w.cfg.heads, d_v = w.d_v;
    return StageText{
        w.tr("Concatenate heads", "拼接各头"),
        "concat = [head₀ | head₁ | … | head" + sub(h - 1) + "]   (n×h·d_v)",
        w.tr(
            "The " + std::to_string(h) + " head outputs are placed side by side: columns " + "0–" +
                std::to_string(d_v - 1) + " come from head 0, the next " + std::to_string(d_v) +
                " from head 1, and so on. Each head attended in its own subspace, with its own pattern; "
                "nothing "
                "is mixed "
                "yet.",
            std::to_string(h) + " 个头的输出并排放在一起：第 0–" + std::to_string(d_v - 1) +
                " 列来自头 0，接下来的 " + std::to_string(d_v) +
                " 列来自头 1，依此类推。每个头在自己的子空间里、以自己的模式做注意力；此时还没有任何混合。")};
}

void concat_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const int head = q.j / t.d_v, col = q.j % t.d_v;
    const Mat H = stage_matrix(t, "head_output", head);
    L.push_back("concat" + q.cell + " = head" + sub(head) + "[" + q.ri + ", " + std::to_string(col) +
                "]: columns " + std::to_string(head * t.d_v) + "–" +
                std::to_string(head * t.d_v + t.d_v - 1) + " come from head " + std::to_string(head));
    L.push_back(final_line(H(q.i, col)));
}

void concat_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    r.add(x.q_ax, x.hdv_ax, ValueKind::Signed, 0, x.concat);
}

// --- W_O, output ----------------------------------------------------------------------------------

StageText w_o_text(const LayerWords& w) {
    return StageText{w.tr("Output weights W_O", "输出投影权重 W_O"),
                     "W_O ∈ ℝ^(h·d_v×d_model) = " + std::to_string(w.cfg.heads * w.d_v) + "×" + w.dm_s,
                     w.tr("A learned matrix (here: random, N(0, 1/(h·d_v))) that mixes the heads' findings "
                          "and maps them back "
                          "to the "
                          "width of the residual stream.",
                          "一个学出来的矩阵（这里是随机的，取自 N(0, 1/(h·d_v))），它混合多头各自的发现，并把"
                          "它们映射回残差流的宽度。")};
}

void w_o_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    r.add(x.hdv_ax, x.dm_ax, ValueKind::Signed, 0, x.W_O);
}

StageText output_text(const LayerWords& w) {
    return StageText{w.tr("Output  concat·W_O", "输出  concat·W_O"), "output = concat W_O   (n×d_model)",
                     w.tr("The layer's proposed change for each token: a vector of width d_model = " +
                              w.dm_s + " built from what every head found.",
                          "这一层为每个词元提议的变化：一个宽度为 d_model = " + w.dm_s +
                              " 的向量，由每个头的发现组合而成。")};
}

void output_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const int i = q.i, j = q.j;
    const Mat C = stage_matrix(t, "concat"), W = stage_matrix(t, "W_O");
    L.push_back("output" + q.cell + " = Σ_c concat[" + q.ri + ", c] W_O[c, " + q.cj +
                "]   (mixes all heads)");
    const DotText d = dot_text(
        int(C.cols()), [&](int a) { return double(C(i, a)); }, [&](int a) { return double(W(a, j)); });
    const bool bias = t.weights && t.weights->b_O.size() != 0;
    if (!bias) {
        L.push_back("= " + d.text);
        L.push_back(final_line(d.sum));
    } else {
        const double b = t.weights->b_O(j);
        L.push_back("= " + d.text + " + b_O[" + q.cj + "] (" + f(b, 4) + ")");
        L.push_back(final_line(d.sum + b));
    }
}

void output_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    r.add(x.q_ax, x.dm_ax, ValueKind::Signed, 2 * x.nf * x.h * x.dvf * x.df, x.output);
}

// --- residual, layernorm_post ---------------------------------------------------------------------

StageText residual_text(const LayerWords& w) {
    return StageText{
        w.tr("Residual  X + output", "残差连接  X + output"), "residual = X + output",
        w.tr("The residual connection adds the change vector to the input instead of replacing it: the "
             "token "
             "keeps its "
             "original meaning and position, nudged by what it gathered from context (the embedding of "
             "'creature' moves toward 'fluffy blue creature'). It also lets gradients flow straight "
             "through "
             "deep "
             "stacks.",
             "残差连接把变化向量加到输入上，而不是替换输入：词元保留原来的语义和位置，只是被它从上下文中"
             "收集到的信息推动一点（“creature”的嵌入朝“fluffy blue creature”移动）。它还让梯度能直接穿过"
             "很深的层堆叠。")};
}

void residual_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    if (x.residual) r.add(x.q_ax, x.dm_ax, ValueKind::Signed, x.nf * x.df, x.residual);
}

StageText layernorm_post_text(const LayerWords& w) {
    return StageText{
        w.tr("LayerNorm (post)", "层规范化（后置）"),
        "LN(" + std::string(w.cfg.residual ? "X + output" : "output") + ")",
        w.tr("Post-LayerNorm (the original Transformer's order, Add & Norm): after the residual add, each "
             "row is re-centred and rescaled to mean 0, variance 1, so the next layer sees inputs of a "
             "fixed size. Modern LLMs mostly normalise before the sublayer instead (pre-LN), which trains "
             "more stably. Layer norm works across one token's features, not across a batch (batch "
             "norm).",
             "后置层规范化（原始 Transformer 的顺序，“加法和规范化”）：在残差相加之后，每一行被重新中心化、"
             "缩放为均值 0、方差 1，使下一层看到的输入大小固定。现代大语言模型大多改为在子层之前做规范化"
             "（前置 LN），训练更稳定。层规范化作用于单个词元的各个特征，而不是跨一个批量（批量规范化）。")};
}

void layernorm_post_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    if (x.post) r.add(x.q_ax, x.dm_ax, ValueKind::Signed, 5 * x.nf * x.df, x.post);
}

}  // namespace

std::vector<StageEntry> combine_stages() {
    using K = ValueKind;
    // name, phase, kind, kind varies, role, per head, layer text, model text, explain, record
    return {
        {"head_output", "combine", K::Signed, false, "a head's weighted average of the values", true,
         head_output_text, head_output_model_text, head_output_explain, head_output_record},
        {"concat", "combine", K::Signed, false, "the heads' outputs side by side", false, concat_text,
         nullptr, concat_explain, concat_record},
        {"W_O", "combine", K::Signed, false, "the output projection", false, w_o_text, nullptr,
         explain_parameter, w_o_record},
        {"output", "combine", K::Signed, false, "concat · W_O, the layer's attention output", false,
         output_text, nullptr, output_explain, output_record},
        {"residual", "combine", K::Signed, false, "X + output", false, residual_text, nullptr, explain_sum,
         residual_record},
        {"layernorm_post", "combine", K::Signed, false, "post-LayerNorm of the residual", false,
         layernorm_post_text, nullptr, explain_layernorm, layernorm_post_record},
    };
}

}  // namespace attnviz
