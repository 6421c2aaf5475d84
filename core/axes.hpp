// Building a stage's axes (core/trace.cpp and core/stages/*.cpp for the single layer,
// core/model_trace.cpp for a model).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/trace.hpp"

namespace attnviz::axes {

/// A token axis (query tokens, key tokens or the vocabulary) labelled with `tokens`.
inline Axis token_axis(Axis::Kind kind, std::shared_ptr<const std::vector<std::string>> tokens) {
    Axis a;
    a.kind = kind;
    a.name = kind == Axis::Kind::QueryTokens ? "query tokens"
             : kind == Axis::Kind::KeyTokens ? "key tokens"
                                             : "vocabulary";
    a.size = int(tokens->size());
    a.tokens = std::move(tokens);
    return a;
}

/// The query axis of a stage that depends only on position (the positional encoding): same kind and
/// name as the query tokens, but labelled "pos 0", "pos 1", ... since the words play no part.
inline Axis position_axis(int n) {
    auto labels = std::make_shared<std::vector<std::string>>();
    labels->reserve(std::size_t(std::max(n, 0)));
    for (int i = 0; i < n; ++i) labels->push_back("pos " + std::to_string(i));
    Axis a = token_axis(Axis::Kind::QueryTokens, std::move(labels));
    return a;
}

/// A dimension axis ("d_model", "d_k", ...) of `size` entries.
inline Axis dim_axis(const std::string& name, int size) {
    Axis a;
    a.kind = Axis::Kind::Dimension;
    a.name = name;
    a.size = size;
    return a;
}

}  // namespace attnviz::axes
