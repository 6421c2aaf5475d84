// The head labels the heads grid and the model view show (core/head_types.hpp's classify_head on each
// head's attention weights over the trace's own tokens, with the open model's word classes when it
// has a story_grammar.json), computed once per trace and kept while the trace lives.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "core/head_types.hpp"
#include "core/trace.hpp"

namespace attnviz::app {

struct AppState;

struct HeadLabelCache {
    struct Entry {
        std::weak_ptr<const Trace> trace;
        std::vector<HeadLabel> labels;
    };
    std::map<const Trace*, Entry> entries;
};

/// One label per head of `trace` (empty: no per-head weights kept, cross-attention, or a text over
/// 2048 tokens, where the O(n²) scores per head would stall a frame).
const std::vector<HeadLabel>& head_labels_of(const AppState& state,
                                             const std::shared_ptr<const Trace>& trace);

/// "prev 0.93" ("broad" alone when no type stands out).
std::string head_label_text(const HeadLabel& label);
/// The tooltip: the type in a sentence, then every type's score on this text (n/a where undefined).
std::string head_label_tooltip(const HeadLabel& label);

}  // namespace attnviz::app
