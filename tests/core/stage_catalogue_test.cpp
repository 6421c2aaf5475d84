// The stage catalogue is complete: every stage any compute_trace produces (over configs that switch
// on every optional stage) has exactly one entry, with the kind the trace gives it.
#include "core/stage_catalogue.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace attnviz {
namespace {

std::vector<Config> configs_covering_every_stage() {
    std::vector<Config> out;
    Config base;
    base.text = "the cat sat on the mat";
    out.push_back(base);
    for (Positional p : {Positional::Sinusoidal, Positional::Learned, Positional::Rope, Positional::Alibi}) {
        Config c = base;
        c.positional = p;
        out.push_back(c);
    }
    for (Scoring s : {Scoring::Dot, Scoring::Additive, Scoring::Bilinear, Scoring::Gaussian, Scoring::Boxcar,
                      Scoring::Epanechnikov}) {
        Config c = base;
        c.scoring = s;
        c.mask = MaskKind::Causal;
        out.push_back(c);
    }
    for (LayerNormMode l : {LayerNormMode::Pre, LayerNormMode::Post}) {
        Config c = base;
        c.layernorm = l;
        out.push_back(c);
    }
    Config lin = base;
    lin.attention = AttentionKind::Linear;
    out.push_back(lin);
    Config cross = base;
    cross.source_text = "le chat est assis";
    out.push_back(cross);
    return out;
}

TEST(StageCatalogue, EveryStageOfEveryTraceHasAnEntryWithItsKind) {
    std::set<std::string> seen;
    for (const Config& c : configs_covering_every_stage()) {
        const Trace t = compute_trace(c);
        for (const Stage& st : t.stages) {
            seen.insert(st.name);
            const StageEntry* e = find_stage_entry(st.name);
            ASSERT_NE(e, nullptr) << "stage \"" << st.name << "\" has no catalogue entry";
            if (!e->kind_varies) {
                EXPECT_EQ(int(st.kind), int(e->kind)) << "stage \"" << st.name << "\" head " << st.head;
            }
        }
    }
    // The configs above reach every single-layer stage the catalogue lists (model stages are
    // checked in model_trace_test.cpp).
    for (const char* name :
         {"one_hot",       "embedding",  "positional",  "input",  "source", "layernorm", "W_Q",
          "W_K",           "W_V",        "Q",           "K",      "V",      "Q_rot",     "K_rot",
          "alibi",         "scores",     "scaled",      "masked", "phi_Q",  "phi_K",     "KV",
          "weights",       "normalizer", "head_output", "concat", "W_O",    "output",    "residual",
          "layernorm_post"})
        EXPECT_TRUE(seen.count(name)) << "no config produced stage \"" << name << "\"";
}

TEST(StageCatalogue, NamesAreUniqueAndPhasesKnown) {
    std::set<std::string> names;
    const std::set<std::string> phases = {"embed", "project", "score", "normalise", "combine"};
    for (const StageEntry& e : stage_catalogue()) {
        EXPECT_TRUE(names.insert(e.name).second) << "duplicate entry " << e.name;
        EXPECT_TRUE(phases.count(e.phase)) << e.name << ": phase " << e.phase;
        EXPECT_FALSE(std::string(e.role).empty()) << e.name;
    }
    EXPECT_EQ(find_stage_entry("no_such_stage"), nullptr);
    EXPECT_EQ(stage_phase_of("no_such_stage"), "combine");
    EXPECT_EQ(stage_phase_of("scores"), "score");
    EXPECT_EQ(stage_phase_of("ln_1"), "embed");
}

}  // namespace
}  // namespace attnviz
