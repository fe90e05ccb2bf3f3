#!/usr/bin/env bash
# tools/check-layers passes on the repository, and fails, naming the include, on a copy
# of it with one include that points up (the DSL reaching into the runtime), one across
# into internals from a public header, and one from the CLI into src/.
set -euo pipefail
repo=$1
"$repo/tools/check-layers" "$repo"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/docs" "$work/tools"
cp -r "$repo/src" "$repo/include" "$work/"
mkdir -p "$work/tools/kernc" && cp "$repo"/tools/kernc/*.?pp "$work/tools/kernc/"
cp "$repo/docs/ARCHITECTURE.md" "$work/docs/"
cp "$repo/tools/check-layers" "$work/tools/"
echo '#include "runtime/driver.hpp"' >> "$work/src/dsl/params.cpp"
echo '#include "cache/local_store.hpp"' >> "$work/include/kernc/kernels.hpp"
echo '#include "dsl/params.hpp"' >> "$work/tools/kernc/main.cpp"
if out=$("$work/tools/check-layers" "$work" 2>&1); then
  echo "FAIL: check-layers passed a tree with upward includes"; exit 1
fi
for want in 'src/dsl/params.cpp:' 'points up, from layer dsl to layer runtime' \
            'include/kernc/kernels.hpp:' 'a public header includes an internal one' \
            'tools/kernc/main.cpp:' 'the CLI uses the public API only' '3 include(s) against the layer order'; do
  grep -qF -- "$want" <<<"$out" || { echo "FAIL: check-layers output lacks \"$want\":"; echo "$out"; exit 1; }
done
echo "ok: check-layers catches upward, internal and CLI includes"
