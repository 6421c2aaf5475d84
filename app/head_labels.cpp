#include "app/head_labels.hpp"

#include <algorithm>
#include <cstdio>

#include "app/app_state.hpp"
#include "app/panels/view_state.hpp"
#include "core/presets.hpp"

namespace attnviz::app {

namespace {

std::vector<HeadLabel> compute_labels(const AppState& state, const Trace& tr) {
    std::vector<HeadLabel> out;
    if (!tr.query_tokens || tr.n != tr.m || tr.n > 2048 || tr.n < 2) return out;
    const std::vector<std::string>& tokens = *tr.query_tokens;
    if (int(tokens.size()) != tr.n) return out;
    const std::vector<int> ids = ids_of_tokens(tokens);
    std::vector<WordClass> classes;
    if (state.model.active) {
        if (state.model.grammar) classes = word_classes_of(*state.model.grammar, tokens);
    } else {
        // The single layer: the designed adjective head's built-in lexicon (core/presets.hpp).
        for (const std::string& t : tokens) classes.push_back(word_class(t));
        if (std::all_of(classes.begin(), classes.end(), [](WordClass c) { return c == WordClass::Other; }))
            classes.clear();
    }
    // An encoder's separators ([SEP]; RoBERTa's </s>), where many of BERT's heads park their weight.
    std::vector<bool> separators;
    if (state.model.active && state.model.encoder) {
        for (const std::string& t : tokens) separators.push_back(t == "[SEP]" || t == "</s>");
        if (std::none_of(separators.begin(), separators.end(), [](bool b) { return b; })) separators.clear();
    }
    for (int h = 0; h < tr.heads; ++h) {
        const Stage* st = tr.get("weights", h);
        if (!st || st->n_rows() != tr.n || st->n_cols() != tr.n) return {};
        out.push_back(classify_head(st->stored_matrix() ? *st->stored_matrix() : st->matrix(), ids, classes,
                                    {}, separators));
    }
    return out;
}

}  // namespace

const std::vector<HeadLabel>& head_labels_of(const AppState& state,
                                             const std::shared_ptr<const Trace>& trace) {
    static const std::vector<HeadLabel> none;
    if (!trace) return none;
    auto& entries = views(state).head_labels.entries;
    auto it = entries.find(trace.get());
    if (it != entries.end() && it->second.trace.lock() == trace) return it->second.labels;
    // Forget traces that are gone (a model's layers are replaced at every run).
    for (auto e = entries.begin(); e != entries.end();)
        e = e->second.trace.expired() ? entries.erase(e) : std::next(e);
    HeadLabelCache::Entry& e = entries[trace.get()];
    e.trace = trace;
    e.labels = compute_labels(state, *trace);
    return e.labels;
}

std::string head_label_text(const HeadLabel& label) {
    if (label.type == HeadType::Broad) return head_type_short(label.type);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s %.2f", head_type_short(label.type), label.score);
    return buf;
}

std::string head_label_tooltip(const HeadLabel& label) {
    std::string s = head_type_explanation(label.type);
    s += "\nOn this text (an even spread would score the number in brackets):";
    for (int k = 0; k < kScoredHeadTypes; ++k) {
        const HeadTypeScore& t = label.scores[std::size_t(k)];
        char buf[128];
        if (t.defined)
            std::snprintf(buf, sizeof buf, "\n  %s  %.2f  (%.2f)", head_type_name(HeadType(k)), t.score,
                          t.uniform);
        else
            std::snprintf(buf, sizeof buf, "\n  %s  n/a%s", head_type_name(HeadType(k)),
                          HeadType(k) == HeadType::Induction ? " (no token repeats)"
                          : HeadType(k) == HeadType::AdjectiveNoun
                              ? " (no grammar, or no adjective before a noun)"
                          : HeadType(k) == HeadType::PronounAntecedent
                              ? " (no grammar, or no pronoun after a noun or name)"
                          : HeadType(k) == HeadType::Separator ? " (an encoder's [SEP] or </s> tokens only)"
                                                               : "");
        s += buf;
    }
    s += "\nA label needs a score of at least 0.4 and 1.5× the even spread's; else \"broad\".";
    return s;
}

}  // namespace attnviz::app
