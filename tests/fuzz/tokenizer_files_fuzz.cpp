// Fuzz harness: hostile tokenizer files. The first byte picks the layout: even = one tokenizer.json,
// odd = vocab.json and merges.txt separated by the first NUL byte. A file that loads is then used:
// a fixed text and the input's tail are encoded, decoded, and every token shown as text.
//
// An input starting with "\xffRCP" is a recipe (tests/fuzz/recipe.hpp): its expansion's head is a
// tokenizer.json and its tail (after the first NUL) the text to encode, whole (megabytes of it). The
// fuzzer's structure-aware mutator (ATTNVIZ_FUZZ_MUTATORS) writes such recipes: Split regexes from
// real tokenizers (GPT-2, Llama-3, Qwen2) and pathological ones, many added tokens with shared
// prefixes, and long texts of repeated characters.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "io/tokenizer.hpp"
#include "recipe.hpp"

namespace {

void use(const attnviz::Tokenizer& tok, std::string_view tail) {
    (void)tok.description();
    (void)tok.vocab_size();
    (void)tok.token_id("<|endoftext|>");
    for (std::string_view text :
         {std::string_view("Hello world! I'm   here.\n\n 123 \xe4\xbd\xa0\xe5\xa5\xbd "
                           "\xf0\x9f\x98\x80<|endoftext|>"),
          tail}) {
        try {
            const auto ids = tok.encode(text);
            (void)tok.decode(ids);
            for (const auto& piece : tok.encode_pieces(text)) (void)piece;
        } catch (const attnviz::TextError&) {
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    if (fuzz_recipe::is_recipe(data, size)) {
        std::string json, text;
        fuzz_recipe::split_head_tail(fuzz_recipe::expand_recipe(data, size), json, text);
        try {
            const auto tok = attnviz::Tokenizer::from_tokenizer_json(json);
            use(*tok, text);
        } catch (const attnviz::Error&) {
        }
        return 0;
    }
    const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        std::shared_ptr<const attnviz::Tokenizer> tok;
        if (data[0] & 1) {
            const auto nul = in.find('\0');
            const std::string_view vocab = in.substr(0, nul);
            const std::string_view merges =
                nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1);
            tok = attnviz::Tokenizer::from_gpt2(vocab, merges);
        } else {
            tok = attnviz::Tokenizer::from_tokenizer_json(in);
        }
        use(*tok, in.substr(0, 256));
    } catch (const attnviz::Error&) {
    }
    return 0;
}

#ifdef ATTNVIZ_FUZZ_MUTATORS
// ------------------------------------------------------------------------------------------------
// Structure-aware mutator (libFuzzer binary only)
// ------------------------------------------------------------------------------------------------
namespace {

using fuzz_mutator::Rng;

// JSON-escaped Split regexes: the real tokenizers' and ones that backtrack.
const std::vector<std::string> kRegexes = {
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+)",  // GPT-2
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)",  // Llama-3
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)",  // Qwen2
    R"(a*b|.)",
    R"((a|aa)+c|.)",
    R"((a+)+b)",
    R"((a*)*b|.)",
    R"((.*a){20})",
    R"(\\s+(?!\\S)|\\s+)",
    R"((x+x+)+y|.)",
    R"([^a]*a|.)",
    R"( ?\\p{L}+|.)",
    R"(.)",
    R"((?=a)|a)",
    R"($|^)",
    R"(a{1000})",
    R"(<[^>]*>|.)",
    R"((\\s*)*x|.)",
    R"(\\p{L}+)",
    R"(()"};

const std::vector<std::string> kUnits = {"a",
                                         "<",
                                         " ",
                                         "aa",
                                         "ab",
                                         "\n",
                                         " \n",
                                         "<t1",
                                         "1",
                                         "\xc3\xa9",
                                         "\xe4\xbd\xa0",
                                         "'s",
                                         "x",
                                         "\t",
                                         "\xf0\x9f\x98\x80"};

