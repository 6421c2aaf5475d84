// Per-view state follows the document the moment it is loaded, not when a panel next draws: the
// state log (and a script's `expect`) read it at the end of the very frame the scene was opened in.
#include "app/panels/view_state.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace attnviz::app
