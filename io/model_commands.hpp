// Headless commands on real models (Hugging Face folders, io/model_loader.hpp):
//   attnviz dump --model DIR (--text TEXT [--text-b TEXT] | --ids 1,2,3) --out OUT [--layer L ...]
//                [--set temperature=T]
//   attnviz generate --model DIR (--text TEXT | --ids 1,2,3) --tokens N [--temperature T] [--top-k K]
//                    [--top-p P] [--seed S]
#pragma once

#include <string>
#include <vector>

#include "core/model.hpp"

namespace attnviz {

struct ModelSpec;
struct CliArgs;

/// The worker threads of --threads N (0, the default, = all cores).
int threads_flag(const CliArgs& args);

/// "12,5,7" → {12, 5, 7}; UsageError naming `flag` for anything else.
std::vector<int> parse_ids(const std::string& text, const char* flag = "--ids");

/// A decoder-only model from DIR for a command that needs one (ablate, patch, attribute): an
/// encoder–decoder (t5, bart) is refused with one UsageError line naming the command.
ModelWeights load_decoder_only_model(const std::string& dir, const char* command);

/// For the commands that predict the next token (generate, ablate, patch, attribute): an encoder is
/// refused with one UsageError line (exit 2) saying it fills masks and does not `what` ("generate").
void refuse_encoder(const ModelSpec& spec, const std::string& dir, const std::string& what);

/// True when argv (argv[0] = the command) has --model / --model=DIR: `dump` then dumps a real model.
bool has_model_flag(int argc, char** argv);

/// Every stage of a real model's forward pass as .npy files plus OUT/manifest.json with `model`
/// (architecture, n_layer, n_head, n_kv_head, d_model, vocab_size), `tokens` ([{id, text}]) and
/// `stages` ([{name, layer, head, shape, file}]). Per layer: ln_1, Q, K, V, scores, weights,
/// head_output (per query head), attn_out, resid_mid, ln_2, mlp_out, resid_post; then ln_f,
/// logits [n, V], probs [V] (last position, softmax(logits / temperature)), rollout [n, n].
/// An encoder–decoder (t5, bart): --text / --ids is the encoder's input, --target TEXT / --target-ids the
/// decoder's after its start token; the manifest adds `source_tokens`, every stage entry a `stack`
/// ("encoder" / "decoder", files encoder_… / decoder_…), T5's `position_bias` per head (layer null) and
/// per decoder layer cross_Q, cross_K, cross_V, cross_scores, cross_weights, cross_head_output (rows =
/// target tokens, columns = source tokens) and cross_attn_out.
/// An encoder (BERT, RoBERTa, DistilBERT): the same names, logits [n, V] from the masked-LM head and
/// probs [n, V] (every position); token_type [n, d] (the segment embeddings added) first where the
/// model has token types, whose tokens also carry "token_type"; a bare encoder (no head) has no
/// ln_f, logits or probs. With --text-b the input is the pair the tokenizer's post-processor makes.
int run_model_dump_command(int argc, char** argv);  // argv[0] == "dump"

/// One layer's stage of a real model as a figure (the app's Export PNG on a model layer):
///   attnviz render --model DIR (--text TEXT | --ids 1,2,3) [--layer L] --stage NAME [--head H]
///                  --out FIG.png [--scale S] [--grid]
int run_model_render_command(int argc, char** argv);  // argv[0] == "render"

/// Prints the continuation of the text, N tokens, greedy when T = 0.
int run_generate_command(int argc, char** argv);  // argv[0] == "generate"

}  // namespace attnviz
