# Fault tests of the disk cache (ctest label "fault"), driving the real CLI: a full
# filesystem, a read-only filesystem, kill -9 in the middle of precompiles, and pruning
# while precompiling. Each asserts the cache's promises (cache/FORMAT.md): a full or
# read-only disk costs the cache, never the kernel; a writer never exposes a partial
# entry; concurrent pruners never fail a compile; the cap holds.
# The filesystem cases mount a small tmpfs and need root; without it they say so and skip.
# Usage: bash test_faults.sh PATH_TO_KERNC PROJECT_SOURCE_DIR

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# The cases need many entries written, not every kernel: saxpy's float32 variants (lib.sh).
# The pruning case's two precompiles of them last about as long as its pruner's 40 rounds:
# the whole spec's 212 compiles ran on long after the pruner had stopped, with no one pruning.
SMALL_SPEC=$SUITE_DIR/saxpy-float32.json
write_small_spec "$SMALL_SPEC"
MOUNTED=""
unmount() { [[ -n $MOUNTED ]] && umount "$MOUNTED" 2>/dev/null; MOUNTED=""; }
trap 'unmount; cleanup' EXIT

# small_filesystem DIR SIZE: mounts a tmpfs of SIZE at DIR; false when this machine cannot.
small_filesystem() {
  mkdir -p "$1"
  [[ $(id -u) -eq 0 ]] || return 1
  mount -t tmpfs -o "size=$2" tmpfs "$1" 2>/dev/null || return 1
  MOUNTED=$1
}

# expect_clean_cache: every entry decodes, nothing but entries and temp files of dead writers.
expect_clean_cache() {
  expect_exit 0 kernc cache verify --format json
  expect_json "$OUT" 'len(d["bad"])' 0
}

# ---------------------------------------------------------------------------------------------
TEST "a full filesystem costs the cache, never the kernel"
# 120 KiB: room for a few of the 16 entries, not all (each is 8 to 23 KiB since the rank
# loops are rolled; 300 KiB held them all).
if small_filesystem "$PWD/full" 120K; then
  export KERNC_CACHE_DIR=$PWD/full/cache
  expect_exit 4 kernc precompile "$SMALL_SPEC" --target sm_90 -q -j 2
  expect_contains "$OUT" "$SMALL_SPEC_VARIANTS compiled, 0 cache hit(s), 0 failed"
  expect_contains "$ERR" "are not in the cache directory $KERNC_CACHE_DIR, so the cache is incomplete"
  expect_count "$ERR" "cannot write to the disk cache" 1  # logged once
  write_sample_kernel k.cu
  # Fill what is left, then compile something new: it compiles and is reported, not lost.
  head -c 400K /dev/zero >"$PWD/full/filler" 2>/dev/null
  expect_exit 0 kernc compile k.cu -t sm_80 -o k.cubin
  expect_match "$OUT" '^sm_80 +compiled '
  expect_elf k.cubin
  expect_clean_cache
  [[ -z $(find "$KERNC_CACHE_DIR" -name '.tmp.*') ]] || test_failed "a failed write left a temp file"
  unmount
else
  echo "    skipped: cannot mount a tmpfs here (needs root and mount rights)"
fi

TEST "a read-only filesystem: the cache is used read-only, compiles still work, precompile fails before compiling"
if small_filesystem "$PWD/ro" 20M; then
  export KERNC_CACHE_DIR=$PWD/ro/cache
  write_sample_kernel k.cu
  expect_exit 0 kernc compile k.cu -t sm_90
  mount -o remount,ro "$PWD/ro" || test_failed "cannot remount read-only"
  expect_exit 0 kernc compile k.cu -t sm_90
  expect_match "$OUT" '^sm_90 +disk hit '
  expect_exit 0 kernc compile k.cu -t sm_80
  expect_match "$OUT" '^sm_80 +compiled '
  expect_contains "$ERR" "is not writable"
  expect_exit 4 kernc precompile "$SMALL_SPEC" --target sm_90 -q
  expect_contains "$ERR" "which is not writable (Read-only file system); nothing was compiled"
  unmount
else
  echo "    skipped: cannot mount a tmpfs here (needs root and mount rights)"
fi

# ---------------------------------------------------------------------------------------------
TEST "kill -9 in the middle of precompiles never leaves a partial or damaged entry"
kills=0
for round in 1 2 3 4 5 6 7 8; do
  "$KERNC" precompile "$SMALL_SPEC" --target sm_90,sm_80 -q -j 2 >/dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 9 + 1))"
  if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
  wait "$pid" 2>/dev/null
  expect_clean_cache
done
echo "    $kills of 8 precompiles killed mid-way; the cache verified after each"
expect_exit 0 kernc precompile "$SMALL_SPEC" --target sm_90,sm_80 -q
expect_contains "$OUT" "0 failed"
expect_entry_count $((2 * SMALL_SPEC_VARIANTS))
expect_clean_cache

