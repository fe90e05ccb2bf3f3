# Black-box tests of `kernc run`: the command line is checked before the GPU is touched
# (usage errors exit 2, unreadable files 4, on any machine); without a usable GPU the
# command exits 7; with one (`kernc info` lists a GPU) the results are checked against
# NumPy where a python3 with numpy is found, and against values known in advance otherwise.
# Usage: bash test_run.sh PATH_TO_KERNC [PROJECT_SOURCE_DIR]

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

SPEC="${SOURCE_DIR:-$(dirname "${BASH_SOURCE[0]}")/../..}/examples/kernels.json"
SPEC=$(realpath -- "$SPEC")
PORTS=$(realpath -- "$(dirname "$SPEC")/../tests/cli/data/cupy_ports.json")

saxpy_args=(--kernel saxpy --in a=2.0 --in x=random:1000:float32 --in y=random:1000:float32)

# ---------------------------------------------------------------------------------------------
TEST "usage errors exit 2 before any GPU is needed"
# A driver that cannot load: a GPU problem must not hide a usage error.
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
expect_exit 2 kernc run "$SPEC" --kernel no_such_kernel
expect_contains "$ERR" "no kernel named no_such_kernel"
expect_contains "$ERR" "saxpy, clip_add, sum_of_squares"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in q=1 --in x=ones:3:float32 --in y=ones:3:float32
expect_contains "$ERR" "kernel saxpy has no parameter named q (T a, T x, T y -> T z)"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0
expect_contains "$ERR" "kernel saxpy needs --in NAME=SOURCE for x, y"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in a=3.0 --in x=ones:3:float32 --in y=ones:3:float32
expect_contains "$ERR" "--in a is given twice"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in x
expect_contains "$ERR" "expected NAME=SOURCE"
expect_exit 2 kernc run "$SPEC"
expect_contains "$ERR" "--kernel is required"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=ones:3:float32 --in y=ones:3:float32 --print --format json
expect_contains "$ERR" "--print shows elements as text"
expect_not_contains "$ERR" "no usable NVIDIA GPU"

TEST "malformed sources exit 2 and say what was expected"
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
for source in random:1000 random:1000:float33 random:10x:float32 random:ax3:float32 random:-5:float32 \
  random:5:float32:seed random:5:float32:1:2 arange:5 zeros:5:int32:7 ones::float32 abc 3.5:float99 \
  300:int8 -1:uint8 2.5:int32 1+2j:float32 2:bool; do
  expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in "x=$source" --in y=ones:5:float32
  expect_contains "$ERR" "--in x=$source"
done
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=random:1000 --in y=ones:5:float32
expect_contains "$ERR" "expected random:SHAPE:DTYPE or random:SHAPE:DTYPE:SEED"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=random:5:float33 --in y=ones:5:float32
expect_contains "$ERR" 'unknown dtype "float33"'
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=abc --in x=ones:5:float32 --in y=ones:5:float32
expect_contains "$ERR" "random:SHAPE:DTYPE[:SEED]"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=300:int8 --in x=ones:5:float32 --in y=ones:5:float32
expect_contains "$ERR" "300 is out of the range of int8 (-128 to 127)"

TEST "types and options that do not fit the kernel exit 2"
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=ones:5:float32 --in y=ones:5:float64
expect_contains "$ERR" "type placeholder T is float32 (from x) but y is an array of float64"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=ones:5:float32 --in y=ones:5:float32 --axis 1
expect_contains "$ERR" "--axis is for reduction kernels; kernel saxpy is elementwise"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=ones:5:float32 --in y=ones:5:float32 --grid 4
expect_contains "$ERR" "--grid is for raw kernels"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=ones:5:float32 --in y=ones:5:float32 --out q=q.npy
expect_contains "$ERR" "q is neither an output nor an array input of kernel saxpy"
expect_exit 2 kernc run "$SPEC" --kernel sum_of_squares --in x=ones:5:float32 --axis 1,x
expect_contains "$ERR" '--axis "1,x"'
expect_exit 2 kernc run "$SPEC" --kernel sum_of_squares --in x=ones:4x2:float32 --axis 2
expect_contains "$ERR" "axis 2 is out of range for the 2 dimension(s) of the inputs [4, 2]"
expect_exit 2 kernc run "$SPEC" --kernel sum_of_squares --in x=ones:4x2:float32 --axis 1,-1
expect_contains "$ERR" "axis -1 is repeated"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=1 --in x=ones:4:float32 --in y=ones:3:float32
expect_contains "$ERR" "kernel saxpy: shapes do not broadcast"
# Passed outputs take part in broadcasting (as in CuPy): a larger output is fine, a
# smaller one is not written whole.
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=1 --in x=ones:2x4:float32 --in y=ones:4:float32 --in z=ones:4:float32
expect_contains "$ERR" "output z has shape [4] but the arguments broadcast to [2, 4]"
expect_exit 2 kernc run "$SPEC" --kernel clip_add --in x=ones:4:int32 --in bias=ones:3:int32 --in lo=0 --in hi=1 \
  --in y=zeros:4:int32 --out y
