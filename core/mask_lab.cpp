// The masks lab: see core/mask_lab.hpp.
#include "core/mask_lab.hpp"

#include <cstdio>
#include <limits>

#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz {

const std::vector<LabMask>& all_lab_masks() {
    static const std::vector<LabMask> masks = {LabMask::Causal, LabMask::Bidirectional, LabMask::Window,
                                               LabMask::Padding, LabMask::Prefix};
    return masks;
}

const char* lab_mask_name(LabMask mask) {
    switch (mask) {
        case LabMask::Causal:
            return "causal";
        case LabMask::Bidirectional:
            return "bidirectional";
        case LabMask::Window:
            return "sliding window";
        case LabMask::Padding:
            return "padding";
        case LabMask::Prefix:
            return "prefix LM";
    }
    return "?";
}

const char* lab_mask_example(LabMask mask) {
    switch (mask) {
        case LabMask::Causal:
            return "GPT, Llama";
        case LabMask::Bidirectional:
            return "BERT, an encoder";
        case LabMask::Window:
            return "Mistral, Longformer";
        case LabMask::Padding:
            return "a padded batch";
        case LabMask::Prefix:
            return "UniLM, T5's LM variant";
    }
    return "";
}

Mat lab_mask_visible(LabMask mask, int n, const MaskLabParams& p) {
    if (p.window < 1)
        throw ConfigError("window: a query must see at least 1 key (got " + std::to_string(p.window) + ")");
    if (p.padding < 0 || p.padding > n - 1)
        throw ConfigError("padding: from 0 to " + std::to_string(n - 1) + " [PAD] keys for " +
                          std::to_string(n) + " tokens (got " + std::to_string(p.padding) + ")");
    if (p.prefix < 0 || p.prefix > n)
        throw ConfigError("prefix: from 0 to " + std::to_string(n) + " keys (got " +
                          std::to_string(p.prefix) + ")");
    Mat v = Mat::Zero(n, n);  // [n, n]
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            bool see = false;
            switch (mask) {
                case LabMask::Causal:
                    see = j <= i;
                    break;
                case LabMask::Bidirectional:
                    see = true;
                    break;
                case LabMask::Window:
                    see = j <= i && j > i - p.window;
                    break;
                case LabMask::Padding:
                    see = j < n - p.padding;
                    break;
                case LabMask::Prefix:
                    see = j < p.prefix || j <= i;
                    break;
            }
            v(i, j) = see ? 1.0f : 0.0f;
        }
    return v;
}

MaskLab mask_lab(const MaskLabParams& p) {
    const int n = int(p.scaled.rows());
    if (n == 0 || p.scaled.cols() != n)
        throw ConfigError("the masks lab needs a square matrix of scores (self-attention)");
    MaskLab lab;
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for (LabMask mask : all_lab_masks()) {
        MaskPanel panel;
        panel.mask = mask;
        panel.visible = lab_mask_visible(mask, n, p);
        const Mat masked = (panel.visible.array() > 0.5f).select(p.scaled, neg_inf);  // [n, n]
        panel.weights = softmax_rows(masked);
        panel.visible_pairs = int(panel.visible.sum());
        lab.panels.push_back(std::move(panel));
    }
    const MaskPanel& causal = lab.panels[0];
    const MaskPanel& both = lab.panels[1];
    char b[320];
    std::snprintf(b, sizeof b,
                  "causal: %d of %d query–key pairs are visible (n(n+1)/2); query 0 sees only itself, so its "
                  "weight on itself is %.3f whatever the scores",
                  causal.visible_pairs, n * n, double(causal.weights(0, 0)));
    lab.findings.push_back(b);
    if (n >= 2) {
        // The same visible pair gets another weight when the row sees more keys: softmax renormalises.
        const int i = n / 2;
        std::snprintf(b, sizeof b,
                      "query %d's weight on key 0 is %.3f with the causal mask (%d keys visible) and %.3f "
                      "bidirectionally (%d keys): the same score, spread over more keys",
                      i, double(causal.weights(i, 0)), i + 1, double(both.weights(i, 0)), n);
        lab.findings.push_back(b);
    }
    const MaskPanel& pad = lab.panels[3];
    if (p.padding > 0) {
        std::snprintf(
            b, sizeof b,
            "padding: the %d [PAD] key%s get%s weight exactly 0 in every row, so padding a sentence "
            "does not change what its real tokens compute (%d visible pairs)",
            p.padding, p.padding == 1 ? "" : "s", p.padding == 1 ? "s" : "", pad.visible_pairs);
        lab.findings.push_back(b);
    }
    return lab;
}

}  // namespace attnviz
