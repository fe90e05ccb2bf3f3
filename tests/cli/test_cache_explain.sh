# Black-box tests of entries that explain themselves (issue 34): each entry records its
# kernel, variant and key inputs (NOTE [ entry description ] in src/cache/entry_format.hpp);
# `kernc cache ls`/`inspect` show them and filter by kernel; `kernc cache explain` says which
# entry serves a spec kernel, or which inputs the nearest one differs in; an entry written
# by an older kernc (tests/cli/data/old_entry, a real one) stays readable.
# Usage: bash test_cache_explain.sh PATH_TO_KERNC PROJECT_SOURCE_DIR

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

OLD_ENTRY_DIR=$SOURCE_DIR/tests/cli/data/old_entry
OLD_KEY=6b34658fbe7be93b605a377496a2b12a63a51954cdbf10ead8582ed8834549f1-66e8161fedc8c746

# write_scale_spec FILE [OPTIONS_JSON]: one raw kernel (one variant a target), with options.
write_scale_spec() {
  cat >"$1" <<EOF
{"kernels": [{"kind": "raw", "name": "scale", "options": ${2:-{\}},
  "code": "extern \"C\" __global__ void scale(float* x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }"}]}
EOF
}

# put_old_entry: the entry an older kernc wrote, copied into the cache as that kernc left it.
put_old_entry() {
  mkdir -p "$KERNC_CACHE_DIR/entries/${OLD_KEY:0:2}"
  cp "$OLD_ENTRY_DIR/$OLD_KEY" "$KERNC_CACHE_DIR/entries/${OLD_KEY:0:2}/$OLD_KEY"
  chmod 0600 "$KERNC_CACHE_DIR/entries/${OLD_KEY:0:2}/$OLD_KEY"
}

# ---------------------------------------------------------------------------------------------
TEST "cache ls and inspect name each entry's kernel and variant, and filter by kernel"
write_scale_spec spec.json
expect_exit 0 kernc precompile spec.json -t sm_80 -q
expect_exit 0 kernc cache ls
expect_match "$OUT" '^KEY +KERNEL +VARIANT +TARGET +COMPILER'
expect_match "$OUT" '^[0-9a-f]{12} +scale +- +sm_80 +nvrtc'
expect_exit 0 kernc cache ls --kernel scale --format json
expect_json "$OUT" 'len(d)' 1
expect_json "$OUT" 'd[0]["kernel"]' scale
expect_exit 0 kernc cache ls --kernel nothing
expect_contains "$OUT" "0 entries"
expect_exit 0 kernc cache inspect --kernel scale
expect_match "$OUT" '^kernel +scale$'
expect_contains "$OUT" "inputs of the key"
expect_match "$OUT" '^ +target +sm_80$'
expect_match "$OUT" '^ +header kernc/cuda_bridge.cuh|^ +source +[0-9]+ bytes, sha256 [0-9a-f]{64}$'
expect_match "$OUT" '^ +compiler +nvrtc '
expect_exit 0 kernc cache inspect --kernel scale --format json
expect_json "$OUT" 'len(d)' 1
expect_json "$OUT" 'd[0]["kernel"]["name"]' scale
expect_json "$OUT" '[i[1] for i in d[0]["inputs"] if i[0] == "std"][0]' c++17
key=$(json_eval "$OUT" 'd[0]["key"]')
expect_exit 6 kernc cache inspect "${key:0:12}" --kernel saxpy
expect_contains "$ERR" "entry ${key:0:12} is of kernel scale, not of kernel saxpy"
expect_exit 6 kernc cache inspect --kernel saxpy
expect_contains "$ERR" "no entry in $KERNC_CACHE_DIR records kernel saxpy"

TEST "generated kernels record their signature and layout class"
write_small_spec small.json
expect_exit 0 kernc precompile small.json -t sm_80 -q
expect_exit 0 kernc cache ls --kernel saxpy --format json
expect_json "$OUT" 'len(d)' "$SMALL_SPEC_VARIANTS"
expect_json "$OUT" 'sorted(r["variant"] for r in d)[0]' "scalar float32, float32, float32 -> float32 contiguous-i32"

TEST "cache explain names the entry that serves each variant"
write_scale_spec spec.json
expect_exit 0 kernc precompile spec.json -t sm_80 -q
expect_exit 0 kernc cache explain spec.json --kernel scale -t sm_80
expect_match "$OUT" '^sm_80 +raw: served by [0-9a-f]{12} \(sm_80, nvrtc [0-9.]+, from '
# A device of a later minor architecture is served down the ladder by the sm_80 binary.
expect_exit 0 kernc cache explain spec.json --kernel scale -t sm_86 --format json
expect_json "$OUT" 'd["variants"][0]["served_by"]["target"]' sm_80

TEST "cache explain says which input of the nearest entry differs: an option, the target"
write_scale_spec spec.json
expect_exit 0 kernc precompile spec.json -t sm_90 -q
write_scale_spec spec.json '{"defines": {"N": "4"}, "fast_math": true}'
expect_exit 8 kernc cache explain spec.json --kernel scale -t sm_90
expect_contains "$OUT" "sm_90    raw: no entry serves it; the nearest, "
expect_contains "$OUT" "(scale, for sm_90), differs in 2 input(s):"
expect_match "$OUT" '^ +define N +entry: \(none\)$'
expect_match "$OUT" '^ +wanted: 4$'
expect_match "$OUT" '^ +fast_math +entry: off$'
expect_exit 8 kernc cache explain spec.json --kernel scale -t sm_90 --format json
expect_json "$OUT" '",".join(x["field"] for x in d["variants"][0]["nearest"]["differences"])' "define N,fast_math"
write_scale_spec spec.json
expect_exit 8 kernc cache explain spec.json --kernel scale -t sm_80
expect_match "$OUT" '^ +target +entry: sm_90$'
expect_match "$OUT" '^ +wanted: sm_80$'
expect_exit 6 kernc cache explain spec.json --kernel nothing -t sm_80
expect_contains "$ERR" "the spec has no kernel named nothing; it has: scale"

TEST "an entry written by an older kernc stays readable, shown without a kernel"
put_old_entry
expect_exit 0 kernc cache ls
expect_match "$OUT" "^${OLD_KEY:0:12} +\? +\? +sm_80 +nvrtc"
expect_exit 0 kernc cache inspect "${OLD_KEY:0:12}"
expect_contains "$OUT" "kernel     ? (written by a kernc that did not record it)"
expect_not_contains "$OUT" "inputs of the key"
expect_exit 0 kernc cache verify
expect_contains "$OUT" "1 checked, 0 bad"
write_scale_spec spec.json
expect_exit 8 kernc cache explain spec.json --kernel scale -t sm_80
expect_contains "$OUT" "sm_80    raw: no entry serves it, and no entry records its inputs to compare"
expect_contains "$OUT" "note: 1 entry, written by an older kernc, records no inputs and was not compared"

finish