expect_contains "$ERR" "expected NAME=FILE.npy"
expect_exit 2 kernc run "$SPEC" --kernel fill --in out=zeros:10:float32 --in value=2.5
expect_contains "$ERR" "fill(float* out, float value, long long n) needs --in NAME=SOURCE for n"
expect_exit 2 kernc run "$SPEC" --kernel fill --in out=2.5 --in value=zeros:10:float32 --in n=10
expect_contains "$ERR" 'parameter "float* out" is a pointer but out is a scalar'
expect_exit 2 kernc run "$SPEC" --kernel fill --arg zeros:10:float32 --arg 2.5
expect_contains "$ERR" "takes 3 argument(s), 2 given with --arg"
expect_exit 2 kernc run "$SPEC" --kernel fill --arg zeros:10:float32 --in value=2.5
expect_contains "$ERR" "not both"
expect_exit 2 kernc run "$SPEC" --kernel fill --in out=zeros:10:float32 --in value=2.5 --in n=10 --block 0
expect_contains "$ERR" '--block "0"'
expect_exit 2 kernc run "$SPEC" --kernel scaling --arg 1
expect_contains "$ERR" "name the function to launch with --function NAME (name expressions: axpby<float>"

# ---------------------------------------------------------------------------------------------
TEST "CuPy-style calls: positional --arg, views, --block, --global, no signatures; their errors exit 2 before the GPU"
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
# Positional arguments: the inputs, or the inputs then every output (CuPy's rule).
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32
expect_contains "$ERR" "kernel saxpy takes 3 argument(s) in order (its inputs), or 4 (inputs, then outputs); 2 given"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --in z=ones:5:float32
expect_contains "$ERR" "either by name (--in NAME=SOURCE) or in order (--arg SOURCE), not both"
# Errors the library's plan finds, without a GPU (exit 2, never 7).
expect_exit 2 kernc run "$PORTS" --kernel max_no_identity --arg zeros:0:float32
expect_contains "$ERR" "kernel max_no_identity: cannot reduce zero elements: the kernel has no identity"
expect_exit 2 kernc run "$PORTS" --kernel max_no_identity --arg random:3x0:float32 --axis 1
expect_contains "$ERR" "cannot reduce zero elements"
expect_exit 2 kernc run "$PORTS" --kernel raw_copy --arg arange:5:float32
expect_contains "$ERR" "kernel raw_copy: the loop size cannot be decided: every array passed is raw"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --size 5
expect_contains "$ERR" "kernel saxpy: size= cannot be used with non-raw array arguments (x, y passed)"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=ones:5:float32 --in y=ones:5:float64
expect_not_contains "$ERR" "saxpy: saxpy"
expect_not_contains "$ERR" "kernel saxpy (T a, T x, T y -> T z) with scalar float64, float32, float64 -> _: saxpy:"
# --block: elementwise (one extent, 1..1024) and raw kernels; not reductions.
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --block 2000
expect_contains "$ERR" "kernel saxpy: block_size 2000 is outside 1..1024 (threads per block)"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --block 32,2
expect_contains "$ERR" "an elementwise kernel's block is one extent"
expect_exit 2 kernc run "$SPEC" --kernel sum_of_squares --arg ones:5:float32 --block 64
expect_contains "$ERR" "--block is for elementwise and raw kernels; kernel sum_of_squares is reduction"
# --global: raw modules only, NAME=SOURCE.
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --global a=1
expect_contains "$ERR" "--global is for raw_module kernels; kernel saxpy is elementwise"
expect_exit 2 kernc run "$PORTS" --kernel scaled --function scale_add --global scale --arg ones:4:float32 --arg 4
expect_contains "$ERR" "--global \"scale\": expected NAME=SOURCE"
expect_exit 2 kernc run "$PORTS" --kernel scaled --function scale_add --global scale=2.5x --arg ones:4:float32 --arg 4
expect_contains "$ERR" "--global scale=2.5x: not a .npy file, a generator or a scalar literal"
# Views: NumPy's basic indexing, checked on the host; the source is named once.
expect_exit 2 kernc run "$PORTS" --kernel copy --arg 'arange:3x4:float32[3]'
expect_contains "$ERR" "--arg arange:3x4:float32[3]: index 3 is out of bounds for axis 0 with size 3"
expect_exit 2 kernc run "$PORTS" --kernel copy --arg 'arange:3x4:float32[0, 0, 0]'
expect_contains "$ERR" "too many indices for array: array is 2-dimensional, but 3 were indexed"
expect_exit 2 kernc run "$PORTS" --kernel copy --arg 'arange:3x4:float32[::0]'
expect_contains "$ERR" "slice step cannot be zero"
expect_exit 2 kernc run "$PORTS" --kernel copy --arg '2.5.T'
expect_contains "$ERR" "2.5 is a scalar: a view (.T) needs an array"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg 'ones:4x5:float32.T' --arg 'ones:5:float32[None, :]'
expect_contains "$ERR" "kernel saxpy: shapes do not broadcast: x has shape [5, 4] and y has shape [1, 5]"
# A spec kernel without "signatures" runs (exit 7 here: it got past every check to the GPU)
# and precompiling it says that nothing is prepared for it.
expect_exit 7 kernc run "$PORTS" --kernel copy --arg 'random:6x8:float64[::2, ::-1].T'
expect_exit 0 kernc precompile "$PORTS" --target sm_90 --quiet
expect_contains "$ERR" 'kernel copy lists no "signatures": nothing is precompiled for it'
expect_contains "$ERR" 'kernel max_no_identity lists no "signatures"'
expect_not_contains "$ERR" "kernel scaled lists"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --cooperative
expect_contains "$ERR" "--cooperative is for raw kernels; kernel saxpy is elementwise"

