// A Hugging Face encoder–decoder through the one forward: see core/seq2seq.hpp.
#include "core/seq2seq.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace attnviz {

Seq2SeqWeights<float> seq2seq_weights(const ModelWeights& m) {
    if (!m.spec.encoder_decoder) throw Error("model: " + m.spec.architecture + " is not an encoder–decoder");
    Seq2SeqWeights<float> w;
    w.decoder = decoder_weights(m);
    // The encoder: the same views over its own blocks, bidirectional, no cross-attention, no logits.
    ModelWeights enc;
    enc.spec = m.spec;
    enc.spec.n_layer = m.spec.s2s.n_encoder_layer;
    enc.wte = m.wte;
    enc.wpe = m.encoder.wpe;
    enc.ln_embed = m.encoder.ln_embed;
    enc.blocks = m.encoder.blocks;
    enc.ln_f = m.encoder.ln_f;
    enc.rel_bias = m.encoder.rel_bias;
    w.encoder = decoder_weights(enc);
    w.encoder.shape.causal = false;
    w.encoder.shape.cross = false;
    w.encoder.unembed = nullptr;
    w.encoder.unembed_b = nullptr;
    return w;
}

namespace {

/// Hooks recording every stage of one stack into `out` (and its rollout from the self-attention).
ForwardHooks<float> stage_recorder(StackStages& out, int n_layer, int h, int group, bool rollout,
                                   std::vector<Mat>& layer_weights) {
    ForwardHooks<float> rec;
    out.layers.resize(std::size_t(n_layer));
    for (int l = 0; l < n_layer; ++l) {
        out.layers[std::size_t(l)].heads.resize(std::size_t(h));
        for (int st = 0; st < int(HookStage::count); ++st)
            if (HookStage(st) != HookStage::ln_f && HookStage(st) != HookStage::logits &&
                HookStage(st) != HookStage::position_bias)
                rec.add(HookStage(st), l);
    }
    rec.add(HookStage::ln_f, -1);
    rec.add(HookStage::position_bias, -1);
    if (rollout) layer_weights.resize(std::size_t(h));
    rec.call = [&out, h, group, rollout, &layer_weights](const HookPoint& p, nn::Block<float> v) {
        if (p.layer < 0) {
            if (p.stage == HookStage::ln_f) out.ln_f = v;
            if (p.stage == HookStage::position_bias) {
                if (out.position_bias.size() < std::size_t(h)) out.position_bias.resize(std::size_t(h));
                out.position_bias[std::size_t(p.head)] = v;
            }
            return;
        }
        if (rollout && p.stage == HookStage::weights) layer_weights[std::size_t(p.head)] = v;
        if (rollout && p.stage == HookStage::resid_mid)  // (every head of the layer is done by then)
            rollout_layer(layer_weights, out.rollout);
        keep_stage(out.layers[std::size_t(p.layer)], p, v, group, true);
    };
    return rec;
}

}  // namespace

Seq2SeqForward run_seq2seq(const ModelWeights& model, const std::vector<int>& source,
                           const std::vector<int>& target, const Seq2SeqRunOptions& o) {
    const ModelSpec& s = model.spec;
    check_token_ids(s, source, "source");
    check_token_ids(s, target, "target");
    const int m = int(source.size()), n = int(target.size()), h = s.n_head, group = s.n_head / s.n_kv_head;
    const Seq2SeqWeights<float> w = seq2seq_weights(model);
    Seq2SeqForward out;
    std::vector<Mat> enc_w, dec_w;  // the current layer's self-attention weights, for the rollouts
    ForwardHooks<float> enc_rec, dec_rec;
    if (o.keep) {
        enc_rec = stage_recorder(out.encoder, s.s2s.n_encoder_layer, h, group, o.rollout, enc_w);
        dec_rec = stage_recorder(out.decoder, s.n_layer, h, group, o.rollout, dec_w);
        for (LayerStages& st : out.decoder.layers) st.cross_heads.resize(std::size_t(h));
    }
    ForwardOptions<float> fo;
    fo.keep_layers = false;
    fo.threads = std::max(1, o.threads);
    fo.cancel = o.cancel;
    fo.hooks = o.keep ? &enc_rec : nullptr;
    SeqActs<float> E, D;
    seq2seq_encode(w, source.data(), 1, m, E, fo);
    if (o.cancel && o.cancel->load()) throw Cancelled();
    fo.hooks = o.keep ? &dec_rec : nullptr;
    fo.last_logits = !o.all_logits;
    seq2seq_decode(w, E.f, m, target.data(), 1, n, D, fo);
    if (o.cancel && o.cancel->load()) throw Cancelled();
    out.encoder_output = std::move(E.f);
    out.logits = std::move(D.logits);
    return out;
}

std::uint64_t seq2seq_forward_bytes(const ModelSpec& s, int m, int n, const Seq2SeqRunOptions& o) {
    const std::uint64_t M = std::uint64_t(std::max(0, m)), N = std::uint64_t(std::max(0, n)), f = 4;
    const std::uint64_t d = std::uint64_t(s.d_model), h = std::uint64_t(s.n_head),
                        dh = std::uint64_t(s.d_head);
    auto stack = [&](std::uint64_t rows, std::uint64_t keys, int layers, bool cross) {
        std::uint64_t per_layer = h * (4 * rows * dh + 2 * rows * rows) * f + 6 * rows * d * f;
        if (cross)
            per_layer += h * (rows * dh + 2 * keys * dh + 2 * rows * keys + rows * dh) * f + rows * d * f;
        std::uint64_t bytes = o.keep ? std::uint64_t(layers) * per_layer + (h + 4) * rows * rows * f : 0;
        // working set: the residual stream and norms, q | k | v, the MLP, the attention matrices
        bytes += 8 * rows * d * f + 4 * rows * h * dh * f + 3 * rows * std::uint64_t(s.d_ff) * f +
                 h * (rows * rows + rows * keys) * f;
        return bytes;
    };
    return stack(M, 0, s.s2s.n_encoder_layer, false) + stack(N, M, s.n_layer, true) +
           (o.all_logits ? N : 1) * std::uint64_t(s.vocab_size) * f;
}

}  // namespace attnviz
