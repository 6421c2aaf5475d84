// An encoder–decoder's own controls (t5, bart): the target text box (the decoder's input) and the
// chooser of the three attention families the model, lines and stage views show.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <string>

#include "app/panels/panels.hpp"

namespace attnviz::app {

void draw_seq2seq_target(AppState& state) {
    ModelUi& m = state.model;
    if (!m.active || !m.seq2seq) return;
    ImGui::TextUnformatted("Target");
    ImGui::SameLine();
    help_marker(
        "What the decoder has written so far (its input after the start token): empty = the start token "
        "alone. The text box above is the source, the encoder's input. Append greedy / sampled below adds "
        "the decoder's next token here, one at a time, and pins the row of cross-attention that wrote it.");
    ImGui::InputTextMultiline("##model_target", &m.target, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 2.4f));
    remember_item_rect(state, "model_target");
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%d source tokens → %d target tokens (start token included)", m.n_source, m.n);
    ImGui::PopTextWrapPos();
}

void draw_attention_family(AppState& state) {
    ModelUi& m = state.model;
    if (!m.active || !m.seq2seq) return;
    struct Choice {
        AttnFamily family;
        const char* label;
        const char* id;
        const char* tip;
    };
    static constexpr Choice kChoices[] = {
        {AttnFamily::Encoder, "encoder", "family_encoder",
         "The encoder's self-attention: every source token attends to every source token (no mask)."},
        {AttnFamily::Decoder, "decoder", "family_decoder",
         "The decoder's self-attention: each target token attends to itself and the target tokens before it "
         "(causal mask)."},
        {AttnFamily::Cross, "cross", "family_cross",
         "Decoder→encoder cross-attention: rows are target tokens, columns source tokens — which source "
         "word each target word reads (the alignment picture of translation)."},
    };
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Attention:");
    for (const Choice& c : kChoices) {
        same_line_if_fits(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                          ImGui::CalcTextSize(c.label).x);
        if (ImGui::RadioButton(c.label, m.family == c.family)) m.family = c.family;
        remember_item_rect(state, c.id);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", c.tip);
    }
}

}  // namespace attnviz::app
