// The masks lab's numbers: one head's scaled scores under the masks of the model families, side by
// side. The mask decides which keys a query may see; softmax then spreads each row's weight over
// what it sees (a hidden key gets −∞ before softmax, exactly 0 after).
//   causal         GPT, Llama: query i sees keys 0..i
//   bidirectional  BERT, an encoder: every query sees every key
//   window         Mistral, Longformer: query i sees keys i − w + 1 .. i
//   padding        a batch padded to one length: the last p keys are [PAD], hidden from everyone
//   prefix         a prefix LM (T5's decoder-only variant, UniLM): the first k keys are seen by
//                  every query, the rest causally
// Shapes: n queries × n keys (self-attention).
#pragma once

#include <string>
#include <vector>

#include "core/shapes.hpp"

namespace attnviz {

enum class LabMask { Causal, Bidirectional, Window, Padding, Prefix };
const std::vector<LabMask>& all_lab_masks();
const char* lab_mask_name(LabMask mask);     // "causal", "bidirectional", ...
const char* lab_mask_example(LabMask mask);  // "GPT, Llama", "BERT", ...

struct MaskLabParams {
    Mat scaled;       // [n, n] one head's scores, already scaled (÷√d_k), before any mask
    int window = 3;   // window: keys per query, >= 1
    int padding = 2;  // padding: hidden keys at the end, 0 .. n − 1
    int prefix = 3;   // prefix: keys every query sees, 0 .. n
};

struct MaskPanel {
    LabMask mask = LabMask::Causal;
    Mat visible;  // [n, n] 1 where query i may see key j, else 0
    Mat weights;  // [n, n] softmax of the masked scores: each row sums to 1 over its visible keys
    int visible_pairs = 0;
};

struct MaskLab {
    std::vector<MaskPanel> panels;  // all_lab_masks()'s order
    std::vector<std::string> findings;
};

/// Which keys each query sees under `mask` ([n, n] of 0/1). Throws ConfigError for a window < 1,
/// padding outside 0 .. n − 1 or a prefix outside 0 .. n.
Mat lab_mask_visible(LabMask mask, int n, const MaskLabParams& params);
MaskLab mask_lab(const MaskLabParams& params);

}  // namespace attnviz
