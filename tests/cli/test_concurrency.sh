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

# ---------------------------------------------------------------------------------------------
TEST "precompile -j 2 compiles in 2 worker processes, into the entries threads would make"
write_small_spec small.json
expect_exit 0 kernc --log-level info precompile small.json --target sm_90 -j 2 -q
expect_match "$OUT" ": $SMALL_SPEC_VARIANTS compiled, 0 cache hit\(s\), 0 failed"
expect_count "$ERR" "started compile worker process" 2
expect_entry_count "$SMALL_SPEC_VARIANTS"
expect_exit 0 kernc cache verify
expect_contains "$OUT" "$SMALL_SPEC_VARIANTS checked, 0 bad"
entry_files | xargs -n1 basename > process-keys
KERNC_CACHE_DIR=$PWD/threads expect_exit 0 kernc --log-level info precompile small.json --target sm_90 -j 2 -q \
  --compile-in threads
expect_not_contains "$ERR" "compile worker"
KERNC_CACHE_DIR=$PWD/threads entry_files | xargs -n1 basename > thread-keys
CHECKS=$((CHECKS + 1))
cmp -s process-keys thread-keys || test_failed "worker processes and threads made different entries"
# A compile error comes back from the worker as it would from this process.
expect_exit 1 kernc precompile "$SOURCE_DIR/tests/cli/data/typo_kernels.json" --target sm_90 -q -j 2
expect_contains "$ERR" 'scaled_add operation, line 2: error: identifier "yy" is undefined'

# ---------------------------------------------------------------------------------------------
TEST "precompile -j 2 runs the worker program KERNC_COMPILE_WORKER names, and refuses one that is not"
write_small_spec small.json
# A worker program of its own: it notes each start, then is kernc's worker.
cat >worker.sh <<EOF_WORKER
#!/usr/bin/env bash
echo "started \$*" >>"$PWD/worker-starts"
exec "$KERNC" "\$@"
EOF_WORKER
chmod +x worker.sh
KERNC_CACHE_DIR=$PWD/own-worker KERNC_COMPILE_WORKER=$PWD/worker.sh \
  expect_exit 0 kernc precompile small.json --target sm_90 -j 2 -q
expect_match "$OUT" ": $SMALL_SPEC_VARIANTS compiled, 0 cache hit\(s\), 0 failed"
expect_count worker-starts "started __compile-worker" 2
KERNC_CACHE_DIR=$PWD/own-worker entry_files | xargs -n1 basename | sort > own-worker-keys
KERNC_CACHE_DIR=$PWD/threads expect_exit 0 kernc precompile small.json --target sm_90 -j 2 -q --compile-in threads
KERNC_CACHE_DIR=$PWD/threads entry_files | xargs -n1 basename | sort > thread-keys
CHECKS=$((CHECKS + 1))
cmp -s own-worker-keys thread-keys || test_failed "the named worker made other entries than threads do"
KERNC_COMPILE_WORKER=$PWD/small.json expect_exit 3 kernc precompile small.json --target sm_90 -j 2 -q
expect_contains "$ERR" "KERNC_COMPILE_WORKER names $PWD/small.json as the compile worker program, which is not an executable file"
expect_contains "$ERR" "--compile-in threads"

# ---------------------------------------------------------------------------------------------
TEST "two precompile processes into one cache both succeed, and every entry is valid"
write_small_spec small.json
pids=()
for i in 1 2; do
  "$KERNC" precompile small.json --target sm_90,compute_90 -j 2 -q --format json >"run.$i.out" 2>"run.$i.err" &
  pids+=($!)
done
for i in 1 2; do
  status=0
  wait "${pids[i - 1]}" || status=$?
  CHECKS=$((CHECKS + 1))
  [[ $status -eq 0 ]] || test_failed "precompile $i exited $status: $(cat "run.$i.err")"
  expect_json "run.$i.out" 'd["compiled"] + d["cache_hits"]' $((2 * SMALL_SPEC_VARIANTS))
  expect_json "run.$i.out" 'd["failed"] + d["not_stored"]' 0
done
expect_entry_count $((2 * SMALL_SPEC_VARIANTS))
expect_no_temp_files
expect_exit 0 kernc cache verify
expect_contains "$OUT" "$((2 * SMALL_SPEC_VARIANTS)) checked, 0 bad"

# ---------------------------------------------------------------------------------------------
TEST "a compile worker killed mid-run fails the program it had, named, and the others still build"
write_small_spec small.json
"$KERNC" --log-level info precompile small.json --target sm_90 -j 2 -q --format json >run.out 2>run.err &
kernc_pid=$!
worker=""
tries=0
while [[ -z $worker && $tries -lt 600 ]]; do
  worker=$(sed -n 's/.*started compile worker process \([0-9]*\) .*/\1/p' run.err 2>/dev/null | head -1)
  [[ -n $worker ]] || sleep 0.05
  tries=$((tries + 1))
done
CHECKS=$((CHECKS + 1))
[[ -n $worker ]] || test_failed "no compile worker started in 30 s: $(cat run.err)"
kill -9 "$worker"
status=0
wait "$kernc_pid" || status=$?
CHECKS=$((CHECKS + 1))
[[ $status -ne 0 ]] || test_failed "the precompile exited 0 though its worker was killed"
ERR=$TEST_DIR/run.err
expect_contains "$ERR" "the compile worker process (pid $worker, /proc/self/exe) was killed by signal 9"
expect_json run.out '[d["failed"], d["compiled"], d["failures"][0]["code"]]' \
  "[1, $((SMALL_SPEC_VARIANTS - 1)), \"compiler_api\"]"
expect_json run.out '[d["failures"][0]["kernel"], d["failures"][0]["target"]]' '["saxpy", "sm_90"]'
expect_json run.out '"while compiling " in d["failures"][0]["error"]' true

finish
