#!/usr/bin/env bash
# The Interventions panel on the shipped induction model (assets/models/induction-2l), through the
# app's own input path (app/script.hpp):
#   --model induction-2l --view interventions  -> every head's Δloss (the importance grid) arrives
#   click head 1.0 (the induction head)        -> the repeat loss shown goes up
#   click it again                             -> restored: the loss comes back to the same number
#   Patch tab, a corrupt text of another length -> one error line; the ablation choices, the text and
#                                                 the grid stay
#   the lines view: a hovered query token keeps only its lines; PNG and SVG export
#   usage: bash tests/gui/interventions_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
model="$(cd "$here/../../assets/models/induction-2l" && pwd)"
text="the quick brown fox jumps over a lazy dog. the quick brown fox jumps over a lazy dog."
export TMPDIR_TEST="$tmp"

run_script interventions --fresh --model "$model" --text "$text" --view interventions <<'EOF'
wait model_active == true && view == interventions && interventions.importance_ready == true && interventions.busy == false
expect interventions.repeat_count > 5 && interventions.ablated == []
let base interventions.base_repeat_loss
let base_all interventions.base_loss
expect interventions.repeat_loss == $base
# --- knock out the induction head: the repeat loss goes up ---------------------------------------
wait widgets.interv_head_1_0 != null
click widget interv_head_1_0 0.5 0.5
wait interventions.ablated ~ "1.0" && interventions.repeat_loss > $base && interventions.busy == false
expect interventions.loss > $base_all && interventions.base_repeat_loss == $base
screenshot ${TMPDIR_TEST}/ablated.png
# --- restore it: the same numbers as before ------------------------------------------------------
click widget interv_head_1_0 0.5 0.5
wait interventions.ablated == [] && interventions.repeat_loss == $base
expect interventions.loss == $base_all
# --- mean ablation: a new grid, computed in the background ---------------------------------------
click widget interv_mean 0.5 0.5
wait interventions.mode == mean && interventions.busy == false && interventions.importance_ready == true
click widget interv_zero 0.5 0.5
wait interventions.mode == zero && interventions.busy == false
# --- bad input: a corrupt text of another length is one line; nothing else changes ---------------
click widget interv_head_1_0 0.5 0.5
wait interventions.ablated ~ "1.0" && interventions.busy == false
let ablated_loss interventions.repeat_loss
let text0 model_text
click widget interv_tab_patch 0.5 0.5
wait interventions.patching == true && widgets.interv_corrupt != null
click widget interv_corrupt 0.5 0.5
wait text_input_active == true
type the quick brown fox
click widget interv_answer 0.5 0.5
wait text_input_active == true
type  jumps
click widget interv_wrong 0.5 0.5
wait text_input_active == true
type  dog
click widget interv_tab_patch 0.5 0.5
wait interventions.patch_error ~ "same number of tokens" && interventions.busy == false
expect interventions.patch_error ~ "the corrupt text 4" && interventions.patch_ready == false
expect model_text == $text0 && interventions.ablated ~ "1.0" && interventions.importance_ready == true
expect model_active == true
click widget interv_tab_ablate 0.5 0.5
wait interventions.patching == false
expect interventions.repeat_loss == $ablated_loss
# --- the lines view: a hovered query keeps only its lines, PNG and SVG ----------------------------
wait widgets.view_lines != null
click widget view_lines 0.5 0.5
wait view == lines && widgets.lines_query_3 != null && widgets.lines_export_svg != null
move widget lines_query_3 0.5 0.5
frames 3
screenshot ${TMPDIR_TEST}/lines.png
click widget lines_export_png 0.5 0.5
wait export_path ~ lines && export_path ~ .png
click widget lines_export_svg 0.5 0.5
wait export_path ~ lines && export_path ~ .svg
quit
EOF
[ -s "$tmp/ablated.png" ] || fail "no screenshot of the ablated panel"
[ -s "$tmp/lines.png" ] || fail "no screenshot of the lines view"
ls "$tmp"/attnviz-exports/lines_*.png "$tmp"/attnviz-exports/lines_*.svg >/dev/null || fail "no lines export"
grep -q "<line " "$tmp"/attnviz-exports/lines_*.svg || fail "the SVG has no vector lines"
[ -n "${ATTNVIZ_KEEP_SCREENSHOTS:-}" ] && cp "$tmp/ablated.png" "$tmp/lines.png" "$ATTNVIZ_KEEP_SCREENSHOTS/"
echo "PASS"
