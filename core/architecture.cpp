// The table of architectures: see core/architecture.hpp.
#include "core/architecture.hpp"

namespace attnviz {

const std::vector<Architecture>& architectures() {
    // Never destroyed: the Training lab's thread (param_layout) may still read it while the program exits.
    static const std::vector<Architecture>& table = *new std::vector<Architecture>{
        gpt2_architecture(),  llama_architecture(), qwen2_architecture(), mistral_architecture(),
        gemma_architecture(), t5_architecture(),    bart_architecture(),
    };
    return table;
}

const Architecture* find_architecture(const std::string& model_type) {
    for (const Architecture& a : architectures())
        for (const std::string& t : a.model_types)
            if (t == model_type) return &a;
    return nullptr;
}

std::string architecture_names() {
    std::vector<std::string> names;
    for (const Architecture& a : architectures())
        names.insert(names.end(), a.model_types.begin(), a.model_types.end());
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
}

const Architecture& train_architecture(const TrainConfig& config) {
    for (const Architecture& a : architectures())
        if (a.trains && a.write && a.trains(config)) return a;
    return *find_architecture("llama");  // (unreachable: Llama's layout holds every config)
}

}  // namespace attnviz
