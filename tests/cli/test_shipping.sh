# Black-box tests of caches that travel (README "Shipping kernels"): a cache precompiled in
# CI serves other hosts with no compiler, across byte-different copies of one NVRTC release,
# down the architecture ladder, from read-only tiers that are never written, and never
# serves an entry someone else could have written. Without a GPU every lookup is checked
# with `kernc cache check` and `kernc compile`; with one (label gpu, tools/gpu-check) every
# kernel of examples/kernels.json also runs from such caches and is checked against NumPy.
# Usage: bash test_shipping.sh PATH_TO_KERNC PROJECT_SOURCE_DIR

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

SPEC=$(realpath -- "$SOURCE_DIR/examples/kernels.json")
VARIANTS=106  # of examples/kernels.json per target; test_precompile.sh checks the count
NO_NVRTC=/nonexistent/libnvrtc.so.13
# The precompile mechanics below (what is stored, progress lines) need a spec, not all of it.
SMALL_SPEC=$SUITE_DIR/saxpy-float32.json
write_small_spec "$SMALL_SPEC"
SMALL_VARIANTS=$SMALL_SPEC_VARIANTS
IS_ROOT=0
[[ $(id -u) -eq 0 ]] && IS_ROOT=1

# A snapshot of every file under DIR with its size, mode and mtime: a read-only tier must
# be exactly the same after it was used.
snapshot() { find "$1" -printf '%p %s %m %T@\n' | sort; }

# ---------------------------------------------------------------------------------------------
TEST "a cache precompiled for sm_80,compute_80 serves sm_80, sm_86 and sm_90 with no compiler"
expect_exit 0 kernc precompile "$SPEC" --target sm_80,compute_80 -q
expect_contains "$OUT" "$((2 * VARIANTS)) compiled, 0 cache hit(s), 0 failed"
KERNC_NVRTC_LIBRARY=$NO_NVRTC expect_exit 0 kernc cache check "$SPEC" --target sm_80,sm_86,sm_90 --format json
expect_json "$OUT" 'd["ok"]' true
expect_json "$OUT" '[t["served_by"] for t in d["targets"]]' \
  "[{\"sm_80\": $VARIANTS}, {\"sm_80\": $VARIANTS}, {\"compute_80\": $VARIANTS}]"
KERNC_NVRTC_LIBRARY=$NO_NVRTC expect_exit 0 kernc cache check "$SPEC" --target sm_86
expect_match "$OUT" "^sm_86 +$VARIANTS of $VARIANTS variant\(s\) servable \($VARIANTS from sm_80\)$"
# A Turing GPU is below every rung: nothing can serve it, and the gate says what to run.
KERNC_NVRTC_LIBRARY=$NO_NVRTC expect_exit 8 kernc cache check "$SPEC" --target sm_75
expect_match "$OUT" "^sm_75 +0 of $VARIANTS variant\(s\) servable$"
expect_match "$OUT" '^missing +sm_75 +saxpy +scalar float32, float32, float32 -> float32 contiguous-i32$'
expect_contains "$ERR" "$VARIANTS variant(s) cannot be served without compiling; add them with: kernc precompile $SPEC --target sm_75"
expect_exit 2 kernc cache check "$SPEC" --target compute_90
expect_contains "$ERR" "device architectures"

# ---------------------------------------------------------------------------------------------
TEST "one NVRTC release from a byte-different file shares every entry"
nvrtc=$(realpath /usr/local/cuda/lib64/libnvrtc.so)
mkdir copy
cp "$nvrtc" copy/libnvrtc.so.13
printf 'another package' >>copy/libnvrtc.so.13
cmp -s "$nvrtc" copy/libnvrtc.so.13 && test_failed "the copy is not byte-different"
expect_exit 0 kernc precompile "$SPEC" --target sm_90 -q
expect_contains "$OUT" "$VARIANTS compiled, 0 cache hit(s)"
KERNC_NVRTC_LIBRARY=$PWD/copy/libnvrtc.so.13 expect_exit 0 kernc precompile "$SPEC" --target sm_90 -q
expect_contains "$OUT" "0 compiled, $VARIANTS cache hit(s), 0 failed"
expect_exit 0 kernc info --format json
tag=$(json_eval "$OUT" 'd["nvrtc"]["cache_tag"]')
KERNC_NVRTC_LIBRARY=$PWD/copy/libnvrtc.so.13 expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["nvrtc"]["library"]' "$PWD/copy/libnvrtc.so.13"
expect_json "$OUT" 'd["nvrtc"]["cache_tag"]' "$tag"
expect_entry_count "$VARIANTS"
# Every entry name ends in that tag: the compiler part of the key.
[[ $(entry_files | grep -c -- "-$tag\$") -eq $VARIANTS ]] || test_failed "entries not named by the compiler tag $tag"
keep_cache whole-spec-sm_90

