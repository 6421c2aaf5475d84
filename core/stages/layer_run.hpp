// What the single layer's forward pass (core/trace.cpp) hands to the stage entries' record
// functions (core/stages/*.cpp): every matrix it computed, the axes, and a recorder that appends a
// stage with its texts. Internal to core/.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/stage.hpp"
#include "core/trace.hpp"

namespace attnviz {

using MatPtr = std::shared_ptr<const Mat>;

// Everything one head computes. Heads run in parallel and only write their own HeadResult.
struct HeadResult {
    MatPtr W_Q, W_K, W_V;                 // d_model x d_k, d_model x d_k, d_model x d_v
    MatPtr Q, K, V;                       // n x d_k, m x d_k, m x d_v
    MatPtr Q_rot, K_rot;                  // RoPE only
    MatPtr S;                             // n x m scores (softmax attention)
    MatPtr A;                             // n x m weights (null for linear attention too large to show)
    MatPtr phi_Q, phi_K, KV, normalizer;  // linear attention
    MatPtr out;                           // n x d_v
    Vec entropy;                          // n (empty when A is null)
    std::string preset_text;              // designed-head explanation
};

// The layer's forward, computed: what the record functions read.
struct LayerRun {
    explicit LayerRun(const Config& c) : cfg(c), modes(layer_modes(c)) {}
    const Config& cfg;
    LayerModes modes;
    bool cross = false;
    int n = 0, m = 0, d = 0, h = 0, d_k = 0, d_v = 0;
    double nf = 0, mf = 0, df = 0, dkf = 0, dvf = 0;
    Axis q_ax, k_ax, v_ax, dm_ax, dk_ax, dv_ax,
        hdv_ax;                                  // queries, keys, vocabulary, d_model, d_k, d_v, h·d_v
    MatPtr OH, E, P, X, Y, Xn;                   // one-hot, embedding, positions, input, source, LN(X)
    std::shared_ptr<const BoolMat> allowed;      // n x m, null = every key visible
    std::vector<HeadResult> heads;               // h
    MatPtr concat, W_O, output, residual, post;  // residual, post: null when not used
};

// Appends stages to a trace, each with the texts of the entry being recorded.
class LayerRecorder {
  public:
    LayerRecorder(const LayerRun& run, const LayerTextContext& text, Trace& out)
        : run(run), text_(text), out_(out) {}
    const LayerRun& run;

    /// Records `entry` for `head` (−1 for a stage shared by the heads), if the config uses it.
    void record(const StageEntry& entry, int head) {
        entry_ = &entry;
        head_ = head;
        entry.record(*this, head);
    }
    /// The stage being recorded: its matrix stored (`data`) or derived on demand (`derive`, with an
    /// optional one-cell rule giving the same numbers).
    void add(const Axis& rows, const Axis& cols, ValueKind kind, double flops, MatPtr data,
             std::function<Mat()> derive = nullptr, std::function<float(int, int)> derive_cell = nullptr) {
        StageText words = entry_->layer_text(LayerWords(run.cfg, text_, head_));
        Stage s;
        s.name = entry_->name;
        s.head = head_;
        s.title = std::move(words.title);
        s.formula = std::move(words.formula);
        s.explanation = std::move(words.explanation);
        // The Chinese texts beside them, kept only where they differ (an untranslated variant: none).
        StageText zh = entry_->layer_text(LayerWords(run.cfg, text_, head_, TextLanguage::Chinese));
        if (zh.title != s.title) s.title_zh = std::move(zh.title);
        if (zh.explanation != s.explanation) s.explanation_zh = std::move(zh.explanation);
        s.rows = rows;
        s.cols = cols;
        s.kind = kind;
        s.flops = flops;
        s.bytes = double(rows.size) * double(cols.size) * sizeof(float);
        s.data = std::move(data);
        s.derive = std::move(derive);
        s.derive_cell = std::move(derive_cell);
        out_.stages.push_back(std::move(s));
    }

  private:
    const LayerTextContext& text_;
    Trace& out_;
    const StageEntry* entry_ = nullptr;
    int head_ = -1;
};

}  // namespace attnviz
