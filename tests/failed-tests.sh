#!/usr/bin/env bash
# Reads a `cargo test` log and prints a line per test binary that had failures: the binary's
# source path, then the names of its failed tests (the list libtest prints after "failures:").
set -euo pipefail
awk '
/^     Running / { bin = $2; next }
/^failures:$/ { inlist = 1; names = ""; next }
/^test result:/ { if (inlist && names != "") print bin names; inlist = 0; next }
inlist && /^    [A-Za-z0-9_:]+$/ { names = names " " $1 }
' "$1"