# ---------------------------------------------------------------------------------------------
TEST "a read-only tier serves lookups and is never written, pruned or touched"
write_sample_kernel k.cu
seed_cache whole-spec-sm_90 "$PWD/image"
KERNC_CACHE_DIR=$PWD/image expect_exit 0 kernc compile k.cu --target sm_90 -n 'scale<float>'
KERNC_CACHE_DIR=$PWD/image expect_exit 0 kernc precompile "$SPEC" --target sm_90 -q
expect_contains "$OUT" "0 compiled, $VARIANTS cache hit(s), 0 failed"
chmod -R go-w image
before=$(snapshot image)
export KERNC_CACHE_PATH=$PWD/image
expect_exit 0 kernc compile k.cu --target sm_90 -n 'scale<float>'
expect_match "$OUT" '^sm_90 +disk hit '
expect_entry_count 0  # nothing copied into the user's cache
KERNC_NVRTC_LIBRARY=$NO_NVRTC expect_exit 0 kernc cache check "$SPEC" --target sm_90
expect_contains "$OUT" "searched $KERNC_CACHE_DIR, $PWD/image"
expect_match "$OUT" "^sm_90 +$VARIANTS of $VARIANTS variant\(s\) servable \($VARIANTS from sm_90\)$"
expect_stat read_only_hits $((VARIANTS + 1))
expect_stat disk_hits 0
expect_equal "$(snapshot image)" "$before" "the read-only tier after use"
expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["settings"]["cache_path"]' "{\"source\": \"KERNC_CACHE_PATH\", \"value\": \"$PWD/image\"}"
# --cache-path overrides it; an empty list searches nothing else.
expect_exit 0 kernc --cache-path "$PWD/nowhere" compile k.cu --target sm_90 -n 'scale<float>'
expect_match "$OUT" '^sm_90 +compiled '
expect_contains "$ERR" "nowhere"
expect_contains "$ERR" "this read-only tier is left out"

# ---------------------------------------------------------------------------------------------
TEST "precompile into an empty directory copies a read-only tier's entries instead of compiling them"
KERNC_CACHE_DIR=$PWD/image expect_exit 0 kernc precompile "$SMALL_SPEC" --target sm_90 -q
expect_contains "$OUT" "$SMALL_VARIANTS compiled, 0 cache hit(s), 0 failed"
chmod -R go-w image
before=$(snapshot image)
export KERNC_CACHE_PATH=$PWD/image
expect_exit 0 kernc precompile "$SMALL_SPEC" --target sm_90 -j 2
expect_match "$OUT" "^$SMALL_VARIANTS program\(s\) \($SMALL_VARIANTS variant\(s\) of 1 kernel\(s\) x 1 target\(s\)\): 0 compiled, $SMALL_VARIANTS cache hit\(s\) \($SMALL_VARIANTS copied from a read-only tier\), 0 failed in [0-9.]+ s \(2 jobs\)$"
expect_count "$ERR" ': read-only tier hit, copied' "$SMALL_VARIANTS"
expect_entry_count "$SMALL_VARIANTS"
# Copied byte for byte, and nothing in the tier changed.
for entry in image/entries/*/*; do
  cmp -s "$entry" "$KERNC_CACHE_DIR/entries/$(basename "$(dirname "$entry")")/$(basename "$entry")" ||
    test_failed "$entry was not copied as it is"
done
CHECKS=$((CHECKS + 1))
expect_equal "$(snapshot image)" "$before" "the read-only tier after the precompile"
expect_stat compiles 0
expect_stat read_only_hits "$SMALL_VARIANTS"
expect_exit 0 kernc cache verify
expect_contains "$OUT" "$SMALL_VARIANTS checked, 0 bad"
# The directory now answers by itself; JSON counts the tier's hits apart.
expect_exit 0 kernc precompile "$SMALL_SPEC" --target sm_90 -q --format json
expect_json "$OUT" '[d["compiled"], d["cache_hits"], d["read_only_hits"], d["remote_hits"]]' "[0, $SMALL_VARIANTS, 0, 0]"
# The copy is trusted only as a lookup of the tier would be: a damaged entry and one its
# group may write are passed over and compiled, the rest copied.
rm -rf "$KERNC_CACHE_DIR"
entries=(image/entries/*/*)
flip_byte "${entries[0]}" 200
chmod g+w "${entries[1]}"
expect_exit 0 kernc precompile "$SMALL_SPEC" --target sm_90 -q --format json
expect_json "$OUT" '[d["compiled"], d["cache_hits"], d["read_only_hits"]]' "[2, $((SMALL_VARIANTS - 2)), $((SMALL_VARIANTS - 2))]"
expect_contains "$ERR" "corrupt cache entry passed over in a read-only tier"
expect_contains "$ERR" "it is writable by its group"
expect_entry_count "$SMALL_VARIANTS"
expect_exit 0 kernc cache verify
expect_contains "$OUT" "$SMALL_VARIANTS checked, 0 bad"

