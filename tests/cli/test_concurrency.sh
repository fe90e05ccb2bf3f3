# Black-box tests of several kernc processes sharing one cache directory: writers race to
# store the same entry (see NOTE [ lock-free readers ] in src/cache/local_store.hpp).
# Usage: bash test_concurrency.sh PATH_TO_KERNC [PROJECT_SOURCE_DIR]

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

readonly JOBS=6

# run_concurrently TARGET SOURCE: starts $JOBS `kernc compile SOURCE -t TARGET -o job.N.bin`
# at once, waits for all, and expects each to exit 0 with "compiled" or "disk hit".
run_concurrently() {
  local target=$1 source=$2 i status
  local -a pids=()
  for ((i = 1; i <= JOBS; i++)); do
    kernc compile "$source" -t "$target" -o "job.$i.bin" >"job.$i.out" 2>"job.$i.err" &
    pids+=($!)
  done
  for ((i = 1; i <= JOBS; i++)); do
    status=0
    wait "${pids[i - 1]}" || status=$?
    LAST_COMMAND="kernc compile $source -t $target -o job.$i.bin (job $i of $JOBS)"
    OUT=$TEST_DIR/job.$i.out
    ERR=$TEST_DIR/job.$i.err
    CHECKS=$((CHECKS + 1))
    [[ $status -eq 0 ]] || test_failed "concurrent job $i exited $status"
    expect_match "$OUT" "^$target +(compiled|disk hit|memory hit) "
    expect_elf "job.$i.bin"
  done
  OUT=$TEST_DIR/stdout
  ERR=$TEST_DIR/stderr
}

expect_no_temp_files() {
  CHECKS=$((CHECKS + 1))
  local temps
  temps=$(find "$KERNC_CACHE_DIR/entries" -name '.tmp.*' 2>/dev/null)
  [[ -z $temps ]] || test_failed "temp files left under entries/: $temps"
}

# ---------------------------------------------------------------------------------------------
TEST "$JOBS processes compiling one new source store one entry"
# The cache directory is fresh, so this source is new to it.
cat >race.cu <<'EOF'
extern "C" __global__ void race(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 3 + 1;
}
EOF
run_concurrently sm_90 race.cu
expect_entry_count 1
expect_no_temp_files
expect_exit 0 kernc cache verify
expect_contains "$OUT" "1 checked, 0 bad"
# Every process's counters were added, none lost to a concurrent update of stats.json.
expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["compiles"] + d["disk_hits"]' "$JOBS"
expect_json "$OUT" 'd["compiles"] >= 1' true
expect_json "$OUT" 'd["corrupt_entries"] + d["store_failures"] + d["compile_failures"]' 0
# All of them wrote the same binary, and the cache serves it.
for ((i = 2; i <= JOBS; i++)); do
  CHECKS=$((CHECKS + 1))
  cmp -s job.1.bin "job.$i.bin" || test_failed "job $i wrote a different binary than job 1"
done
expect_exit 0 kernc compile race.cu -t sm_90
expect_match "$OUT" '^sm_90 +disk hit '

# ---------------------------------------------------------------------------------------------
TEST "$JOBS processes racing on an existing cache, with a reader and a verifier alongside"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t sm_90,gfx90a
expect_entry_count 2
cat >race2.cu <<'EOF'
extern "C" __global__ void race2(float* x) { x[threadIdx.x] += 2.0f; }
EOF
kernc cache ls --format json >ls.out 2>ls.err &
ls_pid=$!
kernc cache verify >verify.out 2>verify.err &
verify_pid=$!
run_concurrently gfx90a race2.cu
CHECKS=$((CHECKS + 1))
wait "$ls_pid" || test_failed "cache ls alongside the compiles failed: $(cat ls.err)"
expect_json ls.out 'len(d) in (2, 3) and all("problem" not in e for e in d)' true
CHECKS=$((CHECKS + 1))
wait "$verify_pid" || test_failed "cache verify alongside the compiles failed: $(cat verify.out verify.err)"
expect_entry_count 3
expect_no_temp_files
expect_exit 0 kernc cache verify
expect_contains "$OUT" "3 checked, 0 bad"
expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["compiles"] + d["disk_hits"]' $((2 + JOBS))

finish
