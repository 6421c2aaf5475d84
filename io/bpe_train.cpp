#include "io/bpe_train.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "io/files.hpp"

namespace attnviz {

namespace {

std::uint64_t bpe_pair_key(int a, int b) {
    return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b);
}

struct BpeWord {
    std::vector<int> symbols;  // [length] token ids
    long long count = 0;       // how often the word occurs in the text
};

// pairs[bpe_pair_key(a, b)] += sign * count for every adjacent pair of `w`; the keys changed go to
// `touched` (when given).
void count_bpe_pairs(const BpeWord& w, long long sign, std::unordered_map<std::uint64_t, long long>& pairs,
                     std::vector<std::uint64_t>* touched = nullptr) {
    for (std::size_t i = 0; i + 1 < w.symbols.size(); ++i) {
        const std::uint64_t k = bpe_pair_key(w.symbols[i], w.symbols[i + 1]);
        pairs[k] += sign * w.count;
        if (touched) touched->push_back(k);
    }
}

// The most frequent pair first; among equal counts the smallest (left id, right id).
struct PairOrder {
    bool operator()(const std::pair<long long, std::uint64_t>& x,
                    const std::pair<long long, std::uint64_t>& y) const {
        return x.first < y.first || (x.first == y.first && x.second > y.second);
    }
};

}  // namespace

LearnedBpe learn_bpe(std::string_view utf8, int vocab_size, const std::atomic<bool>* stop,
                     const BpeProgress& progress) {
    if (vocab_size < kMinBpeVocab || vocab_size > kMaxBpeVocab)
        throw Error("a BPE vocabulary must have " + std::to_string(kMinBpeVocab) + " to " +
                    std::to_string(kMaxBpeVocab) + " tokens (the 256 bytes plus merges); " +
                    std::to_string(vocab_size) + " was asked for");
    LearnedBpe out;
    for (int b = 0; b < 256; ++b) out.tokens.emplace_back(1, char(b));

    // 1. Words, by GPT-2's pre-tokenizer (a tokenizer of the 256 byte tokens and no merges).
    nlohmann::json base = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) base[byte_level_token(out.tokens[std::size_t(b)])] = b;
    const auto splitter = Tokenizer::from_gpt2(base.dump(), "#version: 0.2\n");
    std::map<std::string, long long> counts;  // sorted: the learning is the same on every machine
    for (std::string& w : splitter->pretokenize(utf8)) ++counts[std::move(w)];
    std::vector<BpeWord> words;
    words.reserve(counts.size());
    for (const auto& [text, n] : counts) {
        BpeWord w;
        w.count = n;
        for (unsigned char c : text) w.symbols.push_back(int(c));
        words.push_back(std::move(w));
    }

    // 2-3. Merge the most frequent pair until the vocabulary is full. `where` lists, per pair, the
    // words it was seen in (entries may be stale: a word is checked before it is merged), so a merge
    // touches only the words that hold its pair, not the whole text.
    std::unordered_map<std::uint64_t, long long> pairs;  // (left, right) -> occurrences
    std::unordered_map<std::uint64_t, std::vector<int>> where;
    for (std::size_t wi = 0; wi < words.size(); ++wi) {
        const BpeWord& w = words[wi];
        count_bpe_pairs(w, +1, pairs);
        for (std::size_t i = 0; i + 1 < w.symbols.size(); ++i)
            where[bpe_pair_key(w.symbols[i], w.symbols[i + 1])].push_back(int(wi));
    }
    // The pairs by count, as a heap of (count, pair) pushed whenever a count changes; an entry whose
    // count is no longer the pair's is stale and skipped when it comes to the top.
    std::priority_queue<std::pair<long long, std::uint64_t>, std::vector<std::pair<long long, std::uint64_t>>,
                        PairOrder>
        heap;
    for (const auto& [k, c] : pairs) heap.push({c, k});
    std::vector<std::uint64_t> touched;
    std::unordered_map<std::string, int> id_of;  // raw bytes -> id
    for (int b = 0; b < 256; ++b) id_of[out.tokens[std::size_t(b)]] = b;
    std::string merges = "#version: 0.2\n";
    const int most = vocab_size - 256;
    auto last_report = std::chrono::steady_clock::now();
    if (progress) progress(0, most);
    while (int(out.tokens.size()) < vocab_size) {
        if (stop && stop->load()) throw BpeCancelled();
        if (progress && std::chrono::steady_clock::now() - last_report > std::chrono::milliseconds(250)) {
            last_report = std::chrono::steady_clock::now();
            progress(out.merges, most);
        }
        while (!heap.empty()) {
            const auto it = pairs.find(heap.top().second);
            if (it != pairs.end() && it->second == heap.top().first) break;
            heap.pop();  // stale
        }
        // A pair must occur at least twice to be worth a token.
        if (heap.empty() || heap.top().first < 2) break;
        const std::uint64_t best = heap.top().second;
        const int a = int(best >> 32), b = int(best & 0xffffffffu);
        const std::string joined = out.tokens[std::size_t(a)] + out.tokens[std::size_t(b)];
        // Two merges can spell the same bytes ("ab"+"c", "a"+"bc"): the token is shared, as in
        // Hugging Face's trainer, and both merges stay (vocab.json cannot list a string twice).
        int id = 0;
        if (const auto it = id_of.find(joined); it != id_of.end()) {
            id = it->second;
        } else {
            id = int(out.tokens.size());
            out.tokens.push_back(joined);
            id_of.emplace(joined, id);
        }
        merges += byte_level_token(out.tokens[std::size_t(a)]) + " " +
                  byte_level_token(out.tokens[std::size_t(b)]) + "\n";
        ++out.merges;
        std::vector<int> holders = std::move(where[best]);
        where.erase(best);
        std::sort(holders.begin(), holders.end());
        holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
        for (const int wi : holders) {
            BpeWord& w = words[std::size_t(wi)];
            // Left to right, without overlaps ("aaa" -> "aa" "a"). Only the pairs around each merge
            // change: (prev, a) -> (prev, id), (a, b) goes, (b, next) -> (id, next), where prev is the
            // symbol already merged before it. So a merge costs a scan of the word plus its merge sites
            // (a 4 MiB word of random CJK: minutes of whole-word recounting before).
            auto change = [&](int x, int y, long long by) {
                const std::uint64_t k = bpe_pair_key(x, y);
                pairs[k] += by * w.count;
                touched.push_back(k);
            };
            std::vector<int>& sym = w.symbols;
            std::size_t out = 0;
            bool merged_any = false;
            for (std::size_t i = 0; i < sym.size(); ++i) {
                if (i + 1 < sym.size() && sym[i] == a && sym[i + 1] == b) {
                    if (out > 0) {
                        change(sym[out - 1], a, -1);
                        change(sym[out - 1], id, +1);
                        where[bpe_pair_key(sym[out - 1], id)].push_back(wi);
                    }
                    change(a, b, -1);
                    if (i + 2 < sym.size()) {
                        change(b, sym[i + 2], -1);
                        change(id, sym[i + 2], +1);
                        where[bpe_pair_key(id, sym[i + 2])].push_back(wi);
                    }
                    sym[out++] = id;
                    ++i;
                    merged_any = true;
                } else {
                    sym[out++] = sym[i];
                }
            }
            if (merged_any) sym.resize(out);
        }
        std::sort(touched.begin(), touched.end());
        touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
        for (const std::uint64_t k : touched) {
            const auto it = pairs.find(k);
            if (it->second <= 0)
                pairs.erase(it);
            else
                heap.push({it->second, k});
        }
        touched.clear();
    }

    if (progress) progress(out.merges, most);
    nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < out.tokens.size(); ++i) vocab[byte_level_token(out.tokens[i])] = int(i);
    out.vocab_json = vocab.dump() + "\n";
    out.merges_txt = merges;
    out.tokenizer = Tokenizer::from_gpt2_named(out.vocab_json, "vocab.json", out.merges_txt, "merges.txt");
    return out;
}

