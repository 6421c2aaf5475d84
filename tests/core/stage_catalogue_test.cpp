// The stage catalogue is complete: every stage any compute_trace produces (over configs that switch
// on every optional stage) has exactly one entry, with the kind the trace gives it.
#include "core/stage_catalogue.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
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
    const std::set<std::string> phases = {"embed", "project", "score", "normalise", "combine", "output"};
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

// The catalogue is the phases' tables one after the other; the single layer records the entries that
// have a record function, the per-head ones inside the heads' loop.
TEST(StageCatalogue, IsThePhasesTablesInOrder) {
    std::vector<std::string> expected;
    for (const auto& table : {embed_stages(), project_stages(), score_stages(), normalise_stages(),
                              combine_stages(), block_stages()})
        for (const StageEntry& e : table) expected.push_back(e.name);
    std::vector<std::string> names;
    for (const StageEntry& e : stage_catalogue()) {
        names.push_back(e.name);
        // A stage of the single layer has its texts, its hover and its record together.
        EXPECT_EQ(e.layer_text != nullptr, e.record != nullptr) << e.name;
        if (e.record) {
            EXPECT_NE(e.explain, nullptr) << e.name;
        } else {
            EXPECT_NE(e.model_text, nullptr) << e.name << " belongs to no trace";
        }
    }
    EXPECT_EQ(names, expected);
    EXPECT_EQ(names.size(), 49u);  // 37 + a model's embed, ln_f, logits, probs + an encoder–decoder's 8

    const LayerStagePlan& plan = layer_stage_plan();
    auto names_of = [](const std::vector<const StageEntry*>& v) {
        std::vector<std::string> out;
        for (const StageEntry* e : v) out.push_back(e->name);
        return out;
    };
    EXPECT_EQ(names_of(plan.before), (std::vector<std::string>{"one_hot", "embedding", "positional", "input",
                                                               "source", "layernorm"}));
    EXPECT_EQ(names_of(plan.per_head),
              (std::vector<std::string>{"W_Q", "W_K", "W_V", "Q", "K", "V", "Q_rot", "K_rot", "alibi",
                                        "scores", "scaled", "masked", "phi_Q", "phi_K", "KV", "normalizer",
                                        "weights", "head_output"}));
    EXPECT_EQ(names_of(plan.after),
              (std::vector<std::string>{"concat", "W_O", "output", "residual", "layernorm_post"}));
}

// Adding a stage is one entry: a fixture entry placed after "weights" in a copy of the table is
// recorded per head right there; a per-head entry after the heads' stages is refused.
TEST(StageCatalogue, AddingAnEntryAddsOneStageToThePlan) {
    std::vector<StageEntry> table = stage_catalogue();
    const StageEntry fixture = {"fixture",
                                "normalise",
                                ValueKind::Signed,
                                false,
                                "a test fixture",
                                true,
                                [](const LayerWords&) {
                                    return StageText{"Fixture", "f = 0", ""};
                                },
                                nullptr,
                                [](const CellQuery&, std::vector<std::string>&) {},
                                [](LayerRecorder&, int) {}};
    auto at = table.begin();
    while (std::string(at->name) != "weights") ++at;
    table.insert(at + 1, fixture);
    const LayerStagePlan plan = make_layer_stage_plan(table);
    const LayerStagePlan& shipped = layer_stage_plan();
    EXPECT_EQ(plan.before.size(), shipped.before.size());
    EXPECT_EQ(plan.after.size(), shipped.after.size());
    ASSERT_EQ(plan.per_head.size(), shipped.per_head.size() + 1);
    EXPECT_STREQ(plan.per_head[plan.per_head.size() - 2]->name, "fixture");

    table.push_back(fixture);
    EXPECT_THROW(make_layer_stage_plan(table), std::logic_error);
}

}  // namespace
}  // namespace attnviz