# ---------------------------------------------------------------------------------------------
TEST "a tier that others can write, or that another user owns, is refused and says why"
write_sample_kernel k.cu
KERNC_CACHE_DIR=$PWD/image expect_exit 0 kernc compile k.cu --target sm_90
chmod -R go-w image
chmod g+w image
KERNC_CACHE_PATH=$PWD/image expect_exit 0 kernc compile k.cu --target sm_90
expect_match "$OUT" '^sm_90 +compiled '
expect_contains "$ERR" "read-only cache $PWD/image is writable by other users (mode 720)"
chmod g-w image
chmod o+w image/entries
KERNC_CACHE_PATH=$PWD/image expect_exit 0 kernc compile k.cu --target sm_90
expect_match "$OUT" '^sm_90 +disk hit '  # its own cache has it now
expect_contains "$ERR" "entries/ must be owned by root or this user and not writable by group or others"
chmod o-w image/entries
if [[ $IS_ROOT -eq 1 ]]; then
  chown -R 65534 image
  KERNC_CACHE_PATH=$PWD/image KERNC_CACHE_DIR=$PWD/fresh expect_exit 0 kernc compile k.cu --target sm_90
  expect_match "$OUT" '^sm_90 +compiled '
  expect_contains "$ERR" "read-only cache $PWD/image is owned by uid 65534"
  # As the writable cache, another user's directory is refused with the way to use it.
  KERNC_CACHE_DIR=$PWD/image expect_exit 0 kernc compile k.cu --target sm_90
  expect_contains "$ERR" "owned by uid 65534, not by this user"
  expect_contains "$ERR" "name it in KERNC_CACHE_PATH"
else
  echo "    (not root: the checks of directories owned by another uid need root to chown)"
fi

# ---------------------------------------------------------------------------------------------
TEST "an entry that others could have written is never loaded, and is replaced"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu --target sm_90
find_only_entry
expect_stat corrupt_entries 0
chmod g+w "$ENTRY"
expect_exit 0 kernc compile k.cu --target sm_90
expect_match "$OUT" '^sm_90 +compiled '
expect_contains "$ERR" "not trusted: it is writable by its group (mode 620)"
expect_equal "$(stat -c %a "$ENTRY")" 600 "the replaced entry's mode"
chmod o+w "$ENTRY"
expect_exit 0 kernc compile k.cu --target sm_90
expect_match "$OUT" '^sm_90 +compiled '
expect_contains "$ERR" "writable by others"
mv "$ENTRY" saved
ln -s /etc/passwd "$ENTRY"
expect_exit 0 kernc compile k.cu --target sm_90
expect_match "$OUT" '^sm_90 +compiled '
expect_contains "$ERR" "it is a symbolic link"
[[ -f $ENTRY && ! -L $ENTRY ]] || test_failed "the symlink was not replaced by an entry"
rm "$ENTRY"
mkdir -p "$ENTRY/inside"
expect_exit 0 kernc compile k.cu --target sm_90
expect_match "$OUT" '^sm_90 +compiled '
[[ -f $ENTRY ]] || test_failed "the directory in the entry's place was not replaced by an entry"
expect_not_contains "$ERR" "keeping compiled kernels in memory"
expect_exit 0 kernc compile k.cu --target sm_90
expect_match "$OUT" '^sm_90 +disk hit '
if [[ $IS_ROOT -eq 1 ]]; then
  chown 65534 "$ENTRY"
  expect_exit 0 kernc compile k.cu --target sm_90
  expect_match "$OUT" '^sm_90 +compiled '
  expect_contains "$ERR" "it is owned by uid 65534, not by this user (uid 0) or root"
fi
expect_exit 0 kernc cache verify
expect_contains "$OUT" "0 bad"

