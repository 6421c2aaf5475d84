// `attnviz tokenize --model DIR --text "..."`: see io/tokenize_command.hpp.
#include "io/tokenize_command.hpp"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/cli.hpp"
#include "io/files.hpp"
#include "io/tokenizer.hpp"

namespace attnviz {

namespace {

const std::vector<CliOption>& tokenize_options() {
    static const std::vector<CliOption> options = {
        {"--model", "DIR", "model folder with tokenizer.json (or vocab.json + merges.txt)", false},
        {"--text", "TEXT", "text to tokenize (UTF-8)", false},
        {"--text-file", "FILE", "read the text from a file instead (UTF-8, at most 4 MiB)", false},
        {"--texts-json", "FILE",
         "tokenize many texts in one run: FILE is a JSON array of strings (at most 4 MiB); prints a JSON "
         "array with one result per text",
         false},
        {"--text-b", "TEXT", "a second text: the pair as the model gets it ([CLS] A [SEP] B [SEP], ...)",
         false},
        {"--no-special-tokens", "",
         "the text's tokens alone, without the special tokens the tokenizer adds for a model ([CLS], [SEP], "
         "<s>, </s>; Hugging Face's add_special_tokens=False)",
         false},
        {"--pieces", "", "print {\"id\", \"text\"} objects instead of bare ids", false},
    };
    return options;
}

std::string read_text_file(const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);  // refuse a huge file before reading it
    if (!ec && size > kMaxTokenizeTextBytes)
        throw TextError(path + ": larger than the " + std::to_string(kMaxTokenizeTextBytes >> 20) +
                        " MiB that can be tokenized");
    std::string text = read_file(path);
    if (text.size() > kMaxTokenizeTextBytes)
        throw TextError(path + ": larger than the " + std::to_string(kMaxTokenizeTextBytes >> 20) +
                        " MiB that can be tokenized");
    return text;
}

// The texts of a --texts-json file: a JSON array of strings, or one line saying what is wrong.
std::vector<std::string> read_texts_json(const std::string& path) {
    const std::string body = read_text_file(path);
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) throw TextError(path + ": not valid JSON (expected an array of strings)");
    if (!j.is_array()) throw TextError(path + ": expected a JSON array of strings, found " + j.type_name());
    std::vector<std::string> texts;
    texts.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_string())
            throw TextError(path + ": element " + std::to_string(i) + " is " + j[i].type_name() +
                            ", not a string");
        texts.push_back(j[i].get<std::string>());
    }
    return texts;
}

struct EncodeOptions {
    bool pieces = false, special = true;
    std::optional<std::string> text_b;
};

// One text's result: bare ids, or {"id", "text"} pieces; with the special tokens for a model (as
// Hugging Face's encode() by default) unless --no-special-tokens.
nlohmann::json encode_json(const Tokenizer& tokenizer, const std::string& text, const EncodeOptions& o) {
    std::vector<int> ids;
    if (!o.special) {
        ids = tokenizer.encode(text);
        if (o.text_b) {
            const std::vector<int> b = tokenizer.encode(*o.text_b);
            ids.insert(ids.end(), b.begin(), b.end());
        }
    } else {
        ids = (o.text_b ? tokenizer.encode_pair_for_model(text, *o.text_b) : tokenizer.encode_for_model(text))
                  .ids;
    }
    if (!o.pieces) return ids;
    nlohmann::json out = nlohmann::json::array();
    for (int id : ids) out.push_back({{"id", id}, {"text", tokenizer.token_text(id)}});
    return out;
}

}  // namespace

int run_tokenize_command(int argc, char** argv) {
    return run_cli_command("attnviz tokenize", [&] {
        const auto& options = tokenize_options();
        const CliArgs args = parse_cli(argc, argv, options);
        if (args.has("--help")) {
            std::cout << cli_usage("attnviz tokenize", options, {"--model"});
            return 0;
        }
        require_flag(args, options, "--model");
        const int sources =
            int(args.has("--text")) + int(args.has("--text-file")) + int(args.has("--texts-json"));
        if (sources != 1)
            throw UsageError(
                "give the text with exactly one of --text TEXT, --text-file FILE or --texts-json FILE");
        EncodeOptions o;
        o.pieces = args.has("--pieces");
        o.special = !args.has("--no-special-tokens");
        o.text_b = args.get("--text-b");
        nlohmann::json out;
        if (args.has("--texts-json")) {
            const std::vector<std::string> texts = read_texts_json(*args.get("--texts-json"));
            const auto tokenizer = Tokenizer::load_dir(*args.get("--model"));
            out = nlohmann::json::array();
            for (std::size_t i = 0; i < texts.size(); ++i) {
                try {
                    out.push_back(encode_json(*tokenizer, texts[i], o));
                } catch (const TextError& e) {  // which text of the file, in the one line
                    throw TextError(*args.get("--texts-json") + ": text " + std::to_string(i) + ": " +
                                    e.what());
                }
            }
        } else {
            const std::string text =
                args.has("--text") ? *args.get("--text") : read_text_file(*args.get("--text-file"));
            const auto tokenizer = Tokenizer::load_dir(*args.get("--model"));
            out = encode_json(*tokenizer, text, o);
        }
        std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return 0;
    });
}

}  // namespace attnviz
