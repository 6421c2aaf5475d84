// Per-view state follows the document the moment it is loaded, not when a panel next draws: the
// state log (and a script's `expect`) read it at the end of the very frame the scene was opened in.
#include "app/panels/view_state.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "app/dialogs.hpp"
#include "io/scene.hpp"

namespace attnviz::app {
namespace {

TEST(ViewState, LoadingASceneSetsTheCrossAttentionBoxAtOnce) {
    AppState state;
    Scene cross;
    cross.config.text = "the black cat";
    cross.config.source_text = "le chat noir";
    load_scene_into(state, cross, "cross.json");
    ASSERT_TRUE(state.views);
    EXPECT_TRUE(state.views->controls.cross);
    EXPECT_TRUE(state_json(state)["cross_attention_box"].get<bool>());

    Scene self;
    self.config.text = "the black cat";
    views(state).stage.chart_hover = 3;  // a view choice the next scene must not inherit
    load_scene_into(state, self, "self.json");
    EXPECT_FALSE(state.views->controls.cross);
    EXPECT_EQ(state.views->stage.chart_hover, -1);
    EXPECT_FALSE(state_json(state)["cross_attention_box"].get<bool>());
}

// The right column (800 px here) split between the Explanation and the panel below it (the tour's
// Start here panel, 44 % of the column at least unless it needs less).
TEST(SidePanels, BothFitTheLowerPanelGetsItsNeedAndTheExplanationTheRest) {
    EXPECT_FLOAT_EQ(explanation_panel_height(800, 300, 200, 0.44f), 600);
    EXPECT_FLOAT_EQ(explanation_panel_height(800, 600, 200, 0.44f), 600);  // exactly fits
}

TEST(SidePanels, TooLongTheExplanationTakesWhatTheLowerPanelCanSpare) {
    // The lower panel needs less than its share: the Explanation gets everything else.
    EXPECT_FLOAT_EQ(explanation_panel_height(800, 900, 260, 0.44f), 540);
    // Both too long: the lower panel keeps its share, the Explanation scrolls in the rest.
    EXPECT_FLOAT_EQ(explanation_panel_height(800, 900, 500, 0.44f), 448);
    // A short explanation above a long lower panel: the lower panel gets the room it leaves.
    EXPECT_FLOAT_EQ(explanation_panel_height(800, 250, 700, 0.44f), 250);
}

TEST(SidePanels, UnmeasuredNeedsSplitByTheShare) {
    EXPECT_FLOAT_EQ(explanation_panel_height(800, 0, 0, 0.36f), 512);
    EXPECT_FLOAT_EQ(explanation_panel_height(800, 900, 0, 0.36f), 512);
    EXPECT_FLOAT_EQ(explanation_panel_height(0, 900, 300, 0.36f), 0);
    for (float e : {0.0f, 100.0f, 500.0f, 2000.0f})
        for (float l : {0.0f, 50.0f, 400.0f, 2000.0f}) {
            const float h = explanation_panel_height(700, e, l, 0.36f);
            EXPECT_GE(h, 0) << e << ", " << l;
            EXPECT_LE(h, 700) << e << ", " << l;
            EXPECT_GE(700 - h, std::min(l > 0 ? l : 252.0f, 252.0f) - 1e-3f)
                << e << ", " << l;  // the lower keeps its minimum
        }
}

}  // namespace
}  // namespace attnviz::app
