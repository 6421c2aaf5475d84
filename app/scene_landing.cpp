#include "app/scene_landing.hpp"

#include <algorithm>

#include "app/panels/view_state.hpp"

namespace attnviz::app {

void load_scene_into(AppState& state, const Scene& scene, const std::string& path) {
    state.config = scene.config;
    state.scene_config = scene.config;
    state.scene_title = scene.title.empty() ? (path.empty() ? "Built-in example" : path) : scene.title;
    state.scene_note = scene.note;
    state.scene_path = path;
    state.link_head_dims = scene.config.d_k == 0 && scene.config.d_v == 0;
    state.pinned_row = -1;
    state.scene_model = scene.model;
    reset_views(state);  // fresh zoom, choices and boxes for the new scene
    land_on_focus(state, scene, scene.focus);
}

void land_on_focus(AppState& state, const Scene& scene, const SceneFocus& f) {
    if (!scene.model.empty()) {  // the scene opens a model (the shell loads it in the background)
        ModelUi& m = state.model;
        const std::string text = !f.text.empty()             ? f.text
                                 : !scene.model_text.empty() ? scene.model_text
                                                             : m.text;
        // Where to land once it has loaded (the session's resume, as for a reopened workspace).
        ModelUi::Resume r;
        r.dir = scene.model;
        r.layer = f.layer.value_or(0);
        r.head = f.head.value_or(0);
        r.pinned_row = f.pin.value_or(-1);
        r.model_view = f.view == "model";
        r.stage = f.stage;
        if (m.active && m.dir == scene.model && m.open_request.empty() && !m.loading && text != m.text) {
            // Already open, another text: no reload; land when the run on the new text arrives (a
            // pinned row may be beyond the old text's end).
            m.text = text;
            m.resume = r;
            return;
        }
        m.text = text;
        if (m.active && m.dir == scene.model && m.open_request.empty() && !m.loading) {
            // Already open (a tour's next step on the same model): land at once, no reload.
            m.resume = {};
            m.layer = std::clamp(f.layer.value_or(0), 0, std::max(0, m.n_layer - 1));
            state.head = std::clamp(f.head.value_or(0), 0, std::max(0, m.n_head - 1));
            state.pinned_row = f.pin.value_or(-1);
            state.view = f.view == "model"   ? MainView::Model
                         : f.view == "heads" ? MainView::HeadsGrid
                                             : MainView::Stage;
            if (!f.stage.empty()) state.requested_stage = f.stage;
            return;
        }
        state.model.resume = r;
        state.model.open_request = scene.model;
    } else {
        if (f.head) state.head = *f.head;
        if (f.pin) state.pinned_row = *f.pin;
        if (!f.stage.empty()) state.requested_stage = f.stage;
        if (f.view == "heads") state.view = MainView::HeadsGrid;
        if (f.view == "stage") state.view = MainView::Stage;
        // A single-layer scene: a model still on its way (a File ▸ Open model… or a drop a moment
        // ago, or the workspace's) would take its place when it arrives: cancel it.
        if (state.model.loading || !state.model.open_request.empty()) {
            state.model.open_request.clear();
            state.model.cancel_load = true;
        }
        if (state.model.active) {
            state.model.close_request = true;  // back to the single layer to show the scene
            state.model.close_for_scene = true;
        }
    }
}

}  // namespace attnviz::app
