// Building a stage's axes (core/trace.cpp for the single layer, core/model_trace.cpp for a model).
#pragma once

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

/// A dimension axis ("d_model", "d_k", ...) of `size` entries.
inline Axis dim_axis(const std::string& name, int size) {
    Axis a;
    a.kind = Axis::Kind::Dimension;
    a.name = name;
    a.size = size;
    return a;
}

}  // namespace attnviz::axes
