// Small synthetic stages for the figure and render tests: built by hand (not by compute_trace) so a
// golden image changes only when the drawing code changes.
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/axes.hpp"
#include "core/trace.hpp"

namespace attnviz::testing {

inline std::shared_ptr<const std::vector<std::string>> tokens(std::vector<std::string> t) {
    return std::make_shared<const std::vector<std::string>>(std::move(t));
}

inline Axis token_axis(Axis::Kind kind, const std::string& name,
                       const std::shared_ptr<const std::vector<std::string>>& toks) {
    Axis a;
    a.kind = kind;
    a.name = name;
    a.size = int(toks->size());
    a.tokens = toks;
    return a;
}

using axes::dim_axis;

/// Causal softmax weights of a deterministic score pattern: row i attends mostly to i and i-1.
inline Stage causal_weights_stage(const std::shared_ptr<const std::vector<std::string>>& toks, int head) {
    const int n = int(toks->size());
    Mat A(n, n);  // n x n
    for (int i = 0; i < n; ++i) {
        float sum = 0;
        for (int j = 0; j <= i; ++j) {
            const float s = (j == i ? 2.0f : j == i - 1 ? 1.5f : 0.2f * float((i * 7 + j * 3 + head) % 5));
            A(i, j) = std::exp(s);
            sum += A(i, j);
        }
        for (int j = 0; j <= i; ++j) A(i, j) /= sum;
        for (int j = i + 1; j < n; ++j) A(i, j) = -std::numeric_limits<float>::infinity();
    }
    Stage st;
    st.name = "weights";
    st.head = head;
    st.title = "Weights  A = softmax(S/T)";
    st.formula = "A = softmax(S/T)";
    st.rows = token_axis(Axis::Kind::QueryTokens, "query tokens", toks);
    st.cols = token_axis(Axis::Kind::KeyTokens, "key tokens", toks);
    st.kind = ValueKind::Probability;
    st.data = std::make_shared<const Mat>(A);
    return st;
}

/// A signed n x d_k matrix (like Q) with a smooth pattern.
inline Stage signed_q_stage(const std::shared_ptr<const std::vector<std::string>>& toks, int d_k) {
    const int n = int(toks->size());
    Mat Q(n, d_k);  // n x d_k
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < d_k; ++j)
            Q(i, j) = 1.7f * std::sin(0.9f * float(i) + 0.45f * float(j) * float(j % 3 + 1));
    Stage st;
    st.name = "Q";
    st.head = 0;
    st.title = "Queries  Q = X W_Q";
    st.formula = "Q = X W_Q";
    st.rows = token_axis(Axis::Kind::QueryTokens, "query tokens", toks);
    st.cols = dim_axis("d_k", d_k);
    st.kind = ValueKind::Signed;
    st.data = std::make_shared<const Mat>(Q);
    return st;
}

inline Trace trace_with(std::vector<Stage> stages,
                        const std::shared_ptr<const std::vector<std::string>>& toks) {
    Trace t;
    t.query_tokens = toks;
    t.key_tokens = toks;
    t.n = t.m = int(toks->size());
    t.stages = std::move(stages);
    return t;
}

inline std::shared_ptr<const std::vector<std::string>> english_tokens() {
    return tokens({"a", "fluffy", "blue", "creature", "roamed", "the", "verdant", "forest"});
}

inline std::shared_ptr<const std::vector<std::string>> chinese_tokens() {
    return tokens({"注意", "力", "机制", "是", "一种", "加权", "平均"});
}

}  // namespace attnviz::testing
