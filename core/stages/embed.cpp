// Phase "embed": tokens become vectors. One-hot rows, the embedding lookup, positions, the layer's
// input X (and the source Y of cross-attention), pre-LayerNorm.
#include <cmath>

#include "core/axes.hpp"
#include "core/ops.hpp"
#include "core/stages/common.hpp"
#include "core/stages/layer_run.hpp"

namespace attnviz {
namespace {

using namespace stages;

// --- one_hot --------------------------------------------------------------------------------------

StageText one_hot_text(const LayerWords& w) {
    return StageText{
        w.tr("One-hot tokens", "词元的独热编码"), "onehot(tᵢ) ∈ {0,1}ᵛ",
        w.tr(
            "Each token becomes a row of " + std::to_string(w.x.V) +
                " zeros with a single 1 in the column of its vocabulary entry (the vocabulary lists every "
                "distinct "
                "token in order of first appearance). One-hot rows are all equally far apart and say nothing "
                "about "
                "meaning; they are only an address. Look for the single bright cell per row, and for "
                "repeated "
                "words, "
                "whose rows are identical.",
            "每个词元变成一行，长度为 " + std::to_string(w.x.V) +
                "：只有它在词表中那一项所在的列是 1，其余全是零（词表按首次出现的顺序列出所有不同的"
                "词元）。独热编码的各行彼此距离都相同，不含任何语义，只是一个地址。请看每行唯一的亮格；"
                "重复出现的词，其行完全相同。")};
}

void one_hot_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const int i = q.i, j = q.j;
    const std::string tok = (*t.query_tokens)[std::size_t(i)], v = (*t.vocab)[std::size_t(j)];
    L.push_back("onehot[" + q.ri + ", " + v + "] = 1 if token " + std::to_string(i) +
                " is vocabulary entry " + std::to_string(j) + ", else 0");
    L.push_back("token " + std::to_string(i) + " is '" + tok + "', entry " + std::to_string(j) + " is '" + v +
                "'");
    L.push_back(final_line(tok == v ? 1.0 : 0.0));
}

void one_hot_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    r.add(x.q_ax, x.v_ax, ValueKind::Indicator, 0, x.OH);
}

// --- embedding ------------------------------------------------------------------------------------

StageText embedding_text(const LayerWords& w) {
    return StageText{
        w.tr("Embedding  E = onehot × table", "嵌入  E = onehot × 嵌入表"),
        "E = onehot · W_E   (W_E: V×d_model)",
        w.tr(
            "Multiplying a one-hot row by the embedding table (" + std::to_string(w.x.V) + "×" + w.dm_s +
                ", entries drawn from N(0,1) here, learned in a real model) picks out exactly one row of the "
                "table: "
                "matrix multiplication by a one-hot vector is a table lookup. So the embedding of a word is "
                "just "
                "its row "
                "of the table, and the same word gets the same vector wherever it appears. The sparse, "
                "meaningless "
                "one-hot address becomes a dense vector in which directions can carry meaning." +
                w.x.embedding_note,
            "独热行乘以嵌入表（" + std::to_string(w.x.V) + "×" + w.dm_s +
                "，这里的元素取自 N(0,1)，真实模型中则是学出来的），恰好取出表中的一行：用独热向量做矩阵"
                "乘法就是查表。所以一个词的嵌入就是它在表中的那一行，同一个词无论出现在哪里都得到同一个"
                "向量。稀疏而无意义的独热地址由此变成稠密的向量，向量的方向可以承载语义。" +
                w.x.embedding_note)};
}

void embedding_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const Mat OH = stage_matrix(t, "one_hot");
    Eigen::Index id = 0;
    OH.row(q.i).maxCoeff(&id);
    L.push_back("E" + q.cell + " = Σᵥ onehot[" + q.ri + ", v] · table[v, " + q.cj + "]");
    L.push_back("= table['" + (*t.vocab)[std::size_t(id)] + "', " + q.cj +
                "]: the single 1 in the one-hot row picks row " + std::to_string(id) + " of the table");
    L.push_back(final_line(q.st.matrix()(q.i, q.j)));
}

void embedding_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    r.add(x.q_ax, x.dm_ax, ValueKind::Signed, x.nf * x.df, x.E);
}

// --- positional -----------------------------------------------------------------------------------

