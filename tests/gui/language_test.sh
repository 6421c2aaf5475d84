#!/usr/bin/env bash
# View ▸ Language: the Explanation panel speaks English or Chinese. A fresh start follows the locale
# (C → English, zh_CN → 中文); choosing 中文 in the menu switches the stage texts (the state log's
# "language" and "explanation_title"), and the choice is remembered in settings.json at the next start.
#   usage: bash tests/gui/language_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"

# English locale: English; View ▸ Language ▸ 中文 switches the weights stage's title to Chinese.
run_script menu --fresh --stage weights <<'SCRIPT'
wait weights_checksum != "" && updating == false
expect language == en && stage == weights && explanation_title ^= Weights
click widget menu_View 0.5 0.5
frames 2
move widget menu_Language 0.5 0.5
frames 3
wait widgets.menu_Language_zh != null
click widget menu_Language_zh 0.5 0.5
wait language == zh
expect explanation_title ^= 注意力权重
frames 3
quit
SCRIPT
grep -q '"language": "zh"' "$XDG_CONFIG_HOME/attnviz/settings.json" ||
  fail "settings.json does not remember the language: $(cat "$XDG_CONFIG_HOME"/attnviz/settings.json)"

# The next start is in Chinese (settings win over the locale); the menu switches back to English.
run_script again --fresh --stage one_hot <<'SCRIPT'
wait weights_checksum != "" && updating == false
expect language == zh && stage == one_hot && explanation_title == 词元的独热编码
click widget menu_View 0.5 0.5
frames 2
move widget menu_Language 0.5 0.5
frames 3
wait widgets.menu_Language_en != null
click widget menu_Language_en 0.5 0.5
wait language == en
expect explanation_title == "One-hot tokens"
quit
SCRIPT

# A fresh configuration under a Chinese locale starts in Chinese.
rm -rf "$XDG_CONFIG_HOME"
LANG=zh_CN.UTF-8 run_script locale --fresh --stage weights <<'SCRIPT'
wait weights_checksum != "" && updating == false
expect language == zh && explanation_title ^= 注意力权重
quit
SCRIPT
echo "PASS"