# ---------------------------------------------------------------------------------------------
TEST "an array larger than the host is a clear error before anything is allocated"
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=random:99999999x99999999:float32 --in y=ones:5:float32
expect_contains "$ERR" "a float32 array of shape (99999999, 99999999) needs "
expect_contains "$ERR" " TiB of host memory, more than half of this host's "
expect_not_contains "$ERR" "internal error"
expect_not_contains "$ERR" "bad_alloc"

TEST "a .npy input that cannot be read exits 4; a malformed one exits 2"
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
expect_exit 4 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=missing.npy --in y=ones:5:float32
expect_contains "$ERR" "missing.npy"
printf 'not a numpy file' >bad.npy
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=bad.npy --in y=ones:5:float32
expect_contains "$ERR" "bad.npy: not a usable .npy file"

TEST "without a usable driver, run exits 7 with one line saying why"
expect_exit 7 env KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$KERNC" run "$SPEC" "${saxpy_args[@]}" --out z=z.npy
expect_contains "$ERR" "kernc: run: no usable NVIDIA GPU/driver found: "
expect_contains "$ERR" "/nonexistent/libcuda.so.1"
expect_equal "$(wc -l <"$ERR")" 1 "lines on stderr"
expect_file_missing z.npy

# ---------------------------------------------------------------------------------------------
TEST "find out whether this machine has a GPU"
HAVE_GPU=0
expect_exit 0 kernc info --format json
if [[ $(json_eval "$OUT" 'd["cuda_driver"]["available"] and len(d["cuda_driver"]["gpus"]) > 0') == true ]]; then
  HAVE_GPU=1
  echo "    GPU found: $(json_eval "$OUT" 'd["cuda_driver"]["gpus"][0]["name"]'); running the GPU checks"
else
  echo "    no GPU: $(json_eval "$OUT" '(d["cuda_driver"].get("problem") or "no GPU listed").splitlines()[0]')"
fi

if [[ $HAVE_GPU -eq 0 ]]; then
  TEST "saxpy on a machine without a GPU exits 7"
  expect_exit 7 kernc run "$SPEC" "${saxpy_args[@]}"
  expect_contains "$ERR" "no usable NVIDIA GPU/driver found"
  expect_equal "$(wc -l <"$ERR")" 1 "lines on stderr"
  finish
fi

# ---------------------------------------------------------------------------------------------
# With a GPU.

