#!/usr/bin/env bash
# Everything a learner sees of the single layer's stages, written to one directory, so that two
# builds (before and after a refactoring) can be compared with `diff -r`:
#   texts/     per scenario: every stage's title, formula, explanation, shape, kind, FLOPs, a hash of
#              its matrix and of its drawn matrix, five cells and explain_cell's text for them
#              (tests/io/stage_golden_test.cpp with ATTNVIZ_STAGE_GOLDEN_DIR)
#   dump_*/    `attnviz dump` (.npy files and manifest.json) of every shipped scene and of configs
#              that switch on every optional stage
# Usage: scripts/stage_golden.sh BUILD_DIR OUT_DIR, then: diff -r OUT_BEFORE OUT_AFTER
set -euo pipefail
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
ATTNVIZ_STAGE_GOLDEN_DIR="$out/texts" "$build/tests/attnviz_io_tests" \
    --gtest_filter='StageGolden.*' > "$out/golden_test.log"
dump() {  # name, then dump arguments
    local name=$1
    shift
    "$build/app/attnviz" dump "$@" --threads 1 --out "$out/dump_$name" > /dev/null
}
for scene in "$src"/assets/scenes/*.json; do
    dump "scene_$(basename "$scene" .json)" --scene "$scene"
done
t="text=the cat sat on the mat and the dog sat too"
dump mask_padding --set "$t" --set mask=padding --set valid_length=7
dump mask_window --set "$t" --set mask=window --set window=2
dump additive --set "$t" --set scoring=additive --set mask=causal
dump bilinear_rope --set "$t" --set scoring=bilinear --set positional=rope
dump boxcar_alibi --set "$t" --set scoring=boxcar --set positional=alibi
dump alibi_8heads --set "$t" --set positional=alibi --set mask=causal --set heads=8
dump pre_ln_learned --set "$t" --set layernorm=pre --set positional=learned
dump post_ln --set "$t" --set layernorm=post --set residual=false
dump cross_pre_ln --set "$t" --set "source_text=le chat est assis" --set layernorm=pre
dump linear_causal --set "$t" --set attention=linear --set mask=causal --set phi=relu
dump linear_padding --set "$t" --set attention=linear --set mask=padding --set valid_length=5
dump linear_window --set "$t" --set attention=linear --set mask=window
dump preset_first --set "$t" --set preset=first_token --set heads=2 --set d_model=16
echo "written to $out"
