// Subword tokenizers as Hugging Face's `tokenizers` runs them: tokenizer.json files with a BPE
// (byte-level as GPT-2 / Llama 3 / Qwen2, or SentencePiece-style with byte fallback as Llama 2 /
// Mistral / Gemma), WordPiece (BERT) or Unigram (T5) model, their normalizers, pre-tokenizers,
// post-processors and decoders; GPT-2's vocab.json + merges.txt; BERT's vocab.txt alone. Added
// (special) tokens are split out first. Regex classes (\p{L}, \p{N}) come from PCRE2 with \s meaning
// Unicode White_Space; normalization and character properties from ICU. io/tokenizer_text.hpp holds
// the character-level steps. What is not supported is refused in one line naming the field
// ("tokenizer.json: model.type 'WordLevel' is not supported (BPE, WordPiece or Unigram)").
//
// Readable token text (token_text, TokenPiece::text): the byte-level characters of a token are
// mapped back to the bytes they stand for ("Ġcat" -> " cat"), "<0xNN>" byte tokens to their byte,
// Metaspace's "▁" to a space ("▁the" -> " the"); WordPiece continuations keep their "##" ("##ing").
// Bytes that are valid UTF-8 are shown as they are; every byte that is not part of a complete, valid
// UTF-8 sequence (a token holding part of a multi-byte character) is shown as a \xNN escape with two
// lower-case hex digits ("\xe4\xbd"). Added tokens are shown exactly as written ("<|endoftext|>").
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
    /// From a model folder: tokenizer.json (preferred), vocab.json + merges.txt, or BERT's vocab.txt
    /// (a path to a tokenizer.json file is accepted too). Throws attnviz::Error naming the file and
    /// the problem ("tokenizer.json: normalizer.type 'Nmt' is not supported (only ...)").
    static std::shared_ptr<const Tokenizer> load_dir(const std::string& dir);
    /// From one tokenizer.json file.
    static std::shared_ptr<const Tokenizer> load_tokenizer_json(const std::string& path);
    /// From GPT-2's two files.
    static std::shared_ptr<const Tokenizer> load_gpt2_files(const std::string& vocab_json,
                                                            const std::string& merges_txt);
    /// From the text of a tokenizer.json (`name` is used in error messages).
    static std::shared_ptr<const Tokenizer> from_tokenizer_json(std::string_view json,
                                                                const std::string& name = "tokenizer.json");
    /// BERT's vocab.txt (one token a line, ids by line) with BERT's steps: BertNormalizer (lower-cased
    /// when `lowercase`, tokenizer_config.json's do_lower_case; accents stripped as `strip_accents`,
    /// else as lowercase; CJK spacing), BertPreTokenizer, WordPiece with "##" and [UNK], [CLS] ...
    /// [SEP] around the text for a model.
    static std::shared_ptr<const Tokenizer> from_bert_vocab(std::string_view vocab_txt, bool lowercase,
                                                            const std::string& name = "vocab.txt",
                                                            std::optional<bool> strip_accents = std::nullopt,
                                                            bool chinese_chars = true);
    /// vocab.txt, with do_lower_case, strip_accents and tokenize_chinese_chars from
    /// tokenizer_config.json when that file exists (else BERT's defaults: lower-cased).
    static std::shared_ptr<const Tokenizer> load_bert_vocab(const std::string& vocab_txt,
                                                            const std::string& tokenizer_config);
    /// From the texts of vocab.json and merges.txt.
    static std::shared_ptr<const Tokenizer> from_gpt2(std::string_view vocab_json,
                                                      std::string_view merges_txt);
    /// The same, with the file names to use in error messages.
    static std::shared_ptr<const Tokenizer> from_gpt2_named(std::string_view vocab_json,
                                                            const std::string& vocab_name,
                                                            std::string_view merges_txt,
                                                            const std::string& merges_name);

    /// The ids of the text alone (Hugging Face's add_special_tokens=False). Throws attnviz::TextError
    /// on invalid UTF-8.
    std::vector<int> encode(std::string_view utf8) const;
    /// What a model is given: the ids with the post-processor's special tokens ([CLS] ... [SEP],
    /// <s> ..., ... </s>; Hugging Face's default add_special_tokens=True), and their token type ids.
    struct ModelInput {
        std::vector<int> ids;
        std::vector<int> type_ids;  // [ids.size()] the segment of each token (0 = first text, 1 = second)
    };
    ModelInput encode_for_model(std::string_view utf8) const;
    /// A sentence pair: [CLS] A [SEP] B [SEP] (BERT), <s> A </s></s> B </s> (RoBERTa), ...
    ModelInput encode_pair_for_model(std::string_view a, std::string_view b) const;
    /// True when the file has a post-processor that adds tokens.
    bool adds_special_tokens() const;
    std::vector<TokenPiece> encode_pieces(std::string_view utf8) const;
    /// The words the model works on, as raw bytes: the text after the normalizers and the
    /// pre-tokenizers' splits (GPT-2: " cat", "'s", " 123"; T5: "▁cat"), added tokens left out.
    std::vector<std::string> pretokenize(std::string_view utf8) const;
    /// The text of the ids through the file's decoder (byte-level bytes, <0xNN> bytes, "▁" as spaces,
    /// "##" joined); invalid UTF-8 shown as U+FFFD.
    std::string decode(const std::vector<int>& ids) const;
    std::string token_text(int id) const;  // readable form of one token (rule above)
    int vocab_size() const;                // largest id + 1 (incl. added tokens)
    bool has_id(int id) const;             // false for a gap in the ids (a model's vocabulary may be larger)
    /// For showing any id a model may produce: token_text(id), or "<id N>" for an id the tokenizer
    /// does not have (a model's vocabulary is often padded beyond its tokenizer's).
    std::string token_label(int id) const;
    /// decode() of the ids the tokenizer has, "<id N>" in place of any other, as a continuation of a
    /// text (nothing stripped from its start: "▁the" gives " the").
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

/// Largest tokenizer file accepted (vocab.json, merges.txt, vocab.txt, tokenizer.json): 64 MiB.
constexpr std::size_t kMaxTokenizerFileBytes = std::size_t{64} << 20;
/// Longest text encode() accepts: 4 MiB.
constexpr std::size_t kMaxTokenizeTextBytes = std::size_t{4} << 20;

/// Throws TextError when a text's ids (this tokenizer's) hold a token the model has no row for
/// ([0, vocab)), naming the token: a model trained here on its own small language (the story model)
/// knows only that language's words.
void check_ids_in_vocab(const Tokenizer& tokenizer, const std::vector<int>& ids, int vocab);

}  // namespace attnviz
