// `attnviz tokenize`: a model folder's tokenizer run on a text (or many), from the command line.
#pragma once

namespace attnviz {

/// attnviz tokenize --model DIR (--text TEXT | --text-file FILE | --texts-json FILE) [--text-b TEXT]
///                  [--no-special-tokens] [--pieces]
/// Prints the token ids as Hugging Face's encode() gives them -- with the special tokens the file's
/// post-processor adds for a model ([CLS] ... [SEP], <s> ..., ... </s>), or the text's tokens alone
/// with --no-special-tokens; --text-b makes a sentence pair -- as one JSON array ("[31373,995]"), or
/// with --pieces an array of
/// {"id": 31373, "text": "hello"} objects (readable token text, see io/tokenizer.hpp). With
/// --texts-json (a JSON array of strings) it prints an array of those results, one per text: a whole
/// dataset through one loaded tokenizer.
/// One-line error and exit 1 on a bad folder, file or text; exit 2 on bad flags.
int run_tokenize_command(int argc, char** argv);  // argv[0] == "tokenize"

}  // namespace attnviz