# ---------------------------------------------------------------------------------------------
TEST "precompile fails when its entries are not in the cache directory at the end"
# Without a disk cache it fails before compiling (NOTE [ fail before compiling ]).
expect_exit 4 kernc --no-cache precompile "$SMALL_SPEC" --target sm_90 -q
expect_contains "$ERR" "precompile stores what it compiles in the cache directory, and the disk cache is off"
expect_entry_count 0
KERNC_CACHE_MAX_SIZE=100K expect_exit 4 kernc precompile "$SMALL_SPEC" --target sm_90 -q --format json
expect_json "$OUT" 'd["compiled"]' "$SMALL_VARIANTS"
expect_json "$OUT" 'd["not_stored"] > 0' true
expect_json "$OUT" '"evicted by the size cap" in d["not_stored_reason"]' true
expect_contains "$ERR" "are not in the cache directory $KERNC_CACHE_DIR"
expect_exit 0 kernc precompile "$SMALL_SPEC" --target sm_90 -q --format json
# (the capped run above left its last entries: hits now)
expect_json "$OUT" '[d["programs"], d["compiled"] + d["cache_hits"], d["failed"], d["not_stored"]]' \
  "[$SMALL_VARIANTS, $SMALL_VARIANTS, 0, 0]"

TEST "precompile prints one plain progress line per program when stderr is not a terminal"
expect_exit 0 kernc precompile "$SMALL_SPEC" --target sm_90 -j 2
expect_equal "$(grep -c "^\[[0-9]*/$SMALL_VARIANTS\] sm_90 " "$ERR")" "$SMALL_VARIANTS" "progress lines"
expect_match "$ERR" "^\[[0-9]+/$SMALL_VARIANTS\] sm_90 saxpy scalar float32, float32, float32 -> float32 contiguous-i32: compiled\$"
expect_not_contains "$ERR" $'\r'

# ---------------------------------------------------------------------------------------------
if ! has_gpu; then
  echo "    no GPU: the runs from shipped caches are checked by tools/gpu-check"
  finish
fi
[[ -n $NUMPY_PYTHON ]] || test_failed "a GPU is here but no python3 with numpy to check results (apt-get install python3-numpy)"
ARCH=$(json_eval "$OUT" 'd["cuda_driver"]["gpus"][0]["arch"]')
echo "    GPU: $(json_eval "$OUT" 'd["cuda_driver"]["gpus"][0]["name"]') ($ARCH)"

# run_every_kernel: runs each kernel of examples/kernels.json once on fresh random data with
# the current environment, checks "compiles: 0" and every result against NumPy; appends the
# "binary" lines to binaries.txt.
run_every_kernel() {
  : >binaries.txt
  local rng='rng = np.random.default_rng(int(sys.argv[1]))'
  local seed=$RANDOM
  np_check "$rng
np.save('x32.npy', rng.uniform(-1, 1, 100003).astype(np.float32))
np.save('y32.npy', rng.uniform(-1, 1, 100003).astype(np.float32))
np.save('x64.npy', rng.uniform(-1, 1, 4099).astype(np.float64))
np.save('y64.npy', rng.uniform(-1, 1, 4099).astype(np.float64))
np.save('i32.npy', rng.integers(-50, 50, 1001).astype(np.int32))
np.save('b32.npy', rng.integers(-20, 20, 1001).astype(np.int32))
np.save('m32.npy', rng.uniform(-1, 1, (67, 301)).astype(np.float32))
np.save('c64.npy', (rng.uniform(-1, 1, 5003) + 1j * rng.uniform(-1, 1, 5003)).astype(np.complex64))" "$seed"
  local runs=(
    "--kernel saxpy --in a=2.0 --in x=x32.npy --in y=y32.npy --out z=o_saxpy32.npy"
    "--kernel saxpy --in a=-3 --in x=x64.npy --in y=y64.npy --out z=o_saxpy64.npy"
    "--kernel clip_add --in x=i32.npy --in bias=b32.npy --in lo=-30 --in hi=40.5 --out y=o_clip.npy"
    "--kernel sum_of_squares --in x=m32.npy --axis 1 --out y=o_sumsq.npy"
    "--kernel l2_norm --in x=x64.npy --out y=o_l2.npy"
    "--kernel energy --in x=c64.npy --out y=o_energy.npy"
    "--kernel fill --in out=zeros:1001:float32 --in value=2.5 --in n=777 --out out=o_fill.npy"
    "--kernel scaling --function axpby<float> --arg 2.0:float32 --arg x32.npy --arg 0.5:float32 --arg y32.npy
     --arg 100003:int64 --grid 391 --block 256 --out 3=o_axpby.npy"
  )
  local run
  for run in "${runs[@]}"; do
    # shellcheck disable=SC2086  # each run is a list of words
    expect_exit 0 kernc run "$SPEC" $run
    expect_match "$OUT" '^compile +compiles: 0'
    grep '^binary' "$OUT" >>binaries.txt
  done
  np_check "x32, y32 = np.load('x32.npy').astype(np.float64), np.load('y32.npy').astype(np.float64)
x64, y64 = np.load('x64.npy'), np.load('y64.npy')
def close(name, ref, tol):
    got = np.load(name)
    assert got.shape == np.shape(ref), (name, got.shape, np.shape(ref))
    err = np.max(np.abs(got.astype(np.float64) - ref)) if np.size(ref) else 0
    assert err <= tol, (name, err)
close('o_saxpy32.npy', 2 * x32 + y32, 1e-6)
close('o_saxpy64.npy', -3 * x64 + y64, 1e-12)
i, b = np.load('i32.npy'), np.load('b32.npy')
close('o_clip.npy', np.clip(i + b, -30, 40), 0)
m = np.load('m32.npy').astype(np.float64)
close('o_sumsq.npy', (m * m).sum(axis=1), 1e-4)
close('o_l2.npy', np.sqrt((x64 * x64).sum()), 1e-10)
c = np.load('c64.npy').astype(np.complex128)
close('o_energy.npy', (np.abs(c) ** 2).sum(), 1e-2)
fill = np.zeros(1001); fill[:777] = 2.5
close('o_fill.npy', fill, 0)
close('o_axpby.npy', 2 * x32 + 0.5 * y32, 1e-6)"
}

