#!/usr/bin/env bash
# Black-box tests of `kernc precompile` and `kernc compile SPEC.json`.
# Usage: bash test_precompile.sh PATH_TO_KERNC PROJECT_SOURCE_DIR
# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

SPEC="$SOURCE_DIR/examples/kernels.json"
TYPO="$SOURCE_DIR/tests/cli/data/typo_kernels.json"

TEST "precompile builds every variant, then reports only hits"
# sm_90 only: HIPRTC compiles one at a time and the whole spec would take half a minute;
# the unit suite's round trip covers gfx90a.
expect_exit 0 kernc precompile "$SPEC" --target sm_90 -q
expect_match "$OUT" '^106 program\(s\) \(106 variant\(s\) of 7 kernel\(s\) x 1 target\(s\)\): 106 compiled, 0 cache hit\(s\), 0 failed'
expect_entry_count 106
expect_exit 0 kernc precompile "$SPEC" --target sm_90 -q
expect_match "$OUT" ': 0 compiled, 106 cache hit\(s\), 0 failed'
expect_exit 0 kernc compile "$SPEC" --target sm_90
expect_match "$OUT" ': 0 compiled, 106 cache hit\(s\), 0 failed'
keep_cache whole-spec

TEST "precompile --list prints the key of each variant, and those keys are the stored entries"
seed_cache whole-spec
expect_exit 0 kernc precompile "$SPEC" --target sm_90 -q
expect_match "$OUT" ': 0 compiled, 106 cache hit\(s\), 0 failed'
expect_exit 0 kernc precompile "$SPEC" --target sm_90 --list
[ "$(wc -l < "$OUT")" = 106 ] || test_failed "expected 106 variants listed"
while read -r key target kernel _; do
  [ -f "$KERNC_CACHE_DIR/entries/${key:0:2}/$key" ] || test_failed "no entry for $kernel $target ($key)"
done < "$OUT"
CHECKS=$((CHECKS + 1))
expect_contains "$OUT" "saxpy"
expect_contains "$OUT" "scalar float32, float32, float32 -> float32 strided3-i64"

TEST "a typo in an operation names the kernel, the snippet and its line, and exits 1"
expect_exit 1 kernc precompile "$TYPO" --target sm_90 -q
expect_contains "$ERR" 'kernel scaled_add'
expect_contains "$ERR" 'scaled_add operation, line 2: error: identifier "yy" is undefined'
expect_contains "$ERR" 'repeated an error shown above'
expect_exit 1 kernc precompile "$TYPO" --target gfx90a -q
expect_contains "$ERR" 'scaled_add operation, line 2, column 9: error'

TEST "a 30 KB identifier or a 100 KB post_map_expr is a compile error, not a crash (issue 15)"
long=$(head -c 30720 /dev/zero | tr '\0' q)
longer=$(head -c 102400 /dev/zero | tr '\0' p)
printf '{"kernels": [{"kind": "elementwise", "name": "k", "in_params": "float32 x", "out_params": "float32 y", "operation": "y = x + %s", "signatures": ["float32 -> float32"]}, {"kind": "reduction", "name": "r", "in_params": "float32 x", "out_params": "float32 y", "map_expr": "x", "reduce_expr": "a + b", "post_map_expr": "y = %s", "identity": "0", "signatures": ["float32 -> float32"]}]}' "$long" "$longer" > long.json
# -j 2: workers are threads with their own (smaller) stacks.
expect_exit 1 kernc precompile long.json --target sm_90 -q -j 2
expect_contains "$ERR" "k operation, line 1: error: identifier \"$long\" is undefined"
expect_contains "$ERR" "r post_map_expr, line 1: error: identifier \"$longer\" is undefined"
expect_exit 1 kernc compile long.json --target sm_90
expect_contains "$ERR" "k operation, line 1: error"

