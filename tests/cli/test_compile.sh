# Black-box tests of `kernc compile`: targets, outputs, options that reach the key and the
# code, compile errors, exit codes, and damaged cache entries.
# Usage: bash test_compile.sh PATH_TO_KERNC [PROJECT_SOURCE_DIR]

# shellcheck disable=SC2317  # the damage_* helpers are called through check_corruption
# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# A kernel whose error is on line 3 (compile errors must point at it).
write_bad_kernel() {
  cat >"$1" <<'EOF'
extern "C" __global__ void broken(float* x) {
  int i = threadIdx.x;
  x[i] = undefined_symbol;
}
EOF
}

# A compile error or a usage error is reported, not crashed on.
expect_no_crash() {
  expect_not_contains "$ERR" "terminate called"
  expect_not_contains "$ERR" "internal error"
  expect_not_contains "$ERR" "Aborted"
  expect_not_contains "$ERR" "what():"
}

# ---------------------------------------------------------------------------------------------
TEST "sm_90 compiles once, then hits the disk cache"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu --target sm_90
expect_match "$OUT" '^sm_90 +compiled '
expect_contains "$OUT" "1 target(s): 1 compiled, 0 cache hit(s), 0 failed"
expect_entry_count 1
expect_exit 0 kernc compile k.cu --target sm_90
expect_match "$OUT" '^sm_90 +disk hit '
expect_contains "$OUT" "1 target(s): 0 compiled, 1 cache hit(s), 0 failed"
expect_entry_count 1
expect_stat compiles 1
expect_stat disk_hits 1
expect_stat memory_hits 0
expect_stat compile_failures 0
expect_stat corrupt_entries 0

# ---------------------------------------------------------------------------------------------
TEST "gfx90a compiles with HIPRTC, then hits the disk cache"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t gfx90a
expect_match "$OUT" '^gfx90a +compiled .* hsaco '
expect_exit 0 kernc compile k.cu -t gfx90a
expect_match "$OUT" '^gfx90a +disk hit '
expect_entry_count 1
expect_stat compiles 1
expect_stat disk_hits 1

# ---------------------------------------------------------------------------------------------
TEST "compute_90 emits PTX"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t compute_90 -o k.ptx
expect_match "$OUT" '^compute_90 +compiled .* ptx '
expect_contains "$OUT" "wrote k.ptx"
expect_contains k.ptx ".entry saxpy"
expect_contains k.ptx ".target sm_90"
expect_exit 0 kernc compile k.cu -t compute_90 -o k2.ptx
expect_match "$OUT" '^compute_90 +disk hit '
expect_contains k2.ptx ".entry saxpy"
expect_stat compiles 1
expect_stat disk_hits 1

# ---------------------------------------------------------------------------------------------
TEST "--emit ptx makes an sm_ target produce PTX"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t sm_90 --emit ptx -o k.ptx
expect_match "$OUT" ' ptx '
expect_contains k.ptx ".entry saxpy"
expect_contains k.ptx ".target sm_90"
expect_exit 0 kernc compile k.cu -t sm_90 --emit ptx
expect_match "$OUT" ' disk hit '

# ---------------------------------------------------------------------------------------------
TEST "-o with one target writes that file"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t sm_90 -o k.cubin
expect_contains "$OUT" "wrote k.cubin"
expect_elf k.cubin
expect_exit 0 kernc compile k.cu -t gfx90a -o k.hsaco
expect_elf k.hsaco
# A disk hit writes the same bytes as the compile did.
expect_exit 0 kernc compile k.cu -t sm_90 -o again.cubin
expect_match "$OUT" ' disk hit '
CHECKS=$((CHECKS + 1))
cmp -s k.cubin again.cubin || test_failed "a disk hit wrote different bytes than the compile"

# ---------------------------------------------------------------------------------------------
TEST "-o with several targets writes OUT/STEM.TARGET.EXT"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t sm_90,gfx90a,compute_90 -o out
expect_contains "$OUT" "3 target(s): 3 compiled, 0 cache hit(s), 0 failed"
expect_elf out/k.sm_90.cubin
expect_elf out/k.gfx90a.hsaco
expect_file_exists out/k.compute_90.ptx
expect_contains out/k.compute_90.ptx ".entry saxpy"
expect_entry_count 3
# Blanks around commas are fine; all three now come from the cache.
expect_exit 0 kernc compile k.cu -t 'sm_90, gfx90a ,compute_90' -o out2/
expect_contains "$OUT" "3 target(s): 0 compiled, 3 cache hit(s), 0 failed"
expect_elf out2/k.sm_90.cubin

