#include "app/panels/view_state.hpp"

namespace attnviz::app {

ViewStates& views(const AppState& state) {
    if (!state.views) state.views = std::make_shared<ViewStates>();
    return *state.views;
}

}  // namespace attnviz::app
