#!/usr/bin/env bash
# tools/check-doc-paths passes on the repository, and fails, naming file and line, on a copy
# of it with a missing path cited in a doc page, a brace-expanded and a globbed missing path
# in source comments, a broken Markdown link, a NOTE cited but never written and one cited in
# a file that does not hold it, and a design document and a folder outside the repository.
# Beside them sit forms that are not repository paths (a URL, /usr/..., $OUT/..., build/...,
# another project's header, a path in a string literal) and must not be reported.
set -euo pipefail
repo=$1
"$repo/tools/check-doc-paths" "$repo"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for entry in "$repo"/* "$repo"/.ci; do
  case $(basename "$entry") in build|build-*|build_*) continue ;; esac
  cp -r "$entry" "$work/"
done
cat >> "$work/docs/api.md" <<'EOF'

See src/kernels/no_such_file.cpp, and [the CLI](cli.md) but not [this](no_such_page.md).
Not paths: https://example.com/src/x.cpp, /usr/include/cuda.h, $OUT/bench.json,
`build/tests/kernc_unit_tests`, hip/hiprtc.h, src/kernels/engine.cpp:81, src/platform/{nvrtc,hiprtc}_api.*.
EOF
cat >> "$work/src/dsl/params.cpp" <<'EOF'
// See src/dsl/{params,no_such}.cpp and src/platform/{nvrtc,no_such}_api.*; the NOTE [ no
// such note ] says why (NOTE [ cache key ], src/dsl/loop_plan.hpp).
static const char* kNotACitation = "src/not/a/comment.cpp";
EOF
# Spelled in pieces, so that this file cites no outside document itself.
design=DESIGN shared=shared
echo "The rules are in $design.md, and more in ../$shared/." >> "$work/README.md"
if out=$("$work/tools/check-doc-paths" "$work" 2>&1); then
  echo "FAIL: check-doc-paths passed a tree with stale citations"; exit 1
fi
api=$(wc -l < "$repo/docs/api.md")
params=$(wc -l < "$repo/src/dsl/params.cpp")
readme=$(wc -l < "$repo/README.md")
for want in "docs/api.md:$((api + 2)): src/kernels/no_such_file.cpp: no such file" \
            "docs/api.md:$((api + 2)): no_such_page.md: no such file" \
            "src/dsl/params.cpp:$((params + 1)): src/dsl/{params,no_such}.cpp: no such file" \
            "src/dsl/params.cpp:$((params + 1)): src/platform/{nvrtc,no_such}_api.*: no such file" \
            "src/dsl/params.cpp:$((params + 1)): NOTE [ no such note ]: cited but written nowhere" \
            "src/dsl/params.cpp:$((params + 2)): NOTE [ cache key ] cited in src/dsl/loop_plan.hpp, which does not hold it" \
            "README.md:$((readme + 1)): $design.md: a design document outside the repository" \
            "README.md:$((readme + 1)): ../$shared: a folder outside the repository" \
            '8 problem(s)'; do
  grep -qF -- "$want" <<<"$out" || { echo "FAIL: check-doc-paths output lacks \"$want\":"; echo "$out"; exit 1; }
done
echo "ok: check-doc-paths catches missing, brace-expanded and globbed paths, links, NOTEs and outside documents"
