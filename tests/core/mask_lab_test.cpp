// The masks lab (core/mask_lab): which keys each mask shows, and the weights softmax gives them.
#include "core/mask_lab.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz {
namespace {

Mat scores(int n) {
    Mat s(n, n);  // [n, n] distinct, signed
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) s(i, j) = float((i * 7 + j * 3) % 5) - 1.5f + 0.1f * float(j);
    return s;
}

std::string pattern(const Mat& v) {
    std::string out;
    for (int i = 0; i < v.rows(); ++i) {
        for (int j = 0; j < v.cols(); ++j) out += v(i, j) > 0.5f ? '#' : '.';
        out += '/';
    }
    return out;
}

TEST(MaskLab, EachMaskShowsTheKeysItsFamilySees) {
    MaskLabParams p;
    p.window = 2, p.padding = 1, p.prefix = 2;
    EXPECT_EQ(pattern(lab_mask_visible(LabMask::Causal, 4, p)), "#.../##../###./####/");
    EXPECT_EQ(pattern(lab_mask_visible(LabMask::Bidirectional, 4, p)), "####/####/####/####/");
    EXPECT_EQ(pattern(lab_mask_visible(LabMask::Window, 4, p)), "#.../##../.##./..##/");
    EXPECT_EQ(pattern(lab_mask_visible(LabMask::Padding, 4, p)), "###./###./###./###./");
    EXPECT_EQ(pattern(lab_mask_visible(LabMask::Prefix, 4, p)), "##../##../###./####/");
}

TEST(MaskLab, WeightsAreSoftmaxOverTheVisibleKeysOnly) {
    MaskLabParams p;
    p.scaled = scores(6);
    const MaskLab lab = mask_lab(p);
    ASSERT_EQ(lab.panels.size(), all_lab_masks().size());
    for (const MaskPanel& panel : lab.panels) {
        for (int i = 0; i < 6; ++i) {
            double sum = 0;
            float row_max = -1e30f;
            for (int j = 0; j < 6; ++j)
                if (panel.visible(i, j) > 0.5f) row_max = std::max(row_max, p.scaled(i, j));
            double z = 0;
            for (int j = 0; j < 6; ++j)
                if (panel.visible(i, j) > 0.5f) z += std::exp(double(p.scaled(i, j) - row_max));
            for (int j = 0; j < 6; ++j) {
                sum += panel.weights(i, j);
                if (panel.visible(i, j) < 0.5f) {
                    EXPECT_EQ(panel.weights(i, j), 0.0f)
                        << lab_mask_name(panel.mask) << " (" << i << ", " << j << ")";
                } else {
                    EXPECT_NEAR(panel.weights(i, j), std::exp(double(p.scaled(i, j) - row_max)) / z, 1e-6)
                        << lab_mask_name(panel.mask) << " (" << i << ", " << j << ")";
                }
            }
            EXPECT_NEAR(sum, 1.0, 1e-6) << lab_mask_name(panel.mask) << " row " << i;
        }
    }
    EXPECT_EQ(lab.panels[0].visible_pairs, 21);  // causal: 6·7/2
    EXPECT_EQ(lab.panels[1].visible_pairs, 36);
    EXPECT_EQ(lab.panels[0].weights(0, 0), 1.0f);
}

TEST(MaskLab, PaddingDoesNotChangeWhatTheRealTokensCompute) {
    MaskLabParams p;
    p.scaled = scores(7);
    p.padding = 3;
    const MaskLab lab = mask_lab(p);
    const Mat real = softmax_rows(p.scaled.topLeftCorner(4, 4));  // the 4 real tokens, unpadded
    const MaskPanel& pad = lab.panels[3];
    ASSERT_EQ(pad.mask, LabMask::Padding);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
            EXPECT_NEAR(pad.weights(i, j), real(i, j), 1e-6) << "(" << i << ", " << j << ")";
    EXPECT_NE(lab.findings.size(), 0u);
}

TEST(MaskLab, RefusesParametersOutsideTheirRange) {
    MaskLabParams p;
    p.scaled = scores(4);
    p.window = 0;
    EXPECT_THROW(mask_lab(p), ConfigError);
    p.window = 2, p.padding = 4;  // would hide every key
    EXPECT_THROW(mask_lab(p), ConfigError);
    p.padding = 0, p.prefix = 5;
    EXPECT_THROW(mask_lab(p), ConfigError);
    p.prefix = 0;
    p.scaled = Mat::Zero(3, 4);  // cross-attention shape
    EXPECT_THROW(mask_lab(p), ConfigError);
}

}  // namespace
}  // namespace attnviz
