#include "app/panels/view_state.hpp"

#include <algorithm>

namespace attnviz::app {

ViewStates& views(const AppState& state) {
    if (!state.views) state.views = std::make_shared<ViewStates>();
    return *state.views;
}

void reset_views(AppState& state) {
    state.views = std::make_shared<ViewStates>();
    state.views->controls.cross = state.config.cross_attention();
}

float explanation_panel_height(float total, float explain_need, float lower_need, float lower_share) {
    total = std::max(0.0f, total);
    const float share = std::clamp(lower_share, 0.0f, 1.0f) * total;
    if (!(lower_need > 0)) lower_need = share;
    const float lower_min = std::min(lower_need, share);
    // Both fit: the lower panel its need, the Explanation the rest; else the Explanation its need
    // up to what the lower panel's minimum leaves.
    return std::clamp(std::max(explain_need, total - lower_need), 0.0f, total - lower_min);
}

}  // namespace attnviz::app
