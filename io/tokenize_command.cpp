// `attnviz tokenize --model DIR --text "..."`: see io/tokenize_command.hpp.
#include "io/tokenize_command.hpp"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
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
        if (args.has("--text") == args.has("--text-file"))
            throw UsageError("give the text with exactly one of --text TEXT or --text-file FILE");
        const std::string text =
            args.has("--text") ? *args.get("--text") : read_text_file(*args.get("--text-file"));
        const auto tokenizer = Tokenizer::load_dir(*args.get("--model"));
        nlohmann::json out = nlohmann::json::array();
        if (args.has("--pieces")) {
            for (const TokenPiece& p : tokenizer->encode_pieces(text))
                out.push_back({{"id", p.id}, {"text", p.text}});
        } else {
            out = tokenizer->encode(text);
        }
        std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return 0;
    });
}

}  // namespace attnviz
