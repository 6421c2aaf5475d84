// Learning a byte-level BPE from a text: the tokens of the text task at BPE level (`attnviz train
// --task text --bpe V`, the Training lab's "BPE" choice). The algorithm of GPT-2's tokenizer:
//   1. GPT-2's pre-tokenizer splits the text into words (" cat", "'s", " 123", "。");
//   2. every byte is a token to begin with (ids 0..255 = the byte values);
//   3. repeatedly, the adjacent pair of tokens that occurs most often (counted over all words,
//      weighted by how often each word occurs; ties: the pair with the smallest (left id, right id))
//      becomes one new token, until the vocabulary has V tokens or no pair occurs twice.
// The result is written as GPT-2's two files (vocab.json, merges.txt), so the checkpoint's folder is
// a model folder any GPT-2 tokenizer reads, and attnviz shows the trained model's tokens as text.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/task_registry.hpp"
#include "core/tasks.hpp"
#include "io/tokenizer.hpp"

namespace attnviz {

/// Smallest and largest vocabulary a BPE may be learned for: the 256 bytes plus at least one merge;
/// at most 8192 tokens.
constexpr int kMinBpeVocab = 257;
constexpr int kMaxBpeVocab = 8192;

struct LearnedBpe {
    std::string vocab_json;                      // {"Ġcat": 300, ...}: byte-level token -> id
    std::string merges_txt;                      // "#version: 0.2\n" then "left right" per merge, in order
    std::vector<std::string> tokens;             // [vocab_size] each token's raw bytes (id = index)
    int merges = 0;                              // merges learned (vocab_size - 256 unless strings repeat)
    std::shared_ptr<const Tokenizer> tokenizer;  // the two files, loaded
};

/// Learns a BPE of at most `vocab_size` tokens (kMinBpeVocab..kMaxBpeVocab) from `utf8` (at most
/// kMaxTokenizeTextBytes). Throws Error (a bad vocabulary size) or TextError (not UTF-8 text).
/// `stop` (may be null) is read before every merge: when it is true, learning ends with
/// BpeCancelled (the app's Train again / Reset / quit need not wait for it).
/// `progress` (may be empty) is called now and then with the merges learned so far and the most
/// there can be (vocab_size - 256): a long text takes a while, and the user sees how far it is.
using BpeProgress = std::function<void(int merges, int most)>;
LearnedBpe learn_bpe(std::string_view utf8, int vocab_size, const std::atomic<bool>* stop = nullptr,
                     const BpeProgress& progress = nullptr);

/// Thrown by learn_bpe and bpe_text_task when `stop` became true.
struct BpeCancelled : Error {
    BpeCancelled() : Error("learning the BPE was stopped") {}
};

/// The text task at BPE level: reads `path`, learns a BPE of `vocab_size` tokens from it, and makes
/// the task of its tokens with windows of `context` + 1; the task's files are the BPE's vocab.json
/// and merges.txt. Throws Error naming the file (unreadable, binary, not UTF-8, too short) or the
/// vocabulary size.
Task bpe_text_task(const std::string& path, int context, int vocab_size, LearnedBpe* learned = nullptr,
                   const std::atomic<bool>* stop = nullptr, const BpeProgress& progress = nullptr);

/// The same as the text a registered task reads (core/task_registry.hpp): the corpus of the BPE's
/// tokens and its two files.
TaskText bpe_task_text(const std::string& path, int context, int vocab_size, LearnedBpe* learned = nullptr,
                       const std::atomic<bool>* stop = nullptr, const BpeProgress& progress = nullptr);

}  // namespace attnviz