TEST "a GPU ordinal that does not exist exits 7"
expect_exit 7 kernc run "$SPEC" "${saxpy_args[@]}" --device 99
expect_contains "$ERR" "no GPU with ordinal 99"

TEST "saxpy on arange and ones gives 2k + 1"
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=arange:5:float32 --in y=ones:5:float32 --print
expect_match "$OUT" '^kernel +saxpy \(elementwise\) on GPU 0: '
expect_match "$OUT" '^input +x = float32 \(5,\) arange:5:float32$'
expect_match "$OUT" '^compile +compiles: 1 in '
expect_match "$OUT" '^output +z = float32 \(5,\) +min 1\.0 max 9\.0 mean 5\.0 '
expect_contains "$OUT" "[1.0, 3.0, 5.0, 7.0, 9.0]"
# The same program again: a disk cache hit in a new process.
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=arange:5:float32 --in y=ones:5:float32
expect_match "$OUT" '^compile +compiles: 0, 1 disk cache hit'

TEST "run --format json is one JSON document"
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=arange:5:float32 --in y=ones:5:float32 \
  --repeat 3 --format json
expect_json "$OUT" '[d["kernel"]["name"], d["kernel"]["kind"]]' '["saxpy", "elementwise"]'
expect_json "$OUT" '[i["name"] for i in d["inputs"]]' '["a", "x", "y"]'
expect_json "$OUT" '[d["first_call"]["compiles"], d["first_call"]["modules_loaded"]]' '[1, 1]'  # a fresh cache
expect_json "$OUT" 'd["binaries"][0]["target"] == d["device"]["arch"]' true
expect_json "$OUT" 'd["time"]["launches"]' 3
expect_json "$OUT" '[d["outputs"][0]["name"], d["outputs"][0]["dtype"], d["outputs"][0]["shape"]]' '["z", "float32", [5]]'
expect_json "$OUT" '"min 1.0 max 9.0" in d["outputs"][0]["summary"]' true

TEST "random sources print their seed, and the seed makes the same data"
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --in x=random:1000:float32
seed_source=$(sed -nE 's/^input +x = float32 \(1000,\) (random:1000:float32:[0-9]+)$/\1/p' "$OUT" | head -n 1)
[[ -n $seed_source ]] || test_failed "no seeded source printed"
first=$(grep '^output' "$OUT")
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --in "x=$seed_source"
expect_equal "$(grep '^output' "$OUT")" "$first" "the output for $seed_source"

TEST "fill, a raw kernel, by parameter name and in order"
expect_exit 0 kernc run "$SPEC" --kernel fill --in out=zeros:10:float32 --in value=2.5 --in n=10 --print
expect_match "$OUT" '^input +value = 2\.5 \(float64 scalar\) as float32$'
expect_contains "$OUT" "[2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5]"
expect_exit 0 kernc run "$SPEC" --kernel fill --arg zeros:10:float32 --arg=-1.5 --arg 4 --print
expect_contains "$OUT" "[-1.5, -1.5, -1.5, -1.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]"

TEST "--repeat prints the kernel time and the effective bandwidth"
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=random:1000000:float32 \
  --in y=random:1000000:float32 --repeat 5
expect_match "$OUT" '^time +median [0-9.]+ (us|ms), min [0-9.]+ (us|ms) over 5 launch\(es\) after 1 warm-up; [0-9.]+ GB/s effective \(12\.00 MB '

if [[ -z $NUMPY_PYTHON ]]; then
  echo "    (skipped the comparisons with NumPy: no python3 with numpy; Debian: apt-get install python3-numpy)"
  finish
fi

TEST "saxpy on .npy inputs written by NumPy matches NumPy"
np_check 'rng = np.random.default_rng(7)
np.save("x.npy", rng.uniform(-1, 1, 100001).astype(np.float32))
np.save("y.npy", rng.uniform(-1, 1, 100001).astype(np.float32))'
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=x.npy --in y=y.npy --out z=z.npy
expect_match "$OUT" '^output +z = float32 \(100001,\) written to z\.npy$'
np_check 'x, y, z = np.load("x.npy"), np.load("y.npy"), np.load("z.npy")
assert z.dtype == np.float32 and z.shape == (100001,), (z.dtype, z.shape)
err = np.max(np.abs(z.astype(np.float64) - (2.0 * x.astype(np.float64) + y)))
assert err <= 1e-6, f"max error {err}"'

