#include "core/head_types.hpp"

#include <map>

#include "core/error.hpp"
#include "core/tasks.hpp"

namespace attnviz {

const char* head_type_name(HeadType type) {
    switch (type) {
        case HeadType::PreviousToken:
            return "previous-token";
        case HeadType::Induction:
            return "induction";
        case HeadType::AdjectiveNoun:
            return "adjective→noun";
        case HeadType::PronounAntecedent:
            return "pronoun→antecedent";
        case HeadType::FirstToken:
            return "first-token (sink)";
        case HeadType::Self:
            return "self";
        case HeadType::Separator:
            return "[SEP]";
        case HeadType::Broad:
            return "broad";
    }
    return "?";
}

const char* head_type_short(HeadType type) {
    switch (type) {
        case HeadType::PreviousToken:
            return "prev";
        case HeadType::Induction:
            return "induct";
        case HeadType::AdjectiveNoun:
            return "noun→adj";
        case HeadType::PronounAntecedent:
            return "pron→noun";
        case HeadType::FirstToken:
            return "first";
        case HeadType::Self:
            return "self";
        case HeadType::Separator:
            return "sep";
        case HeadType::Broad:
            return "broad";
    }
    return "?";
}

const char* head_type_explanation(HeadType type) {
    switch (type) {
        case HeadType::PreviousToken:
            return "Previous-token head: each token looks at the token just before it (score: the mean "
                   "weight on t − 1).";
        case HeadType::Induction:
            return "Induction head: a repeated token looks at the token that followed its earlier "
                   "occurrence, to predict the same continuation (score: the mean weight there).";
        case HeadType::AdjectiveNoun:
            return "Adjective→noun head: each noun looks back at its own adjectives (\"creature\" at "
                   "\"fluffy\" and \"blue\"; score: the mean weight on them).";
        case HeadType::PronounAntecedent:
            return "Pronoun head: a pronoun looks back at the nouns and names it could stand for (\"she\" "
                   "at \"Mia\"; score: the mean weight on the earlier nouns and names).";
        case HeadType::FirstToken:
            return "First-token head (attention sink): tokens park their attention on the first token when "
                   "nothing else matters (score: the mean weight on position 0).";
        case HeadType::Self:
            return "Self head: each token looks mostly at itself (score: the mean weight on the diagonal).";
        case HeadType::Separator:
            return "[SEP] head: tokens park their attention on the separator tokens ([SEP], </s>), as many "
                   "of BERT's heads do (Clark et al. 2019): a way to attend to nothing in particular "
                   "(score: the mean weight on the separators).";
        case HeadType::Broad:
            return "Broad head: no single pattern stands out on this text; the attention is spread or mixed.";
    }
    return "";
}

double adjective_noun_score(const Mat& P, const std::vector<WordClass>& classes, int* count) {
    const int n = int(P.rows());
    double sum = 0;
    int c = 0;
    for (int t = 1; t < n && std::size_t(t) < classes.size(); ++t) {
        const WordClass w = classes[std::size_t(t)];
        if (w != WordClass::Noun && w != WordClass::Name) continue;
        double own = 0;
        int j = t - 1;
        for (; j >= 0 && classes[std::size_t(j)] == WordClass::Adjective; --j) own += P(t, j);
        if (j == t - 1) continue;  // no adjective right before this noun
        sum += own;
        ++c;
    }
    if (count) *count = c;
    return c ? sum / c : 0.0;
}

double pronoun_antecedent_score(const Mat& P, const std::vector<WordClass>& classes, int* count) {
    const int n = int(P.rows());
    double sum = 0;
    int c = 0;
    for (int t = 1; t < n && std::size_t(t) < classes.size(); ++t) {
        if (classes[std::size_t(t)] != WordClass::Pronoun) continue;
        double on = 0;
        bool any = false;
        for (int j = 0; j < t; ++j)
            if (classes[std::size_t(j)] == WordClass::Noun || classes[std::size_t(j)] == WordClass::Name) {
                on += P(t, j);
                any = true;
            }
        if (!any) continue;  // nothing before it to stand for
        sum += on;
        ++c;
    }
    if (count) *count = c;
    return c ? sum / c : 0.0;
}

double self_score(const Mat& P) {
    const int n = int(P.rows());
    if (n < 2) return 0.0;
    double sum = 0;
    for (int t = 1; t < n; ++t) sum += P(t, t);
    return sum / (n - 1);
}

double separator_score(const Mat& P, const std::vector<bool>& separators, int* count) {
    const int n = int(P.rows());
    double sum = 0;
    int c = 0;
    if (int(separators.size()) == n && n == int(P.cols()))
        for (int t = 0; t < n; ++t) {
            double on = 0;
            bool any = false;
            for (int j = 0; j < n; ++j)
                if (separators[std::size_t(j)]) {
                    on += P(t, j);
                    any = true;
                }
            if (!any) break;  // no separator in the text
            sum += on;
            ++c;
        }
    if (count) *count = c;
    return c ? sum / c : 0.0;
}

namespace {

std::array<HeadTypeScore, kScoredHeadTypes> type_scores(const Mat& P, const std::vector<int>& ids,
                                                        const std::vector<WordClass>& classes,
                                                        const std::vector<bool>& separators) {
    std::array<HeadTypeScore, kScoredHeadTypes> s{};
    int counts[4];
    const HeadScores h = pattern_scores(P, ids, counts);  // the training scores
    s[int(HeadType::PreviousToken)] = {h.previous_token, counts[0] > 0, 0};
    s[int(HeadType::Induction)] = {h.induction, counts[1] > 0, 0};
    s[int(HeadType::FirstToken)] = {h.first_token, counts[2] > 0, 0};
    int nouns = 0;
    const double adj = adjective_noun_score(P, classes, &nouns);
    s[int(HeadType::AdjectiveNoun)] = {adj, nouns > 0, 0};
    int pronouns = 0;
    const double pron = pronoun_antecedent_score(P, classes, &pronouns);
    s[int(HeadType::PronounAntecedent)] = {pron, pronouns > 0, 0};
    s[int(HeadType::Self)] = {self_score(P), P.rows() >= 2, 0};
    int rows = 0;
    const double sep = separator_score(P, separators, &rows);
    s[int(HeadType::Separator)] = {sep, rows > 0, 0};
    return s;
}

}  // namespace

HeadLabel classify_head(const Mat& P, const std::vector<int>& ids, const std::vector<WordClass>& classes,
                        const HeadLabelRule& rule, const std::vector<bool>& separators) {
    const int n = int(P.rows());
    if (P.cols() != n || int(ids.size()) != n || (!classes.empty() && int(classes.size()) != n))
        throw Error("classify_head: weights are " + std::to_string(P.rows()) + "×" +
                    std::to_string(P.cols()) + " for " + std::to_string(ids.size()) + " tokens");
    HeadLabel label;
    if (!separators.empty() && int(separators.size()) != n)
        throw Error("classify_head: " + std::to_string(separators.size()) + " separator flags for " +
                    std::to_string(n) + " tokens");
    label.scores = type_scores(P, ids, classes, separators);
    // The even-spread head on the same text: causal when P is (nothing above the diagonal), else full.
    bool causal = true;
    for (int i = 0; i < n && causal; ++i)
        for (int j = i + 1; j < n; ++j)
            if (P(i, j) != 0) {
                causal = false;
                break;
            }
    Mat U(n, n);  // [n, n]
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            U(i, j) = causal ? (j <= i ? 1.0f / float(i + 1) : 0.0f) : 1.0f / float(n);
    const auto uniform = type_scores(U, ids, classes, separators);
    double best = -1;
    for (int k = 0; k < kScoredHeadTypes; ++k) {
        HeadTypeScore& s = label.scores[std::size_t(k)];
        s.uniform = uniform[std::size_t(k)].score;
        if (!s.defined) continue;
        if (s.score > best) {
            best = s.score;
            label.score = s.score;
        }
        if (s.score >= rule.threshold && s.score >= rule.lift * s.uniform &&
            (label.type == HeadType::Broad || s.score > label.scores[std::size_t(label.type)].score))
            label.type = HeadType(k);
    }
    if (label.type != HeadType::Broad) label.score = label.scores[std::size_t(label.type)].score;
    return label;
}

std::vector<int> ids_of_tokens(const std::vector<std::string>& tokens) {
    std::map<std::string, int> seen;
    std::vector<int> ids;
    ids.reserve(tokens.size());
    for (const std::string& t : tokens) ids.push_back(seen.emplace(t, int(seen.size())).first->second);
    return ids;
}

}  // namespace attnviz