StageText positional_text(const LayerWords& w) {
    const Config& cfg = w.cfg;
    std::string title, formula, expl;
    switch (cfg.positional) {
        case Positional::Sinusoidal:
            title = w.tr("Positional encoding (sinusoidal)", "位置编码（正弦）");
            formula = "PE(p,2i) = sin(p/" + text_num(cfg.pe_base) + "^(2i/d)),  PE(p,2i+1) = cos(p/" +
                      text_num(cfg.pe_base) + "^(2i/d))";
            expl =
                "Attention itself treats the tokens as a set: shuffle them and every output shuffles the "
                "same "
                "way. To know word order, each position p gets a fixed vector of sines and cosines at "
                "geometrically spaced frequencies, from one cycle per ~6 tokens (left columns) to very "
                "slow "
                "waves (right columns). Shifting a position by δ is a rotation of each (sin, cos) pair: "
                "PE(p+δ) = R(δ)·PE(p), so relative offsets are easy for W_Q and W_K to read. Look for "
                "stripes "
                "that get wider to the right.";
            expl = w.tr(std::move(expl),
                        "注意力本身把词元看作一个集合：打乱它们的顺序，每个输出也以同样的方式打乱。为了知道"
                        "词序，每个位置 p 得到一个固定的向量，由频率按几何级数排列的正弦和余弦组成，从约每 6 "
                        "个词元一个周期（左边的列）到变化极慢的波（右边的列）。把位置平移 δ 相当于把每一对 "
                        "(sin, cos) 旋转一次：PE(p+δ) = R(δ)·PE(p)，所以 W_Q 和 W_K 很容易读出相对偏移。"
                        "请看越往右越宽的条纹。");
            break;
        case Positional::Learned:
            title = w.tr("Positional encoding (learned)", "位置编码（可学习）");
            formula = "P = W_pos[0:n]   (one trainable row per position)";
            expl =
                "Each position gets its own vector, learned during training (here: random, untrained). "
                "Unlike sinusoids, a learned table cannot encode positions beyond the longest training "
                "text.";
            expl = w.tr(std::move(expl),
                        "每个位置有自己的向量，在训练中学得（这里是随机的，未经训练）。与正弦编码不同，学得"
                        "的表无法表示超出最长训练文本的位置。");
            break;
        case Positional::Rope:
            title = "Positional encoding (none added: RoPE)";
            formula = "P = 0   (RoPE rotates Q and K instead)";
            expl =
                "With rotary position embeddings nothing is added to the input: position enters later, "
                "by "
                "rotating each (q, k) pair of coordinates by an angle proportional to the position "
                "(stages "
                "Q_rot, K_rot), so q_p·k_s depends only on the offset s − p.";
            break;
        case Positional::Alibi:
            title = "Positional encoding (none added: ALiBi)";
            formula = "P = 0   (ALiBi adds −slope·|i−j| to the scores)";
            expl =
                "With ALiBi nothing is added to the input: each head instead subtracts a penalty "
                "proportional "
                "to the distance |i − j| from its scores (stage alibi), so nearby tokens are preferred.";
            break;
        case Positional::None:
            title = w.tr("Positional encoding (none)", "位置编码（无）");
            formula = "P = 0";
            expl =
                "No positional information: the layer sees the tokens as an unordered set. Permuting the "
                "tokens permutes the outputs in exactly the same way (without a mask). Try it: the "
                "pattern "
                "of a repeated word is identical at every position.";
            expl = w.tr(std::move(expl),
                        "没有位置信息：这一层把词元看作无序的集合。打乱词元的顺序，输出也以完全相同的方式"
                        "打乱（在没有掩码时）。试试看：重复出现的词在每个位置上的模式都一样。");
            break;
    }
    return StageText{title, formula, expl};
}

void positional_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const Config& c = q.c;
    const int i = q.i, j = q.j;
    if (c.positional == Positional::Sinusoidal) {
        const int pair = j / 2;
        const double w = pe_frequency(pair, t.d_model, c.pe_base);
        const std::string fn = j % 2 == 0 ? "sin" : "cos";
        L.push_back("PE(p=" + std::to_string(i) + ", " + std::to_string(j) + ") = " + fn + "(p / " +
                    f(c.pe_base, 6) + "^(" + std::to_string(2 * pair) + "/" + std::to_string(t.d_model) +
                    "))");
        L.push_back("= " + fn + "(" + std::to_string(i) + " × " + f(w, 4) + ") = " + fn + "(" + f(i * w, 4) +
                    ")");
        L.push_back(final_line(j % 2 == 0 ? std::sin(i * w) : std::cos(i * w)));
    } else if (c.positional == Positional::Learned) {
        L.push_back("P" + q.cell + " = row " + std::to_string(i) + " of the learned position table, column " +
                    q.cj);
        L.push_back(final_line(q.st.matrix()(i, j)));
    } else {
        L.push_back("P" + q.cell + " = 0: with " + to_string(c.positional) +
                    " nothing is added to the embeddings");
        L.push_back(final_line(0.0));
    }
}

void positional_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    // Rows are positions, not words: P depends only on where a token is.
    r.add(axes::position_axis(x.n), x.dm_ax, ValueKind::Signed, x.nf * x.df * 2, x.P);
}

// --- input ----------------------------------------------------------------------------------------

StageText input_text(const LayerWords& w) {
    return StageText{
        w.tr("Input  X = E + P", "输入  X = E + P"), "X = E + P",
        w.tr(
            "The layer's input: each token's embedding plus its position's vector. Adding (rather than "
            "appending) "
            "keeps the width d_model = " +
                w.dm_s +
                "; meaning and position share the same space, and W_Q, W_K, W_V can read either. This is the "
                "start of "
                "the residual stream that the layer will later add its change to.",
            "这一层的输入：每个词元的嵌入加上它所在位置的向量。相加（而不是接在后面）使宽度保持为 "
            "d_model = " +
                w.dm_s +
                "；语义和位置共享同一个空间，W_Q、W_K、W_V 都可以读取其中任意一种。这是残差流的起点，"
                "这一层稍后会把它算出的变化加到上面。")};
}