# ---------------------------------------------------------------------------------------------
TEST "-n prints the lowered name of a name expression"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t sm_90 -n 'scale<float>' -n 'scale<double>'
expect_match "$OUT" '^ +scale<float> -> _Z[A-Za-z0-9_]+$'
expect_contains "$OUT" "scale<float> -> _Z5scaleIfEvPT_S0_i"
expect_contains "$OUT" "scale<double> -> _Z5scaleIdEvPT_S0_i"
expect_exit 0 kernc compile k.cu -t gfx90a -n 'scale<float>'
expect_contains "$OUT" "scale<float> -> _Z5scaleIfEvPT_S0_i"
# The lowered names come back from the cache too.
expect_exit 0 kernc compile k.cu -t sm_90 -n 'scale<float>' -n 'scale<double>'
expect_match "$OUT" ' disk hit '
expect_contains "$OUT" "scale<double> -> _Z5scaleIdEvPT_S0_i"

# ---------------------------------------------------------------------------------------------
TEST "-D reaches the code and changes the key"
cat >d.cu <<'EOF'
#if !defined(KERNC_TEST_SCALE)
#error "KERNC_TEST_SCALE must be defined"
#endif
extern "C" __global__ void scaled(float* x) { x[threadIdx.x] *= KERNC_TEST_SCALE; }
EOF
expect_exit 1 kernc compile d.cu -t sm_90
expect_contains "$ERR" "KERNC_TEST_SCALE must be defined"
expect_exit 0 kernc compile d.cu -t sm_90 -D KERNC_TEST_SCALE=2.0f
expect_match "$OUT" '^sm_90 +compiled '
expect_exit 0 kernc compile d.cu -t sm_90 --define KERNC_TEST_SCALE=3.0f
expect_match "$OUT" '^sm_90 +compiled '
expect_entry_count 2
expect_exit 0 kernc compile d.cu -t sm_90 -D KERNC_TEST_SCALE=2.0f
expect_match "$OUT" '^sm_90 +disk hit '
expect_exit 0 kernc compile d.cu -t gfx90a -D KERNC_TEST_SCALE=2.0f
expect_match "$OUT" '^gfx90a +compiled '
expect_stat compiles 3
expect_stat compile_failures 1

# ---------------------------------------------------------------------------------------------
TEST "--header NAME=FILE is found by its name, and its bytes are in the key"
cat >h.cu <<'EOF'
#include "my/util.h"
extern "C" __global__ void scaled(float* x) { x[threadIdx.x] *= UTIL_FACTOR; }
EOF
echo '#define UTIL_FACTOR 3.0f' >util.h
expect_exit 1 kernc compile h.cu -t sm_90
expect_contains "$ERR" "my/util.h"
expect_exit 0 kernc compile h.cu -t sm_90 --header my/util.h=util.h
expect_match "$OUT" '^sm_90 +compiled '
expect_exit 0 kernc compile h.cu -t sm_90 --header my/util.h=util.h
expect_match "$OUT" '^sm_90 +disk hit '
echo '#define UTIL_FACTOR 4.0f' >util.h
expect_exit 0 kernc compile h.cu -t sm_90 --header my/util.h=util.h
expect_match "$OUT" '^sm_90 +compiled '
expect_exit 0 kernc compile h.cu -t gfx90a --header my/util.h=util.h
expect_match "$OUT" '^gfx90a +compiled '
expect_exit 2 kernc compile h.cu -t sm_90 --header my/util.h
expect_contains "$ERR" "NAME=FILE"
expect_exit 4 kernc compile h.cu -t sm_90 --header my/util.h=missing.h
expect_contains "$ERR" "missing.h"

# ---------------------------------------------------------------------------------------------
TEST "a compile error exits 1 and prints NVRTC's log with the line"
write_bad_kernel bad.cu
expect_exit 1 kernc compile bad.cu -t sm_90
expect_match "$OUT" '^sm_90 +FAILED'
expect_contains "$ERR" "bad.cu(3)"
expect_contains "$ERR" "undefined_symbol"
expect_no_crash
expect_entry_count 0
expect_stat compile_failures 1
expect_stat compiles 0

# ---------------------------------------------------------------------------------------------
TEST "a compile error exits 1 and prints HIPRTC's log with the line"
write_bad_kernel bad.cu
expect_exit 1 kernc compile bad.cu -t gfx90a
expect_match "$OUT" '^gfx90a +FAILED'
expect_contains "$ERR" "bad.cu:3:"
expect_contains "$ERR" "undefined_symbol"
expect_no_crash
expect_entry_count 0

# ---------------------------------------------------------------------------------------------
TEST "a compile error outranks an unsupported target in the exit code"
write_bad_kernel bad.cu
expect_exit 1 kernc compile bad.cu -t sm_30,sm_90
expect_match "$OUT" '^sm_30 +ERROR'
expect_match "$OUT" '^sm_90 +FAILED'
expect_exit 1 kernc compile bad.cu -t sm_90,sm_30
expect_exit 1 kernc compile bad.cu -t sm_90,gfx90a
expect_match "$OUT" '^gfx90a +FAILED'