TEST "saxpy on a Fortran-order .npy matches NumPy"
np_check 'np.save("x.npy", np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4) / 7))'
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=-3 --in x=x.npy --in y=ones:3x4:float64 --out z=z.npy
expect_contains "$OUT" "(Fortran order, kept as a view)"
expect_contains "$OUT" "float64 (3, 4) strides (8, 24) x.npy"
np_check 'x, z = np.load("x.npy"), np.load("z.npy")
assert z.shape == (3, 4) and np.allclose(z, -3 * x + 1, rtol=0, atol=1e-12), z'

TEST "sum_of_squares over axis 1 of random:64x1000:float32 matches NumPy"
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --in x=random:64x1000:float32 --axis 1 --out x=x.npy \
  --out y=y.npy
np_check 'x, y = np.load("x.npy"), np.load("y.npy")
assert x.shape == (64, 1000) and x.dtype == np.float32 and -1 <= x.min() and x.max() < 1, (x.shape, x.dtype)
assert y.shape == (64,) and y.dtype == np.float32, (y.shape, y.dtype)
ref = (x.astype(np.float64) ** 2).sum(axis=1)
assert np.allclose(y, ref, rtol=1e-5, atol=0), np.max(np.abs(y - ref) / ref)'
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --in x=x.npy --axis 1 --keepdims --out y=y.npy
np_check 'y = np.load("y.npy")
assert y.shape == (64, 1), y.shape'

TEST "energy of a complex64 .npy input matches NumPy"
np_check 'rng = np.random.default_rng(3)
np.save("c.npy", (rng.uniform(-1, 1, 5000) + 1j * rng.uniform(-1, 1, 5000)).astype(np.complex64))'
expect_exit 0 kernc run "$SPEC" --kernel energy --in x=c.npy --out y=e.npy
np_check 'c, e = np.load("c.npy"), np.load("e.npy")
assert e.shape == () and e.dtype == np.float32, (e.shape, e.dtype)
ref = np.sum(np.abs(c.astype(np.complex128)) ** 2)
assert abs(e - ref) <= 1e-4 * ref, (e, ref)'

# m.npy (64 x 96), row.npy (96) and f.npy (96 x 64, Fortran order) of random float32, in
# the current test's directory.
save_view_data() {
  np_check 'rng = np.random.default_rng(11)
np.save("m.npy", rng.uniform(-1, 1, (64, 96)).astype(np.float32))
np.save("row.npy", rng.uniform(-1, 1, 96).astype(np.float32))
np.save("f.npy", np.asfortranarray(rng.uniform(-1, 1, (96, 64)).astype(np.float32)))'
}

TEST "strided, reversed, transposed and broadcast views match NumPy's (saxpy, positional --arg)"
save_view_data
expect_exit 0 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg 'm.npy[::-1, ::2]' --arg 'row.npy[None, ::2]' --out z=z.npy
expect_match "$OUT" '^input +x = float32 \(64, 48\) strides \(-384, 8\) m\.npy\[::-1, ::2\]$'
expect_match "$OUT" '^input +y = float32 \(1, 48\) strides \(0, 8\) row\.npy\[None, ::2\]$'
np_check 'm, row, z = np.load("m.npy"), np.load("row.npy"), np.load("z.npy")
ref = 2.0 * m[::-1, ::2].astype(np.float64) + row[None, ::2]
assert z.shape == ref.shape, (z.shape, ref.shape)
assert np.max(np.abs(z - ref)) <= 1e-6, np.max(np.abs(z - ref))'
# A transposed C-order array plus a Fortran-ordered file: both column-major, as in NumPy.
expect_exit 0 kernc run "$SPEC" --kernel saxpy --arg=-0.5 --arg 'm.npy.T' --arg f.npy --out z=z.npy --block 96
np_check 'm, f, z = np.load("m.npy"), np.load("f.npy"), np.load("z.npy")
ref = -0.5 * m.T.astype(np.float64) + f
assert z.shape == (96, 64) and np.max(np.abs(z - ref)) <= 1e-6, np.max(np.abs(z - ref))'
# A given output may be a view too: z written through a transposed, strided view.
expect_exit 0 kernc run "$SPEC" --kernel saxpy --arg 1.0 --arg 'm.npy[:, 1::2]' --arg 'row.npy[1::2]' \
  --arg 'zeros:48x64:float32.T' --out z=z.npy
np_check 'm, row, z = np.load("m.npy"), np.load("row.npy"), np.load("z.npy")
ref = m[:, 1::2].astype(np.float64) + row[1::2]
assert z.shape == (64, 48) and np.max(np.abs(z - ref)) <= 1e-6, np.max(np.abs(z - ref))'

