// The registry: the phases' tables (core/stages/*.cpp) one after the other, in computation order.
#include "core/stage_catalogue.hpp"

#include <stdexcept>

namespace attnviz {

const std::vector<StageEntry>& stage_catalogue() {
    static const std::vector<StageEntry> entries = [] {
        std::vector<StageEntry> all;
        for (std::vector<StageEntry> (*phase)() :
             {embed_stages, project_stages, score_stages, normalise_stages, combine_stages, block_stages}) {
            const std::vector<StageEntry> part = phase();
            all.insert(all.end(), part.begin(), part.end());
        }
        return all;
    }();
    return entries;
}

const StageEntry* find_stage_entry(const std::string& name) {
    for (const StageEntry& e : stage_catalogue())
        if (name == e.name) return &e;
    return nullptr;
}

LayerStagePlan make_layer_stage_plan(const std::vector<StageEntry>& entries) {
    LayerStagePlan plan;
    for (const StageEntry& e : entries) {
        if (!e.record) continue;
        if (e.per_head) {
            if (!plan.after.empty())
                throw std::logic_error(std::string("stage ") + e.name +
                                       ": per-head stages must be contiguous");
            plan.per_head.push_back(&e);
        } else {
            (plan.per_head.empty() ? plan.before : plan.after).push_back(&e);
        }
    }
    return plan;
}

const LayerStagePlan& layer_stage_plan() {
    static const LayerStagePlan plan = make_layer_stage_plan(stage_catalogue());
    return plan;
}

StageText model_stage_text(const ModelSpec& spec, const std::string& name, int head) {
    const StageEntry* e = find_stage_entry(name);
    if (!e || !e->model_text) return {name, name, ""};
    return e->model_text(ModelWords(spec, head));
}

StageText layer_stage_text(const Config& cfg, const LayerTextContext& context, const std::string& name,
                           int head, TextLanguage language) {
    const StageEntry* e = find_stage_entry(name);
    if (!e || !e->layer_text) return StageText{name, "", ""};
    return e->layer_text(LayerWords(cfg, context, head, language));
}

std::string stage_phase_of(const std::string& name) {
    const StageEntry* e = find_stage_entry(name);
    return e ? e->phase : "combine";
}

}  // namespace attnviz