# ---------------------------------------------------------------------------------------------
TEST "bad target names exit 2"
write_sample_kernel k.cu
expect_exit 2 kernc compile k.cu -t sm_9x
expect_contains "$ERR" "sm_9x"
expect_no_crash
expect_exit 2 kernc compile k.cu -t ','
expect_contains "$ERR" "--target"
expect_exit 2 kernc compile k.cu
expect_contains "$ERR" "--target"
expect_entry_count 0

# ---------------------------------------------------------------------------------------------
TEST "an unsupported target exits 3 and lists the supported ones"
write_sample_kernel k.cu
expect_exit 3 kernc compile k.cu -t sm_30
expect_contains "$ERR" "sm_30"
expect_contains "$ERR" "sm_90"
expect_no_crash
expect_entry_count 0

# ---------------------------------------------------------------------------------------------
TEST "a HIP target cannot emit PTX: exit 2"
write_sample_kernel k.cu
expect_exit 2 kernc compile k.cu -t gfx90a --emit ptx
expect_contains "$ERR" "gfx90a"
expect_contains "$ERR" "ptx"
expect_exit 2 kernc compile k.cu -t sm_90 --emit hsaco
expect_exit 2 kernc compile k.cu -t sm_90 --emit elf

# ---------------------------------------------------------------------------------------------
TEST "a missing input file exits 4"
expect_exit 4 kernc compile missing.cu -t sm_90
expect_contains "$ERR" "missing.cu"
mkdir adir
expect_exit 4 kernc compile adir -t sm_90  # a directory is not a readable source file

# ---------------------------------------------------------------------------------------------
TEST "an unknown flag exits 2"
write_sample_kernel k.cu
expect_exit 2 kernc compile k.cu -t sm_90 --no-such-flag
expect_contains "$ERR" "--no-such-flag"
expect_exit 2 kernc frobnicate
expect_exit 2 kernc
expect_exit 2 kernc compile k.cu -t sm_90 --std c++03

# ---------------------------------------------------------------------------------------------
TEST "--help exits 0"
expect_exit 0 kernc --help
expect_contains "$OUT" "compile"
expect_contains "$OUT" "cache"
expect_contains "$OUT" "info"
expect_exit 0 kernc compile --help
expect_contains "$OUT" "--target"
expect_contains "$OUT" "--name-expression"

# ---------------------------------------------------------------------------------------------
TEST "an NVRTC library that is not there exits 3 naming the path"
write_sample_kernel k.cu
KERNC_NVRTC_LIBRARY=/nonexistent/libnvrtc.so expect_exit 3 kernc compile k.cu -t sm_90
expect_contains "$ERR" "/nonexistent/libnvrtc.so"
expect_no_crash
expect_entry_count 0

# ---------------------------------------------------------------------------------------------
TEST "-o into a directory that does not exist exits 4"
write_sample_kernel k.cu
expect_exit 4 kernc compile k.cu -t sm_90 -o nowhere/k.cubin
expect_contains "$ERR" "nowhere"
expect_file_missing nowhere

# ---------------------------------------------------------------------------------------------
# NOTE: a damaged entry must be recompiled and replaced, never trusted and never an error.
# check_corruption DESCRIPTION COMMAND...: compiles, damages the entry with COMMAND (which
# gets the entry's path appended), then expects a recompile that repairs it.
check_corruption() {
  write_sample_kernel k.cu
  expect_exit 0 kernc compile k.cu -t sm_90 -o before.cubin
  find_only_entry
  "$@" "$ENTRY"
  expect_exit 0 kernc compile k.cu -t sm_90 -o after.cubin
  expect_match "$OUT" '^sm_90 +compiled '
  expect_contains "$OUT" "1 corrupt entry replaced"
  expect_contains "$ERR" "corrupt"
  CHECKS=$((CHECKS + 1))
  cmp -s before.cubin after.cubin || test_failed "the recompiled binary differs from the first one"
  expect_stat corrupt_entries 1
  expect_stat compiles 2
  # The entry was rewritten: the next run is a hit again.
  expect_exit 0 kernc compile k.cu -t sm_90
  expect_match "$OUT" '^sm_90 +disk hit '
  expect_exit 0 kernc cache verify
  expect_stat corrupt_entries 1
}

damage_flip_payload_byte() { flip_byte "$1" $(($(file_size "$1") - 10)); }
damage_truncate_to_half() { truncate -s $(($(file_size "$1") / 2)) "$1"; }
damage_truncate_in_header() { truncate -s 30 "$1"; }
damage_set_version_3() { write_u32 "$1" 8 3; }

TEST "an entry with a flipped payload byte is recompiled"
check_corruption damage_flip_payload_byte

TEST "a truncated entry is recompiled"
check_corruption damage_truncate_to_half

TEST "an entry shorter than its header is recompiled"
check_corruption damage_truncate_in_header

TEST "an entry of format version 3 is recompiled"
check_corruption damage_set_version_3

finish