void input_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    r.add(x.q_ax, x.dm_ax, ValueKind::Signed, x.nf * x.df, x.X);
}

// --- source (cross-attention) ---------------------------------------------------------------------

StageText source_text(const LayerWords& w) {
    return StageText{
        w.tr("Source  Y (keys and values)", "源序列  Y（键和值）"), "Y = onehot(source)·W_E + P",
        w.tr("Cross-attention: queries come from the text X, but keys and values come from a second text "
             "Y "
             "(as when a "
             "translation decoder reads the encoded source sentence). Y is embedded with the same table "
             "and "
             "positional encoding. Scores, weights and the pattern are n×m: one row per query token, one "
             "column per "
             "source token.",
             "交叉注意力：查询来自文本 X，而键和值来自第二段文本 Y（就像翻译模型的解码器读取编码后的源"
             "句子）。Y 用同一张嵌入表和同样的位置编码来嵌入。注意力分数、权重和注意力模式都是 n×m 的："
             "每个查询词元一行，每个源词元一列。")};
}

void source_explain(const CellQuery& q, Lines& L) {
    L.push_back("Y" + q.cell + " = embedding of source token '" + q.ri +
                "' + positional encoding of position " + std::to_string(q.i) + ", dimension " + q.cj);
    L.push_back(final_line(q.st.matrix()(q.i, q.j)));
}

void source_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    if (x.cross) r.add(x.k_ax, x.dm_ax, ValueKind::Signed, x.mf * x.df * 2, x.Y);
}

// --- layernorm (pre) ------------------------------------------------------------------------------

StageText layernorm_text(const LayerWords& w) {
    return StageText{
        w.tr("LayerNorm (pre)", "层规范化（前置）"), "LN(x) = (x − mean(x)) / √(var(x) + ε)",
        w.tr("Pre-LayerNorm: before projecting, every token's vector is re-centred to mean 0 and rescaled "
             "to "
             "variance "
             "1 (no learned gain or bias here). This keeps q·k in a predictable range however large the "
             "residual "
             "stream grows, which is why most modern transformers normalise first. Q, K and V read LN(X)" +
                 std::string(w.cfg.cross_attention() ? " and LN(Y)" : "") +
                 "; the residual still adds to the raw X. Layer norm normalises across the features of "
                 "ONE "
                 "token (one row), so each sequence and each token is treated on its own; batch norm, "
                 "common "
                 "in CNNs, normalises one feature across the samples of a batch instead, which suits "
                 "images "
                 "but not sequences of varying length.",
             "前置层规范化：在投影之前，把每个词元的向量重新中心化为均值 0、缩放为方差 1（这里没有可学习的"
             "增益和偏置）。无论残差流变得多大，这都让 q·k 保持在可预测的范围内，所以大多数现代 Transformer "
             "都先做规范化。Q、K 和 V 读取 LN(X)" +
                 std::string(w.cfg.cross_attention() ? " 和 LN(Y)" : "") +
                 "；残差仍然加到原始的 X 上。层规范化在单个词元的各个特征上（一行）进行，因此每个序列、每个"
                 "词元都单独处理；而 CNN 中常用的批量规范化是在一个批量的样本之间对同一个特征做规范化，适合"
                 "图像，却不适合长度不一的序列。")};
}

void layernorm_record(LayerRecorder& r, int) {
    const LayerRun& x = r.run;
    if (x.modes.pre_ln) r.add(x.q_ax, x.dm_ax, ValueKind::Signed, 5 * x.nf * x.df, x.Xn);
}

}  // namespace

std::vector<StageEntry> embed_stages() {
    using K = ValueKind;
    // name, phase, kind, kind varies, role, per head, layer text, model text, explain, record
    return {
        {"one_hot", "embed", K::Indicator, false, "each token as a one-hot row over the vocabulary", false,
         one_hot_text, nullptr, one_hot_explain, one_hot_record},
        {"embedding", "embed", K::Signed, false, "each token's row of the embedding table", false,
         embedding_text, nullptr, embedding_explain, embedding_record},
        {"positional", "embed", K::Signed, false, "the position signal added to the embeddings", false,
         positional_text, nullptr, positional_explain, positional_record},
        {"input", "embed", K::Signed, false, "X = E + P, what the layer reads", false, input_text, nullptr,
         explain_sum, input_record},
        {"source", "embed", K::Signed, false, "Y, the keys' and values' input in cross-attention", false,
         source_text, nullptr, source_explain, source_record},
        {"layernorm", "embed", K::Signed, false, "pre-LayerNorm of the input", false, layernorm_text, nullptr,
         explain_layernorm, layernorm_record},
    };
}

}  // namespace attnviz
