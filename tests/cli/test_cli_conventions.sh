# Black-box tests of what every kernc command promises scripts and CI jobs: --format json
# where a command reports, one version everywhere, flags that do not apply are errors,
# a missing file is exit 4 whichever command reads it.
# Usage: bash test_cli_conventions.sh PATH_TO_KERNC PROJECT_SOURCE_DIR

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

SPEC=$(realpath -- "$SOURCE_DIR/examples/kernels.json")
VERSION=$(sed -n 's/^project(kernc VERSION \([0-9.]*\).*/\1/p' "$SOURCE_DIR/CMakeLists.txt")

# ---------------------------------------------------------------------------------------------
TEST "kernc --version and kernc info report the project's version"
expect_exit 0 kernc --version
expect_equal "$(cat "$OUT")" "$VERSION" "kernc --version"
expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["version"]' "$VERSION"

TEST "a missing file is exit 4 for every command that reads one"
expect_exit 4 kernc compile missing.cu -t sm_90
expect_contains "$ERR" "missing.cu"
expect_exit 4 kernc compile missing.json -t sm_90
expect_contains "$ERR" "missing.json"
expect_exit 4 kernc precompile missing.json -t sm_90
expect_contains "$ERR" "missing.json"
expect_exit 4 kernc cache check missing.json -t sm_90
expect_contains "$ERR" "missing.json"
KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1 expect_exit 4 kernc run missing.json --kernel saxpy
expect_contains "$ERR" "missing.json"

TEST "flags of a source-file compile are errors with a spec file, never ignored"
for flags in "-o out.cubin" "-D N=1" "-n f<int>" "--emit ptx" "-I ." "--fast-math" "--std c++20" "--explain-key"; do
  # shellcheck disable=SC2086  # the flags are words
  expect_exit 2 kernc compile "$SPEC" -t sm_90 $flags
  expect_contains "$ERR" "is a spec file: its kernels carry their own options, so"
  expect_entry_count 0
done
expect_exit 2 kernc precompile "$SPEC" -t sm_90 --list --format json
expect_contains "$ERR" "--list prints one line per variant; it has no --format json"
write_sample_kernel k.cu
expect_exit 2 kernc compile k.cu -t sm_90 -j 4
expect_contains "$ERR" "-j/--jobs applies to a spec file only"

TEST "compile --format json reports every target, failures included"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t sm_90,compute_90 -n 'scale<float>' --format json
expect_json "$OUT" '[t["target"] for t in d["targets"]]' '["sm_90", "compute_90"]'
expect_json "$OUT" '[t["outcome"] for t in d["targets"]]' '["compiled", "compiled"]'
expect_json "$OUT" 'd["targets"][0]["lowered_names"]["scale<float>"]' '_Z5scaleIfEvPT_S0_i'
expect_json "$OUT" 'bool(re.fullmatch("[0-9a-f]{64}-[0-9a-f]{16}", d["targets"][1]["key"]))' true
expect_json "$OUT" '[d["summary"]["compiled"], d["summary"]["cache_hits"], d["summary"]["failed"]]' '[2, 0, 0]'
expect_exit 0 kernc compile k.cu -t sm_90 -n 'scale<float>' --format json
expect_json "$OUT" 'd["targets"][0]["outcome"]' "disk hit"
printf 'extern "C" __global__ void k() { nope; }\n' >bad.cu
expect_exit 1 kernc compile bad.cu -t sm_90 --format json
expect_json "$OUT" '[d["targets"][0]["outcome"], d["targets"][0]["code"]]' '["failed", "compile_failed"]'
expect_json "$OUT" '"nope" in d["targets"][0]["log"]' true

TEST "compile SPEC.json --format json is precompile's summary"
expect_exit 0 kernc compile "$SPEC" -t sm_90 --format json -j 2
expect_json "$OUT" '[d["programs"], d["compiled"], d["failed"], d["not_stored"], d["jobs"]]' '[106, 106, 0, 0, 2]'

TEST "cache prune and clear report as JSON too"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t sm_90,sm_80
expect_exit 0 kernc cache prune --max-size 0 --format json
expect_json "$OUT" '[d["removed"], d["remaining_bytes"]]' '[2, 0]'
expect_exit 0 kernc compile k.cu -t sm_90
expect_exit 0 kernc cache clear --format json
expect_json "$OUT" 'd["removed"]' 1

TEST "log levels: info says what was compiled or loaded from where, debug adds the key material"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t sm_90
expect_not_contains "$ERR" "kernc: info:"
expect_exit 0 kernc --log-level info compile k.cu -t sm_80
expect_match "$ERR" '^kernc: info: k\.cu for sm_80: compiled by nvrtc [0-9.]+ in [0-9.]+ ms \([0-9]+ bytes\), key [0-9a-f]{64}-[0-9a-f]{16}$'
expect_not_contains "$ERR" "key material"
KERNC_LOG_LEVEL=info expect_exit 0 kernc compile k.cu -t sm_80
expect_contains "$ERR" "kernc: info: k.cu for sm_80: disk hit in $KERNC_CACHE_DIR"
expect_exit 0 kernc --log-level debug compile k.cu -t sm_80
expect_contains "$ERR" "kernc: debug: k.cu for sm_80: key "
expect_match "$ERR" '^compiler +nvrtc [0-9.]+ sm_'
expect_match "$ERR" '^source +[0-9]+ bytes, sha256 [0-9a-f]{64}$'

finish
