// The translation task's language pair and alignment score: see core/translate.hpp.
#include "core/translate.hpp"

#include <algorithm>
#include <random>
#include <unordered_map>

#include "core/error.hpp"

namespace attnviz {

namespace {

TranslateLexicon make_translate_lexicon() {
    TranslateLexicon x;
    x.src_det = {"the", "a", "my", "this"};
    x.tgt_det = {"lo", "una", "mio", "esto"};
    x.src_adj = {"big", "small", "red", "blue", "old", "young", "happy", "sad"};
    x.tgt_adj = {"grando", "pikko", "roso", "blua", "malno", "juna", "gaja", "trista"};
    x.src_noun = {"dog", "cat", "bird", "fox", "horse", "child", "farmer", "king", "fish", "mouse"};
    x.tgt_noun = {"hundo",  "kato",     "birdo", "vulpo", "chevalo",
                  "infano", "farmisto", "rego",  "fisho", "muso"};
    x.src_verb = {"sees", "likes", "chases", "helps", "finds", "feeds", "follows", "hears"};
    x.tgt_verb = {"vidas", "amas", "chasas", "helpas", "trovas", "nutras", "sekvas", "audas"};
    return x;
}

double pair_uniform(std::mt19937_64& rng) {
    return double(rng() >> 11) * (1.0 / 9007199254740992.0);  // the same on every platform
}
int pair_draw(std::mt19937_64& rng, int n) {
    return int(pair_uniform(rng) * n);
}
// Two distinct indices below n.
std::pair<int, int> pair_draw_two(std::mt19937_64& rng, int n) {
    const int a = pair_draw(rng, n), b = (a + 1 + pair_draw(rng, n - 1)) % n;
    return {a, b};
}

enum class SourceClass { Det, Adj, Noun, Verb, Stop, None };
struct SourceTag {
    SourceClass cls = SourceClass::None;
    int index = -1;
};
SourceTag tag_source_word(const std::string& w) {
    const TranslateLexicon& x = translate_lexicon();
    const std::pair<const std::vector<std::string>*, SourceClass> lists[] = {
        {&x.src_det, SourceClass::Det},
        {&x.src_adj, SourceClass::Adj},
        {&x.src_noun, SourceClass::Noun},
        {&x.src_verb, SourceClass::Verb}};
    for (const auto& [list, cls] : lists)
        for (std::size_t i = 0; i < list->size(); ++i)
            if ((*list)[i] == w) return {cls, int(i)};
    for (std::size_t i = 0; i < x.stops.size(); ++i)
        if (w == x.stops[i]) return {SourceClass::Stop, int(i)};
    return {};
}

}  // namespace

const TranslateLexicon& translate_lexicon() {
    static const TranslateLexicon& x = *new TranslateLexicon(make_translate_lexicon());
    return x;
}

const std::vector<std::string>& translate_tokens() {
    static const std::vector<std::string>& tokens = *new std::vector<std::string>([] {
        const TranslateLexicon& x = translate_lexicon();
        std::vector<std::string> t = {"<pad>", "</s>", "<unk>"};
        t.insert(t.end(), x.stops.begin(), x.stops.end());
        for (const auto* list : {&x.src_det, &x.src_adj, &x.src_noun, &x.src_verb, &x.tgt_det, &x.tgt_adj,
                                 &x.tgt_noun, &x.tgt_verb})
            for (const std::string& w : *list) t.push_back(" " + w);
        return t;
    }());
    return tokens;
}

int translate_id(const std::string& word) {
    static const std::unordered_map<std::string, int>& ids = *new std::unordered_map<std::string, int>([] {
        std::unordered_map<std::string, int> m;
        const auto& t = translate_tokens();
        for (std::size_t i = 0; i < t.size(); ++i) {
            m[t[i]] = int(i);
            if (t[i][0] == ' ') m[t[i].substr(1)] = int(i);
        }
        return m;
    }());
    const auto it = ids.find(word);
    return it == ids.end() ? kTranslateUnk : it->second;
}

SentencePair translate_sentence(const std::vector<std::string>& source) {
    const TranslateLexicon& x = translate_lexicon();
    // Source: D A{0,2} N V D A{0,2} N .   Target: D N A{0,2} D N A{0,2} V .
    std::vector<SourceTag> tags;
    for (const std::string& w : source) tags.push_back(tag_source_word(w));
    std::size_t i = 0;
    auto fail = [&](const std::string& what) -> void {
        throw ConfigError("Not a sentence of the translation task's source language: " + what +
                          (i < source.size() ? " at word " + std::to_string(i + 1) + " ('" + source[i] + "')"
                                             : " at its end") +
                          ".");
    };
    auto at = [&](std::size_t k) { return k < tags.size() ? tags[k].cls : SourceClass::None; };
    SentencePair p;
    p.source = source;
    // A noun phrase: its target words (D N A...) with their source positions.
    auto noun_phrase = [&](std::vector<std::pair<std::string, int>>& out) {
        if (at(i) != SourceClass::Det) fail("a determiner expected");
        out.emplace_back(x.tgt_det[std::size_t(tags[i].index)], int(i));
        ++i;
        std::vector<std::pair<std::string, int>> adjectives;
        while (at(i) == SourceClass::Adj) {
            adjectives.emplace_back(x.tgt_adj[std::size_t(tags[i].index)], int(i));
            ++i;
        }
        if (adjectives.size() > 2) fail("more than two adjectives");
        if (at(i) != SourceClass::Noun) fail("a noun expected");
        out.emplace_back(x.tgt_noun[std::size_t(tags[i].index)], int(i));
        ++i;
        out.insert(out.end(), adjectives.begin(), adjectives.end());
    };
    std::vector<std::pair<std::string, int>> words;
    noun_phrase(words);
    if (at(i) != SourceClass::Verb) fail("a verb expected");
    const std::pair<std::string, int> verb{x.tgt_verb[std::size_t(tags[i].index)], int(i)};
    ++i;
    noun_phrase(words);
    words.push_back(verb);
    if (at(i) != SourceClass::Stop) fail("an end mark ('.', '!' or '?') expected");
    words.emplace_back(x.stops[std::size_t(tags[i].index)], int(i));
    ++i;
    if (i != source.size()) fail("words after the end mark");
    for (const auto& [w, s] : words) {
        p.target.push_back(w);
        p.alignment.push_back(s);
    }
    return p;
}

SentencePair generate_sentence_pair(std::uint64_t seed, int adjectives) {
    if (adjectives < 0 || adjectives > 4) throw ConfigError("A sentence has 0 to 4 adjectives.");
    const TranslateLexicon& x = translate_lexicon();
    std::mt19937_64 rng(seed);
    // How many adjectives each noun gets (at most 2 each), uniformly over the splits that fit.
    std::vector<int> firsts;
    for (int a = 0; a <= 2; ++a)
        if (adjectives - a >= 0 && adjectives - a <= 2) firsts.push_back(a);
    const int a1 = firsts[std::size_t(pair_draw(rng, int(firsts.size())))], a2 = adjectives - a1;
    const auto [d1, d2] = pair_draw_two(rng, int(x.src_det.size()));
    const auto [n1, n2] = pair_draw_two(rng, int(x.src_noun.size()));
    const int verb = pair_draw(rng, int(x.src_verb.size()));
    const int stop = pair_draw(rng, int(x.stops.size()));
    // Distinct adjectives: the first `adjectives` of a shuffle.
    std::vector<int> adj(x.src_adj.size());
    for (std::size_t k = 0; k < adj.size(); ++k) adj[k] = int(k);
    for (int k = 0; k < adjectives; ++k)
        std::swap(adj[std::size_t(k)], adj[std::size_t(k + pair_draw(rng, int(adj.size()) - k))]);
    std::vector<std::string> s;
    s.push_back(x.src_det[std::size_t(d1)]);
    for (int k = 0; k < a1; ++k) s.push_back(x.src_adj[std::size_t(adj[std::size_t(k)])]);
    s.push_back(x.src_noun[std::size_t(n1)]);
    s.push_back(x.src_verb[std::size_t(verb)]);
    s.push_back(x.src_det[std::size_t(d2)]);
    for (int k = 0; k < a2; ++k) s.push_back(x.src_adj[std::size_t(adj[std::size_t(a1 + k)])]);
    s.push_back(x.src_noun[std::size_t(n2)]);
    s.push_back(x.stops[std::size_t(stop)]);
    return translate_sentence(s);
}

TranslateBatch translate_batch(int B, int adjectives, std::uint64_t seed, int n) {
    if (adjectives < 0 || adjectives > 4) throw ConfigError("A sentence has 0 to 4 adjectives.");
    const int m = 6 + adjectives;  // the source's words; the target: m words, then </s>
    if (n == 0) n = m + 1;
    if (n < m + 1) throw ConfigError("The decoder's rows must hold the target and </s>.");
    TranslateBatch out;
    Batch& b = out.batch;
    b.B = B;
    b.n = n;
    b.m = m;
    b.source.resize(std::size_t(B) * std::size_t(m));
    b.inputs.assign(std::size_t(B) * std::size_t(n), kTranslatePad);
    b.targets.assign(b.inputs.size(), -1);
    std::mt19937_64 rng(seed);
    for (int r = 0; r < B; ++r) {
        const SentencePair p = generate_sentence_pair(rng(), adjectives);
        for (int j = 0; j < m; ++j)
            b.source[std::size_t(r) * std::size_t(m) + std::size_t(j)] =
                translate_id(p.source[std::size_t(j)]);
        int* in = b.inputs.data() + std::ptrdiff_t(r) * n;
        int* tg = b.targets.data() + std::ptrdiff_t(r) * n;
        in[0] = kTranslatePad;  // the decoder's start token (T5's decoder_start_token_id)
        for (int t = 0; t < m; ++t) {
            tg[t] = translate_id(p.target[std::size_t(t)]);
            in[t + 1] = tg[t];
        }
        tg[m] = kTranslateEos;
        std::vector<int> gold(std::size_t(n), -1);
        std::copy(p.alignment.begin(), p.alignment.end(), gold.begin());
        out.alignment.push_back(std::move(gold));
    }
    return out;
}

double head_alignment_score(const MatT<float>& P, const std::vector<int>& gold, int* rows) {
    return alignment_score(std::vector<MatT<float>>{P}, gold, rows);
}

double alignment_score(const std::vector<MatT<float>>& heads, const std::vector<int>& gold, int* rows) {
    int counted = 0, hits = 0;
    if (!heads.empty()) {
        const Eigen::Index n = heads[0].rows(), m = heads[0].cols();
        for (Eigen::Index t = 0; t < n && t < Eigen::Index(gold.size()); ++t) {
            const int g = gold[std::size_t(t)];
            if (g < 0 || g >= m) continue;
            // The heads' mean weight on each source position; the first largest.
            Eigen::Index best = 0;
            double best_w = -1;
            for (Eigen::Index j = 0; j < m; ++j) {
                double w = 0;
                for (const MatT<float>& P : heads) w += double(P(t, j));
                if (w > best_w) {
                    best_w = w;
                    best = j;
                }
            }
            ++counted;
            hits += best == g ? 1 : 0;
        }
    }
    if (rows) *rows = counted;
    return counted ? double(hits) / double(counted) : 0.0;
}

namespace {

// Held-out pairs come from seeds the training batches never use (the top bit set).
constexpr std::uint64_t kTranslateHeldout = 1ull << 63;
constexpr int kTranslateMaxAdjectives = 3, kTranslateContext = 6 + kTranslateMaxAdjectives + 1;

// A batch of the task: `adjectives` of them (−1: 0–3 from the seed), decoder rows padded to
// kTranslateContext.
TaskBatch translate_task_batch(int B, int adjectives, std::uint64_t seed) {
    if (adjectives < 0) adjectives = int((seed * 0x9E3779B97F4A7C15ull) >> 62);  // 0–3
    TranslateBatch tb = translate_batch(B, adjectives, seed, kTranslateContext);
    TaskBatch out;
    out.batch = std::move(tb.batch);
    out.kind.assign(out.batch.targets.size(), 1);
    for (auto& gold : tb.alignment) {
        SequenceAnnotations a;
        a.alignment = std::move(gold);
        out.notes.push_back(std::move(a));
    }
    return out;
}

}  // namespace

double model_alignment(const Params<float>& params, int pairs, std::uint64_t seed) {
    const int L = params.config.n_layer;
    long rows = 0;
    double hits = 0;
    for (int k = 0; k <= kTranslateMaxAdjectives; ++k) {
        const TaskBatch b = translate_task_batch(std::max(1, pairs / (kTranslateMaxAdjectives + 1)), k,
                                                 (seed + std::uint64_t(k)) | kTranslateHeldout);
        for (int r = 0; r < b.batch.B; ++r) {
            const std::vector<int> src(b.batch.source.begin() + std::ptrdiff_t(r) * b.batch.m,
                                       b.batch.source.begin() + std::ptrdiff_t(r + 1) * b.batch.m);
            // The decoder's rows up to </s> (the padding after it is not needed)
            const std::vector<int> tgt(
                b.batch.inputs.begin() + std::ptrdiff_t(r) * b.batch.n,
                b.batch.inputs.begin() + std::ptrdiff_t(r) * b.batch.n + b.batch.m + 1);
            const auto cross = cross_attention_patterns(params, src, tgt);
            int counted = 0;
            const double s =
                alignment_score(cross[std::size_t(L - 1)], b.notes[std::size_t(r)].alignment, &counted);
            hits += s * counted;
            rows += counted;
        }
    }
    return rows ? hits / double(rows) : 0.0;
}

Task translate_task(int probe) {
    Task task;
    task.name = "translate";
    task.vocab_size = int(translate_tokens().size());
    task.context = kTranslateContext;  // the longest sentence (3 adjectives) and </s>
    task.first_label = "target words";
    task.repeat_label = "";
    task.train_batch = [](int B, std::uint64_t seed) {
        return translate_task_batch(B, -1, seed & ~kTranslateHeldout);
    };
    task.heldout_batch = [](int B, std::uint64_t seed) {
        return translate_task_batch(B, kTranslateMaxAdjectives, seed | kTranslateHeldout);
    };
    task.heldout_note =
        "sentence pairs with 3 adjectives (the longest) from seeds the training batches never use";
    for (const std::string& t : translate_tokens()) task.token_names.push_back(t[0] == ' ' ? t.substr(1) : t);
    task.tokens = translate_tokens();
    task.example = "the big red dog sees a small cat!";  // (its end mark is read joined to the last word)
    task.figure_names = {"alignment"};
    task.figures = [probe](const Params<float>& p) {
        return std::vector<std::pair<std::string, double>>{{"alignment", model_alignment(p, probe, 5)}};
    };
    return task;
}

}  // namespace attnviz
