#!/usr/bin/env bash
# Run after the attnviz binary is linked (scripts/cmake/AttnvizInstall.cmake): generates, from the
# binary's own --help texts, so they can never drift from the flags,
#   - the man page: assets/desktop/attnviz.1 (written by hand) + a section with every command's
#     --help verbatim, gzipped (-n: reproducible);
#   - bash completion: assets/desktop/attnviz.bash-completion.in with each command's flags filled in.
#
#   gen_docs.sh BIN MAN_IN MAN_GZ_OUT COMPLETION_IN COMPLETION_OUT
set -euo pipefail
bin="$1"; man_in="$2"; man_out="$3"; comp_in="$4"; comp_out="$5"
cd "$(dirname "$man_out")"

# The commands this binary has (a branch may add more: grad), and the flags of each --help, with the
# --model variants of dump and render (their own flag sets).
commands=()
for c in dump render tokenize generate train grad ablate patch attribute; do
  if "$bin" "$c" --help >/dev/null 2>&1; then commands+=("$c"); fi
done
flags() { "$bin" "$@" --help | grep -oE '^ +--[a-z][a-z0-9-]*' | tr -d ' '; }
flags_of() {  # flags_of COMMAND -> its flags, one line, sorted
  { if [ -n "$1" ]; then flags "$1"; else flags; fi
    case "$1" in dump|render) flags "$1" --model . ;; esac
    echo --help; } | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# Man page: the hand-written page, then each --help as a literal block.
troff_literal() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\([.']\)/\\\\\&\1/"; }
{
  cat "$man_in"
  echo '.SH COMMAND OPTIONS'
  echo 'The --help text of each command, as the binary prints it.'
  for c in "" "${commands[@]}"; do
    echo ".SS \"attnviz${c:+ $c}\""
    echo '.nf'
    if [ -n "$c" ]; then "$bin" "$c" --help; else "$bin" --help; fi | troff_literal
    case "$c" in
      dump|render) echo; "$bin" "$c" --model . --help | troff_literal ;;
    esac
    echo '.fi'
  done
} >"$man_out.tmp"
gzip -9 -n -c "$man_out.tmp" >"$man_out"
rm -f "$man_out.tmp"

# Bash completion: one case line per command.
cases=""
for c in "${commands[@]}"; do cases+="        $c) flags=\"$(flags_of "$c")\" ;;"$'\n'; done
gui="$(flags_of "")"
awk -v cases="$cases" -v gui="$gui" -v cmds="${commands[*]}" -v alts="$(IFS='|'; echo "${commands[*]}")" '
  /@CASES@/ { printf "%s", cases; next }
  { gsub(/@GUI_FLAGS@/, gui); gsub(/@COMMANDS@/, cmds); gsub(/@COMMAND_ALTERNATIVES@/, alts); print }
' "$comp_in" >"$comp_out"