std::string pre_tokenizer(Rng& r) {
    const std::string split = R"({"type":"Split","pattern":{"Regex":")" + r.pick(kRegexes) +
                              R"("},"behavior":")" +
                              r.pick(std::vector<std::string>{"Isolated", "Removed", "MergedWithPrevious",
                                                              "MergedWithNext", "Contiguous"}) +
                              R"(","invert":)" + (r.chance(85) ? "false" : "true") + "}";
    switch (r(4)) {
        case 0:
            return R"({"type":"ByteLevel","add_prefix_space":false,"use_regex":true})";
        case 1:
            return split;
        default:
            return R"({"type":"Sequence","pretokenizers":[)" + split +
                   R"(,{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]})";
    }
}

/// A fresh recipe: a byte-level BPE tokenizer.json with many added tokens and a Split regex, then a
/// long text of one repeated unit.
std::string gen_recipe(Rng& r) {
    const std::string n = std::to_string(fuzz_mutator::pick_count(r));
    const std::string content =
        r.pick(std::vector<std::string>{"<t\x03>", "<\x03", "a\x03", "<|\x03|>", "<t\x03"});
    std::string j = R"({"added_tokens":[{"id":256,"content":"<|endoftext|>","special":true})";
    if (r.chance(70))
        j += "\x01" + n + "+257:,{\"id\":\x03,\"content\":\"" + content +
             "\",\"special\":" + (r.chance(70) ? "true" : "false") +
             (r.chance(20) ? ",\"lstrip\":true" : "") + (r.chance(20) ? ",\"single_word\":true" : "") +
             "}\x02";
    j += "],";
    j += r.chance(30) ? R"("normalizer":{"type":"NFC"},)" : R"("normalizer":null,)";
    j += "\"pre_tokenizer\":" + pre_tokenizer(r) + ",";
    j += R"("decoder":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{)"
         "\x05"
         "},\"merges\":[";
    if (r.chance(10)) j += R"("a a","\u0120 \u0120")";
    j += "]}}";
    // The text: half the time megabytes; mostly 'a' for the backtracking regexes, spaces for the real
    // ones, '<' for the added tokens.
    const std::string count =
        r.chance(50) ? std::to_string(r.pick(std::vector<std::uint64_t>{65536, 1048576, 4194304}))
                     : std::to_string(fuzz_mutator::pick_count(r));
    const std::string unit = r.chance(50) ? r.pick(kUnits) : r.pick(std::vector<std::string>{"a", " ", "<"});
    std::string text = "\x01" + count + ":" + unit + "\x02";
    if (r.chance(60)) text += r.pick(std::vector<std::string>{"x", "b", "c", " ", "<t1>", "<|endoftext|>"});
    return std::string(fuzz_recipe::kRecipeMagic) + j + std::string(1, '\0') + text;
}

const std::vector<std::string> kWords = [] {
    std::vector<std::string> w = kRegexes;
    for (const char* s :
         {"Split", "ByteLevel", "Sequence", "NFC", "BPE", "WordPiece", "Unigram", "<t1>", "<|endoftext|>"})
        w.push_back(s);
    return w;
}();

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
    Rng r(seed);
    bool taken = false;
    std::size_t out = fuzz_mutator::recipe_step(data, size, max_size, r, gen_recipe, kWords, taken);
    if (!taken && r.chance(20) && size > 1) {  // a raw tokenizer.json: a dictionary string in place
        std::string s(reinterpret_cast<const char*>(data), size);
        if (fuzz_mutator::replace_string(s, 1, r.pick(kWords), r) && s.size() <= max_size) {
            std::memcpy(data, s.data(), s.size());
            out = s.size();
        }
    }
    return out ? out : LLVMFuzzerMutate(data, size, max_size);
}
#endif  // ATTNVIZ_FUZZ_MUTATORS
