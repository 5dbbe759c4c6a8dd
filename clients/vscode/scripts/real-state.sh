#!/usr/bin/env bash
# Print a listing (path, size, mtime) of the user's real elelem folders: stored sessions,
# config, user plugins. test.sh and e2e.sh take one before and one after their run and
# fail when they differ, since no test may read or write the user's own state.
# Usage: scripts/real-state.sh            print the listing
#        scripts/real-state.sh FILE       compare with FILE (an earlier listing); exit 1 on a change
set -euo pipefail
listing() {
  local dirs=("$HOME/.local/state/elelem" "$HOME/.config/elelem" "$HOME/.local/share/elelem" "$HOME/.agents")
  [ -n "${XDG_STATE_HOME:-}" ] && dirs+=("$XDG_STATE_HOME/elelem")
  [ -n "${XDG_CONFIG_HOME:-}" ] && dirs+=("$XDG_CONFIG_HOME/elelem")
  [ -n "${ELELEM_STATE_DIR:-}" ] && dirs+=("$ELELEM_STATE_DIR")
  for dir in "${dirs[@]}"; do
    if [ -e "$dir" ]; then find "$dir" -printf '%p %s %T@\n' 2>/dev/null; else echo "$dir absent"; fi
  done | sort -u
}
if [ $# -eq 0 ]; then
  listing
  exit 0
fi
if ! listing | diff -u "$1" - >&2; then
  echo "real-state.sh: FAILED: the user's real elelem folders changed during the run (above)." >&2
  echo "real-state.sh: a test wrote outside its own HOME/XDG_* folders (or another process wrote there meanwhile)." >&2
  exit 1
fi