TaskText bpe_task_text(const std::string& path, int context, int vocab_size, LearnedBpe* learned,
                       const std::atomic<bool>* stop, const BpeProgress& progress) {
    const std::string text = read_file(path);
    if (text.find('\0') != std::string::npos)
        throw Error(path + ": not a text file (it contains NUL bytes); pick a UTF-8 text file.");
    if (text.size() > kMaxTokenizeTextBytes)
        throw Error(path + ": " + std::to_string(text.size() >> 10) +
                    " KiB; BPE tokens are learned from at most " +
                    std::to_string(kMaxTokenizeTextBytes >> 20) + " MiB of text: pick a shorter file.");
    LearnedBpe bpe;
    std::vector<int> ids;
    try {
        bpe = learn_bpe(text, vocab_size, stop, progress);
        ids = bpe.tokenizer->encode(text);
    } catch (const TextError& e) {
        throw Error(path + ": " + e.what() + "; pick a UTF-8 text file.");
    }
    TaskText out;
    TextCorpus corpus = token_corpus(bpe.tokens, std::move(ids), path, context);
    corpus.unit = "BPE tokens";
    corpus.tokenizer = "a byte-level BPE of " + std::to_string(bpe.tokens.size()) + " tokens learned from " +
                       std::filesystem::path(path).filename().string();
    out.corpus = std::make_shared<const TextCorpus>(std::move(corpus));
    out.files = {{"vocab.json", bpe.vocab_json}, {"merges.txt", bpe.merges_txt}};
    if (learned) *learned = std::move(bpe);
    return out;
}

Task bpe_text_task(const std::string& path, int context, int vocab_size, LearnedBpe* learned,
                   const std::atomic<bool>* stop, const BpeProgress& progress) {
    TaskText text = bpe_task_text(path, context, vocab_size, learned, stop, progress);
    Task task = text_task(text.corpus, context);
    task.files = std::move(text.files);
    return task;
}

}  // namespace attnviz
