#!/usr/bin/env bash
# tools/check-layers passes on the repository, and on copies of it:
#   - fails, naming the include, both layers and the allowed set, on includes across the
#     tree that the old ordered list let pass (runtime into dsl and codegen, dsl into
#     cache), on one from a public header into internals and one from the CLI into src/;
#   - passes includes the tree allows only through "uses" being transitive (cache into
#     platform through compiler, runtime into core and platform through host);
#   - fails on a table with a cycle, a use that names no layer, or a listed use that no
#     include needs.
set -euo pipefail
repo=$1
"$repo/tools/check-layers" "$repo"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A copy of what check-layers reads, in "$tmp/$1".
copy() {
  local work="$tmp/$1"
  mkdir -p "$work/docs" "$work/tools/kernc"
  cp -r "$repo/src" "$repo/include" "$work/"
  cp "$repo"/tools/kernc/*.?pp "$work/tools/kernc/"
  cp "$repo/docs/ARCHITECTURE.md" "$work/docs/"
  cp "$repo/tools/check-layers" "$work/tools/"
  echo "$work"
}

# Fails unless check-layers fails on $1 and its output has every further argument.
expect_failure() {
  local work=$1 out
  shift
  if out=$("$work/tools/check-layers" "$work" 2>&1); then
    echo "FAIL: check-layers passed $work:"; echo "$out"; exit 1
  fi
  for want in "$@"; do
    grep -qF -- "$want" <<<"$out" || { echo "FAIL: check-layers output lacks \"$want\":"; echo "$out"; exit 1; }
  done
}

# Across the tree: each of these points "down" the old list (base, platform, core, util,
# compiler, cache, dsl, codegen, runtime, kernels), and each is refused now.
work=$(copy across)
echo '#include "dsl/params.hpp"' >> "$work/src/runtime/device.cpp"
echo '#include "codegen/render.hpp"' >> "$work/src/runtime/array.cpp"
echo '#include "cache/local_store.hpp"' >> "$work/src/dsl/params.cpp"
echo '#include "cache/local_store.hpp"' >> "$work/include/kernc/kernels.hpp"
echo '#include "dsl/params.hpp"' >> "$work/tools/kernc/main.cpp"
expect_failure "$work" \
  'src/runtime/device.cpp:' 'layer runtime may not use layer dsl (src/dsl/params.hpp); runtime may use base, core, host, platform' \
  'src/runtime/array.cpp:' 'layer runtime may not use layer codegen (src/codegen/render.hpp); runtime may use base, core, host, platform' \
  'src/dsl/params.cpp:' 'layer dsl may not use layer cache (src/cache/local_store.hpp); dsl may use base, core' \
  'include/kernc/kernels.hpp:' 'a public header includes an internal one' \
  'tools/kernc/main.cpp:' 'the CLI uses the public API only' '5 problem(s)'

# Allowed only through the closure of "uses": cache uses compiler (which uses platform),
# runtime uses host (which uses core and platform), codegen uses dsl (which uses core).
work=$(copy closure)
echo '#include "platform/sha256.hpp"' >> "$work/src/cache/cache_key.cpp"
echo '#include "platform/dynamic_library.hpp"' >> "$work/src/runtime/array.cpp"
echo '#include "kernc/program.hpp"' >> "$work/src/codegen/snippets.cpp"
"$work/tools/check-layers" "$work" 2>/dev/null || { echo "FAIL: check-layers refused includes that the tree allows"; exit 1; }

# The table itself. Its rows are "| NAME | USES | PATHS |".
set_uses() {  # set_uses WORK LAYER USES
  sed -i -E "s/^\| $2 \|[^|]*\|/| $2 | $3 |/" "$1/docs/ARCHITECTURE.md"
  grep -qF "| $2 | $3 |" "$1/docs/ARCHITECTURE.md" || { echo "FAIL: no row for layer $2 in the table"; exit 1; }
}
work=$(copy cycle)
set_uses "$work" core "base kernels"
expect_failure "$work" 'the layers have a cycle: core uses kernels uses cache uses compiler uses core'
work=$(copy unknown)
set_uses "$work" dsl "core utils"
expect_failure "$work" 'layer dsl uses utils, which is no layer in the table'
work=$(copy unused)
set_uses "$work" dsl "core platform"
expect_failure "$work" 'layer dsl lists platform, but no file of dsl includes one of platform'

echo "ok: check-layers enforces the layer tree (across it, public headers, the CLI) and checks its table"
