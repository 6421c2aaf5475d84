// Real subword tokenizers: GPT-2 byte-level BPE (vocab.json + merges.txt) and Hugging Face
// tokenizer.json files with a BPE model and a ByteLevel pre-tokenizer (alone, or after a Split regex
// as in Llama-3 / Qwen2), with added (special) tokens. Regex classes (\p{L}, \p{N}) come from PCRE2,
// NFC normalization from ICU.
//
// Readable token text (token_text, TokenPiece::text): the byte-level characters of a token are
// mapped back to the bytes they stand for ("Ġcat" -> " cat"). If those bytes are valid UTF-8 they are
// shown as they are; otherwise (a token holding part of a multi-byte character, e.g. the first two
// bytes of a CJK character) every byte that is not part of a complete, valid UTF-8 sequence is shown
// as a \xNN escape with two lower-case hex digits ("\xe4\xbd"), the valid parts stay readable.
// Added tokens are shown exactly as written in the file ("<|endoftext|>").
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

struct TokenPiece {
    int id;
    std::string text;  // readable UTF-8 ("Ġcat" shown as " cat"); see the rule above
};

class Tokenizer {
  public:
    /// From a model folder: tokenizer.json (preferred) or vocab.json + merges.txt (a path to a
    /// tokenizer.json file is accepted too). Throws
    /// attnviz::Error naming the file and the problem ("tokenizer.json: model.type 'Unigram' is not
    /// supported (BPE only)").
    static std::shared_ptr<const Tokenizer> load_dir(const std::string& dir);
    /// From one tokenizer.json file.
    static std::shared_ptr<const Tokenizer> load_tokenizer_json(const std::string& path);
    /// From GPT-2's two files.
    static std::shared_ptr<const Tokenizer> load_gpt2_files(const std::string& vocab_json,
                                                            const std::string& merges_txt);
    /// From the text of a tokenizer.json (`name` is used in error messages).
    static std::shared_ptr<const Tokenizer> from_tokenizer_json(std::string_view json,
                                                                const std::string& name = "tokenizer.json");
    /// From the texts of vocab.json and merges.txt.
    static std::shared_ptr<const Tokenizer> from_gpt2(std::string_view vocab_json,
                                                      std::string_view merges_txt);
    /// The same, with the file names to use in error messages.
    static std::shared_ptr<const Tokenizer> from_gpt2_named(std::string_view vocab_json,
                                                            const std::string& vocab_name,
                                                            std::string_view merges_txt,
                                                            const std::string& merges_name);

    std::vector<int> encode(std::string_view utf8) const;  // throws attnviz::TextError on invalid UTF-8
    std::vector<TokenPiece> encode_pieces(std::string_view utf8) const;
    /// The words BPE works on, as raw bytes: the text after the normalizers and the pre-tokenizer's
    /// splits (GPT-2: " cat", "'s", " 123"), added tokens left out. Throws like encode().
    std::vector<std::string> pretokenize(std::string_view utf8) const;
    std::string decode(const std::vector<int>& ids) const;  // bytes joined; invalid UTF-8 shown as U+FFFD
    std::string token_text(int id) const;                   // readable form of one token (rule above)
    int vocab_size() const;                                 // largest id + 1 (incl. added tokens)
    bool has_id(int id) const;  // false for a gap in the ids (a model's vocabulary may be larger)
    /// For showing any id a model may produce: token_text(id), or "<id N>" for an id the tokenizer
    /// does not have (a model's vocabulary is often padded beyond its tokenizer's).
    std::string token_label(int id) const;
    /// decode() of the ids the tokenizer has, "<id N>" in place of any other.
    std::string decode_labelled(const std::vector<int>& ids) const;
    std::optional<int> token_id(std::string_view token) const;  // e.g. "<|endoftext|>"
    std::string description() const;                            // e.g. "GPT-2 byte-level BPE, 50257 tokens"
    /// True for added tokens marked "special" (e.g. "<|endoftext|>").
    bool is_special(int id) const;

    struct Impl;
    explicit Tokenizer(std::unique_ptr<Impl> impl);
    ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

  private:
    std::unique_ptr<Impl> impl_;
};

/// Raw bytes as GPT-2's byte-level characters, the spelling of vocab.json and merges.txt (" cat" ->
/// "Ġcat").
std::string byte_level_token(std::string_view bytes);

/// Largest tokenizer file accepted (vocab.json, merges.txt, tokenizer.json): 64 MiB.
constexpr std::size_t kMaxTokenizerFileBytes = std::size_t{64} << 20;
/// Longest text encode() accepts: 4 MiB.
constexpr std::size_t kMaxTokenizeTextBytes = std::size_t{4} << 20;

}  // namespace attnviz
