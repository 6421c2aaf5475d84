// The optimizer's loops give the same bits wherever their buffers lie. A vectorised loop may do the
// first or last few elements in scalar code, and which ones depends on the buffer's address mod 64;
// if the scalar and vector code round differently, a training run depends on where malloc put its
// buffers (the shipped model is checked byte for byte against a re-run, so it would depend on, say,
// the length of the output path). Also built into the Release tests (tests/release), where the loops
// are optimised and vectorised; under the sanitizers train.cpp is unoptimised.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/train.hpp"

namespace attnviz {
namespace {

/// n floats starting `offset` floats past a 64-byte boundary, filled from rng.
struct Placed {
    std::vector<float> storage;
    float* p = nullptr;
    Placed(std::size_t n, int offset, const std::vector<float>& values) : storage(n + 32) {
        const auto base = reinterpret_cast<std::uintptr_t>(storage.data());
        p = storage.data() + ((64 - base % 64) % 64) / sizeof(float) + std::size_t(offset);
        for (std::size_t i = 0; i < n; ++i) p[i] = values[i];
    }
};

TEST(TrainPlacement, AdamWAndClippingAreBitForBitAtEveryAlignment) {
    const std::size_t n = 1000 + 37;  // a vector body and a remainder
    std::mt19937 rng(3);
    std::normal_distribution<float> nd;
    std::vector<float> p0(n), g0(n);
    for (auto& x : p0) x = nd(rng);
    for (auto& x : g0) x = 0.3f * nd(rng);
    std::vector<float> first;
    double first_norm = 0;
    for (int offset = 0; offset < 16; ++offset) {  // every float position within 64 bytes
        Placed p(n, offset, p0), g(n, (offset * 7) % 16, g0),
            m(n, (offset * 3) % 16, std::vector<float>(n, 0)),
            v(n, (offset * 5) % 16, std::vector<float>(n, 0));
        double norm = 0;
        AdamWConfig cfg;
        cfg.weight_decay = 0.1;
        for (long step = 1; step <= 3; ++step) {
            for (std::size_t i = 0; i < n; ++i) g.p[i] = g0[i] * float(step);
            norm = clip_grad_norm(g.p, n, 1.0);
            adamw_update(p.p, g.p, m.p, v.p, n, step, cfg, 1e-2);
        }
        if (offset == 0) {
            first.assign(p.p, p.p + n);
            first_norm = norm;
            continue;
        }
        EXPECT_EQ(norm, first_norm) << "gradient norm, offset " << offset;
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(p.p[i], first[i])
                << "parameter " << i << " with the buffers " << offset << " floats past a 64-byte boundary";
    }
}

/// The vector form is the raw form on the vector's buffer.
TEST(TrainPlacement, VectorFormIsTheRawForm) {
    std::vector<float> p{1.0f, -2.0f, 0.5f, 3.0f}, g{0.1f, -0.3f, 0.0f, 2.0f};
    std::vector<float> p2 = p, g2 = g, m(4, 0.0f), v(4, 0.0f);
    AdamWState s;
    EXPECT_EQ(clip_grad_norm(g, 1.0), clip_grad_norm(g2.data(), g2.size(), 1.0));
    EXPECT_EQ(g, g2);
    adamw_step(p, g, s, AdamWConfig{}, 0.01);
    adamw_update(p2.data(), g2.data(), m.data(), v.data(), 4, 1, AdamWConfig{}, 0.01);
    EXPECT_EQ(p, p2);
    EXPECT_EQ(s.m, m);
    EXPECT_EQ(s.v, v);
}

}  // namespace
}  // namespace attnviz
