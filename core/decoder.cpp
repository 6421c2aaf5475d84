#include "core/decoder.hpp"

namespace attnviz {

const char* hook_stage_name(HookStage stage) {
    static const char* const kNames[] = {"ln_1",    "Q",           "K",        "V",         "scores",
                                         "weights", "head_output", "attn_out", "resid_mid", "ln_2",
                                         "mlp_out", "resid_post",  "ln_f",     "logits"};
    static_assert(sizeof(kNames) / sizeof(kNames[0]) == std::size_t(HookStage::count));
    return kNames[int(stage)];
}

bool hook_stage_per_head(HookStage stage) {
    return stage == HookStage::Q || stage == HookStage::K || stage == HookStage::V ||
           stage == HookStage::scores || stage == HookStage::weights || stage == HookStage::head_output;
}

}  // namespace attnviz