TEST "pruning in a loop while two precompiles run never fails a compile, and the cap holds after"
# The saxpy spec (16 programs a target, about 10 KB each) under a 100 KB cap: the pruner's
# 40 rounds cover the two precompiles' whole run, and each round has entries to evict.
cap=$((100 * 1024))
(
  for _ in $(seq 1 40); do "$KERNC" cache prune --max-size 100K >/dev/null 2>&1; sleep 0.1; done
) &
pruner=$!
"$KERNC" precompile "$SMALL_SPEC" --target sm_90 -q -j 2 >first.out 2>first.err &
first=$!
"$KERNC" precompile "$SMALL_SPEC" --target sm_80 -q -j 2 >second.out 2>second.err &
second=$!
status_first=0 status_second=0
wait "$first" || status_first=$?
wait "$second" || status_second=$?
wait "$pruner"
for run in first second; do
  grep -q "$SMALL_SPEC_VARIANTS program(s) .*: .* 0 failed" "$run.out" || test_failed "$run precompile failed a compile: $(cat "$run.out" "$run.err")"
done
# A precompile whose entries were pruned away says so (exit 4); nothing else is allowed.
[[ $status_first =~ ^(0|4)$ && $status_second =~ ^(0|4)$ ]] ||
  test_failed "precompile exit codes $status_first and $status_second (0 or 4 expected)"
CHECKS=$((CHECKS + 1))
expect_clean_cache
expect_exit 0 kernc cache prune --max-size 100K --format json
expect_json "$OUT" "d['remaining_bytes'] <= $cap" true
total=$(find "$KERNC_CACHE_DIR/entries" -type f ! -name '.tmp.*' -printf '%s\n' | awk '{s += $1} END {print s + 0}')
(( total <= cap )) || test_failed "$total bytes of entries remain over the $cap-byte cap"
CHECKS=$((CHECKS + 1))

# ---------------------------------------------------------------------------------------------
# Every kind of damage an entry can suffer, each on a fresh cache of two entries: `cache
# verify` must name the entry (exit 5), and the next compile must refuse it, recompile the
# very same binary and replace it (verify is clean after). Prints the tally.
damage_truncate() { truncate -s $(($(file_size "$1") / 2)) "$1"; }
damage_flip_head() { flip_byte "$1" 0; }
damage_flip_middle() { flip_byte "$1" $(($(file_size "$1") / 2)); }
damage_flip_tail() { flip_byte "$1" -1; }
damage_empty() { : >"$1"; }
damage_swap() { cp "$OTHER" "$1"; }
damage_directory() { rm "$1"; mkdir -p "$1/inside"; }
damage_symlink() { rm "$1"; ln -s /etc/passwd "$1"; }
damage_foreign_format() { write_u32 "$1" 8 3; }
damage_group_writable() { chmod 0660 "$1"; }
damage_world_writable() { chmod 0666 "$1"; }
damage_foreign_owner() { chown 65534 "$1"; }

TEST "cache verify and lookups find every kind of damage to an entry"
write_sample_kernel k.cu
printf 'extern "C" __global__ void other(float* x) { x[threadIdx.x] += 1.0f; }\n' >other.cu
kinds=(truncate flip_head flip_middle flip_tail empty swap directory symlink foreign_format group_writable
       world_writable)
[[ $(id -u) -eq 0 ]] && kinds+=(foreign_owner)
by_verify=0 by_lookup=0
for kind in "${kinds[@]}"; do
  export KERNC_CACHE_DIR=$PWD/damage-$kind
  expect_exit 0 kernc compile k.cu -t sm_90 -o before.cubin
  find_only_entry
  expect_exit 0 kernc compile other.cu -t sm_90
  OTHER=$(entry_files | grep -v "$ENTRY")
  "damage_$kind" "$ENTRY"
  key=$(basename "$ENTRY")
  expect_exit 5 kernc cache verify --format json
  expect_json "$OUT" '" ".join(b["path"].rsplit("/", 1)[-1] for b in d["bad"])' "$key"
  by_verify=$((by_verify + 1))  # (a failed expectation ends the script)
  expect_exit 0 kernc compile k.cu -t sm_90 -o after.cubin
  expect_match "$OUT" '^sm_90 +compiled '
  CHECKS=$((CHECKS + 1))
  cmp -s before.cubin after.cubin || test_failed "$kind: the recompiled binary differs from the first one"
  [[ -f $ENTRY && ! -L $ENTRY ]] || test_failed "$kind: the entry was not replaced by a regular file"
  expect_clean_cache
  by_lookup=$((by_lookup + 1))
done
echo "    damage kinds found by cache verify: $by_verify of ${#kinds[@]}; refused by a lookup and replaced: $by_lookup of ${#kinds[@]}"
[[ $(id -u) -eq 0 ]] || echo "    (an entry owned by another user is tried only as root)"

finish