TEST "a malformed spec is refused before compiling anything"
printf '{"kernels": [{"kind": "elementwise", "name": "k", "in_params": "float32 x", "out_params": "float32 y", "operaton": "y = x", "signatures": ["float32 -> float32"]}]}' > bad.json
expect_exit 2 kernc precompile bad.json --target sm_90
expect_contains "$ERR" 'kernel k: unknown field "operaton"'
printf '{"kernels": [{"kind": "elementwise", "name": "k", "in_params": "float32 x float32 z", "out_params": "float32 y", "operation": "y = x", "signatures": ["float32 -> float32"]}]}' > bad.json
expect_exit 2 kernc precompile bad.json --target sm_90
expect_contains "$ERR" 'is a comma missing before "float32"?'
printf '{"kernels": [{"kind": "elementwise", "name": "k", "in_params": "T x", "out_params": "T y", "operation": "y = x", "signatures": ["float32 -> float64"]}]}' > bad.json
expect_exit 2 kernc precompile bad.json --target sm_90
expect_contains "$ERR" 'type placeholder T is float64'
expect_entry_count 0

TEST "a precompile in 4 shards, merged with cache merge, equals the unsharded one"
expect_exit 0 kernc precompile "$SPEC" --target sm_90 --list
cut -d' ' -f1 "$OUT" | sort > whole-keys
for k in 1 2 3 4; do
  expect_exit 0 kernc --cache-dir "$PWD/shard-$k" precompile "$SPEC" --target sm_90 -q --shard "$k/4" --format json
  expect_json "$OUT" 'd["shard"]' "$k/4"
  expect_json "$OUT" 'd["all_programs"]' 106
  expect_json "$OUT" 'd["programs"] in (26, 27)' true
  expect_json "$OUT" 'd["compiled"] == d["programs"]' true
done
expect_exit 0 kernc cache merge shard-1 shard-2 shard-3 shard-4
expect_contains "$OUT" "106 copied, 0 already present, 0 bad"
ls "$KERNC_CACHE_DIR"/entries/*/ | grep -v ':$' | grep . | sort > merged-keys
cmp -s whole-keys merged-keys || test_failed "merged keys differ from the unsharded precompile's"
CHECKS=$((CHECKS + 1))
expect_exit 0 kernc precompile "$SPEC" --target sm_90 -q
expect_match "$OUT" ': 0 compiled, 106 cache hit\(s\), 0 failed'
expect_exit 0 kernc cache merge shard-2 --format json
expect_json "$OUT" 'd["already_present"] in (26, 27) and d["copied"] == 0' true
# One damaged entry in an artifact: reported, not copied, exit 5; the rest still merged.
victim=$(find shard-3/entries -type f | head -1)
flip_byte "$victim" 200
rm -rf "$KERNC_CACHE_DIR"
expect_exit 5 kernc cache merge shard-3 shard-4
expect_contains "$ERR" "not merged: $victim"
expect_entry_count $(( $(find shard-3/entries shard-4/entries -type f | wc -l) - 1 ))
for bad in 0/4 5/4 2 a/b 1/0; do
  expect_exit 2 kernc precompile "$SPEC" --target sm_90 --shard "$bad"
  expect_contains "$ERR" "--shard must be K/N"
done
expect_exit 4 kernc cache merge no-such-dir
expect_contains "$ERR" "no-such-dir"

TEST "--save-source keeps the generated source next to each entry"
# The 16 layout classes of saxpy: the spec's every kind was compiled above.
write_small_spec small.json
expect_exit 0 kernc --save-source precompile small.json --target sm_90 -q
n=$(find "$KERNC_CACHE_DIR/entries" -name '*.cu' | wc -l)
[ "$n" = "$SMALL_SPEC_VARIANTS" ] || test_failed "expected $SMALL_SPEC_VARIANTS saved sources, found $n"
grep -l 'ElementwiseKernel saxpy' "$KERNC_CACHE_DIR"/entries/*/*.cu > /dev/null || test_failed "no saved saxpy source"
expect_exit 0 kernc cache clear
n=$(find "$KERNC_CACHE_DIR/entries" -name '*.cu' | wc -l)
[ "$n" = 0 ] || test_failed "cache clear left $n saved sources"

finish
