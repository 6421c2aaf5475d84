#include "core/decoder.hpp"

namespace attnviz {

const char* hook_stage_name(HookStage stage) {
    static const char* const kNames[] = {"ln_1",
                                         "Q",
                                         "K",
                                         "V",
                                         "scores",
                                         "weights",
                                         "head_output",
                                         "attn_out",
                                         "resid_mid",
                                         "cross_Q",
                                         "cross_K",
                                         "cross_V",
                                         "cross_scores",
                                         "cross_weights",
                                         "cross_head_output",
                                         "cross_attn_out",
                                         "ln_2",
                                         "mlp_out",
                                         "resid_post",
                                         "position_bias",
                                         "ln_f",
                                         "logits"};
    static_assert(sizeof(kNames) / sizeof(kNames[0]) == std::size_t(HookStage::count));
    return kNames[int(stage)];
}

bool hook_stage_per_head(HookStage stage) {
    switch (stage) {
        case HookStage::Q:
        case HookStage::K:
        case HookStage::V:
        case HookStage::scores:
        case HookStage::weights:
        case HookStage::head_output:
        case HookStage::cross_Q:
        case HookStage::cross_K:
        case HookStage::cross_V:
        case HookStage::cross_scores:
        case HookStage::cross_weights:
        case HookStage::cross_head_output:
        case HookStage::position_bias:
            return true;
        default:
            return false;
    }
}

}  // namespace attnviz