TEST "every kernel of a spec precompiled with one NVRTC runs with none loaded and KERNC_COMPILE=never"
expect_exit 0 kernc precompile "$SPEC" --target "$ARCH" -q
export KERNC_NVRTC_LIBRARY=$NO_NVRTC KERNC_COMPILE=never
run_every_kernel
expect_equal "$(grep -vEc "^binary +$ARCH cubin from $KERNC_CACHE_DIR\$" binaries.txt)" 0 "binaries not from the exact cubin"
# A call shape no signature lists is an error of its own, naming what to precompile.
expect_exit 8 kernc run "$SPEC" --kernel saxpy --in a=2 --in x=arange:10:int32 --in y=ones:10:int32
expect_contains "$ERR" 'kernel saxpy, signature "scalar int32, int32, int32 -> int32", layout contiguous-i32'
expect_contains "$ERR" "compiling is off (KERNC_COMPILE = never)"
expect_contains "$ERR" "kernc: to add it, where the cache is built: kernc precompile $SPEC --target $ARCH"

TEST "a cache of sm_80 and compute_80 runs on this GPU down the architecture ladder"
KERNC_CACHE_DIR=$PWD/ci expect_exit 0 kernc precompile "$SPEC" --target sm_80,compute_80 -q
export KERNC_CACHE_DIR=$PWD/ci KERNC_NVRTC_LIBRARY=$NO_NVRTC KERNC_COMPILE=never
run_every_kernel
if [[ ${ARCH:3:1} == 8 ]]; then
  expected="sm_80 cubin"
else
  expected="compute_80 PTX, JIT-compiled by the driver"
fi
expect_equal "$(grep -Ec "^binary +$expected" binaries.txt)" "$(wc -l <binaries.txt)" "binaries from $expected"
echo "    $(head -n 1 binaries.txt)"
fallbacks=$(wc -l <binaries.txt)
[[ $ARCH == sm_80 ]] && fallbacks=0  # the exact cubin: not a fallback
expect_stat fallback_hits "$fallbacks"

TEST "a read-only tier serves a host whose own cache is empty"
KERNC_CACHE_DIR=$PWD/image expect_exit 0 kernc precompile "$SPEC" --target "$ARCH" -q
chmod -R go-w image
before=$(snapshot image)
export KERNC_CACHE_PATH=$PWD/image KERNC_NVRTC_LIBRARY=$NO_NVRTC KERNC_COMPILE=never
run_every_kernel
expect_equal "$(grep -vEc "^binary +$ARCH cubin from $PWD/image\$" binaries.txt)" 0 "binaries not from the tier"
expect_equal "$(snapshot image)" "$before" "the read-only tier after use"
expect_entry_count 0

TEST "the README's kernc run example hits a cache made by precompiling the spec"
expect_exit 0 kernc precompile "$SPEC" --target "$ARCH" -q
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=random:1000000:float32 \
  --in y=random:1000000:float32 --repeat 20
expect_match "$OUT" '^compile +compiles: 0, 1 disk cache hit'
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2 --in x=random:1000:float32 --in y=random:1000:float32
expect_match "$OUT" '^compile +compiles: 0, 1 disk cache hit'

finish
