#include "app/panels/view_state.hpp"

namespace attnviz::app {

ViewStates& views(const AppState& state) {
    if (!state.views) state.views = std::make_shared<ViewStates>();
    return *state.views;
}

void reset_views(AppState& state) {
    state.views = std::make_shared<ViewStates>();
    state.views->controls.cross = state.config.cross_attention();
}

}  // namespace attnviz::app