TEST "a reduction over a strided, transposed view matches NumPy"
save_view_data
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --arg 'm.npy[:, 1::3].T' --axis 1 --out y=y.npy
np_check 'm, y = np.load("m.npy"), np.load("y.npy")
ref = (m[:, 1::3].T.astype(np.float64) ** 2).sum(axis=1)
assert y.shape == (32,) and np.allclose(y, ref, rtol=1e-5, atol=0), np.max(np.abs(y - ref))'
expect_exit 0 kernc run "$PORTS" --kernel max_no_identity --arg 'm.npy[::-2, 3:90]' --axis 0 --out y=y.npy
np_check 'm, y = np.load("m.npy"), np.load("y.npy")
assert np.array_equal(y, m[::-2, 3:90].max(axis=0)), "max over axis 0"'

TEST "every dtype through a strided, transposed view: copy (a kernel without signatures) equals NumPy's view"
for dtype in bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 complex64 complex128; do
  np_check 'dtype = np.dtype(sys.argv[1])
rng = np.random.default_rng(5)
a = rng.uniform(-100, 100, (7, 9)) + (1j * rng.uniform(-100, 100, (7, 9)) if dtype.kind == "c" else 0)
np.save("a.npy", (a > 0 if dtype.kind == "b" else a).astype(dtype))' "$dtype"
  expect_exit 0 kernc run "$PORTS" --kernel copy --arg 'a.npy[::-2, 1:].T' --out y=y.npy
  np_check 'a, y = np.load("a.npy"), np.load("y.npy")
ref = a[::-2, 1:].T
assert y.dtype == a.dtype and y.shape == ref.shape, (y.dtype, y.shape)
assert np.array_equal(y, ref), (sys.argv[1], y, ref)' "$dtype"
done

TEST "--block sets an elementwise kernel's threads per block; the result is the same"
save_view_data
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=3.0 --in x=m.npy --in 'y=row.npy[None, :]' --block 1000 \
  --out z=z.npy
np_check 'm, row, z = np.load("m.npy"), np.load("row.npy"), np.load("z.npy")
assert np.max(np.abs(z - (3.0 * m.astype(np.float64) + row))) <= 1e-6'

TEST "--global sets a raw module's __constant__ and __device__ globals before the launch"
save_view_data
expect_exit 0 kernc run "$PORTS" --kernel scaled --function scale_add --global scale=2.5:float32 \
  --global 'offset=arange:3:int32' --arg f.npy.T --arg 6144 --out 0=s.npy
expect_match "$OUT" '^global +scale = 2\.5 \(float32 scalar\) \(4 byte\(s\) at 0x[0-9a-f]+\)$'
np_check 'f, s = np.load("f.npy"), np.load("s.npy")
# f.T is C-contiguous (the file is Fortran-ordered): the kernel sees its elements in order.
flat = f.T.ravel()
ref = (flat * np.float32(2.5) + np.arange(flat.size) % 3).reshape(f.T.shape)
assert np.max(np.abs(s - ref)) <= 1e-5, np.max(np.abs(s - ref))'
expect_exit 2 kernc run "$PORTS" --kernel scaled --function scale_add --global scale=2.5 --arg ones:4:float32 --arg 4
expect_contains "$ERR" "--global scale: the global has 4 byte(s) but 2.5 (float64 scalar) has 8 (give a typed scalar"
expect_exit 6 kernc run "$PORTS" --kernel scaled --function scale_add --global nothing=1:int32 --arg ones:4:float32 --arg 4
expect_contains "$ERR" "nothing"

TEST "--cooperative launches through cuLaunchCooperativeKernel: grid.sync() orders the whole grid"
np_check 'np.save("r.npy", np.random.default_rng(9).uniform(-1, 1, 100000).astype(np.float32))'
expect_exit 0 kernc run "$PORTS" --kernel rotate --cooperative --grid 64 --arg r.npy --arg zeros:100000:float32 \
  --arg 100000 --out 0=rotated.npy
np_check 'r, out = np.load("r.npy"), np.load("rotated.npy")
assert np.array_equal(out, np.roll(r, -1)), "not numpy.roll(x, -1)"'
expect_exit 3 kernc run "$PORTS" --kernel rotate --cooperative --grid 10000000 --arg r.npy --arg zeros:100000:float32 \
  --arg 100000
expect_contains "$ERR" "cooperative"

finish
