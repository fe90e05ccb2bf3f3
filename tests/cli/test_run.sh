# Black-box tests of `kernc run`: the command line is checked before the GPU is touched
# (usage errors exit 2, unreadable files 4, on any machine); without a usable GPU the
# command exits 7 (with KERNC_RUNTIME=cpu it runs on the host's cores, checked on every
# machine); with one (`kernc info` lists a GPU) the results are checked against
# NumPy where a python3 with numpy is found, and against values known in advance otherwise.
# Usage: bash test_run.sh PATH_TO_KERNC [PROJECT_SOURCE_DIR]

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

SPEC="${SOURCE_DIR:-$(dirname "${BASH_SOURCE[0]}")/../..}/examples/kernels.json"
SPEC=$(realpath -- "$SPEC")
PORTS=$(realpath -- "$(dirname "$SPEC")/../tests/cli/data/cupy_ports.json")

saxpy_args=(--kernel saxpy --in a=2.0 --in x=random:1000:float32 --in y=random:1000:float32)

# tally.json, in the current directory: a raw module whose kernel writes __device__ globals
# (hits[k]: how many x[i] & 3 == k; total: the sum of x) and has a __constant__ one; and a
# raw kernel add_one(in, out, n) to call in place.
save_tally_spec() {
  cat >tally.json <<'JSON'
{"kernels": [{"kind": "raw_module", "name": "tally",
  "code": "__device__ unsigned int hits[4];\n__device__ float total;\n__constant__ double weights[2][3];\nextern \"C\" __global__ void tally(const int* x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) {\n    atomicAdd(&hits[x[i] & 3], 1u);\n    atomicAdd(&total, (float)x[i]);\n  }\n  if (n < 0) total = (float)weights[0][0];  // never: keeps weights referenced\n}\n"},
 {"kind": "raw", "name": "add_one",
  "code": "extern \"C\" __global__ void add_one(const float* in, float* out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = in[i] + 1.0f;\n}\n"}]}
JSON
}

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
expect_contains "$ERR" "kernel saxpy: axes= is for reduction kernels; this is an elementwise kernel"
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
expect_contains "$ERR" "kernel sum_of_squares: block_size= is for elementwise kernels"
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
for option in "--cluster 2" "--pdl" "--priority -1"; do
  expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 $option
  expect_contains "$ERR" "${option%% *} is for raw kernels; kernel saxpy is elementwise"
done
expect_exit 2 kernc run "$SPEC" --kernel fill --in out=zeros:8:float32 --in value=1 --in n=8 --cluster 2,0
expect_contains "$ERR" "--cluster \"2,0\": expected 1 to 3 positive integers"

# ---------------------------------------------------------------------------------------------
TEST "--axis '()' reduces no axis; usage errors about it exit 2 before the GPU"
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
# Accepted: every check passes and the run stops at the GPU (exit 7).
expect_exit 7 kernc run "$SPEC" --kernel sum_of_squares --arg random:4x5:float32 --axis '()'
expect_exit 7 kernc run "$SPEC" --kernel sum_of_squares --arg random:4x5:float32 --axis '( )' --keepdims
# The library plans the call: a passed output must have the input's shape.
expect_exit 2 kernc run "$SPEC" --kernel sum_of_squares --arg random:4x5:float32 --arg zeros:4:float32 --axis '()'
expect_contains "$ERR" "kernel sum_of_squares: output y has shape [4], the reduction gives [4, 5]"
expect_exit 2 kernc run "$SPEC" --kernel sum_of_squares --arg random:4x5:float32 --axis None
expect_contains "$ERR" "--axis None: NumPy's axis=None, every axis, is the default: leave --axis out; --axis '()' reduces no axis"
expect_exit 2 kernc run "$SPEC" --kernel sum_of_squares --arg random:4x5:float32 --axis '(0)'
expect_contains "$ERR" "expected axes joined by commas, e.g. 1 or 0,-1, or '()' for none"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --axis '()'
expect_contains "$ERR" "kernel saxpy: axes= is for reduction kernels; this is an elementwise kernel"

TEST "@NAME shares an argument's device buffer (in-place calls); its errors exit 2 before the GPU"
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
# Accepted: CuPy's saxpy(a, x, y, y), by position and by name, with a view, and a chain.
expect_exit 7 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --arg @y
expect_exit 7 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=ones:5:float32 --in y=@x --in z=@y
expect_exit 7 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --arg '@x[::-1]'
expect_exit 7 kernc run "$SPEC" --kernel sum_of_squares --arg ones:5:float32 --arg @x --axis '()'
expect_exit 7 kernc run "$SPEC" --kernel fill --arg zeros:10:float32 --arg 2.5 --arg 10
save_tally_spec
expect_exit 7 kernc run tally.json --kernel add_one --arg ones:8:float32 --arg @0 --arg 8
expect_exit 7 kernc run tally.json --kernel add_one --in in=ones:8:float32 --in out=@in --in n=8
# The errors name the argument and what is wrong with it.
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --arg @q
expect_contains "$ERR" "--arg @q: kernel saxpy (T a, T x, T y -> T z) has no argument named q"
expect_not_contains "$ERR" "0-based position"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --arg @a
expect_contains "$ERR" "--arg @a: a is a scalar (2.0 (float64 scalar)); only an array argument's buffer can be shared"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=ones:5:float32 --in y=ones:5:float32 --in z=@z
expect_contains "$ERR" "--in z=@z: an argument cannot share its own buffer: @NAME names another argument"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=@y --in y=@x
expect_contains "$ERR" "the @NAME sources refer to each other in a circle and none has data"
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --arg @
expect_contains "$ERR" '--arg @: "@": expected @NAME'
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:5:float32 --arg ones:5:float32 --arg '@x[5]'
expect_contains "$ERR" "--arg @x[5]: index 5 is out of bounds for axis 0 with size 5"
# Shared arguments take part in the library's plan like any other: z is x's (4,) buffer.
expect_exit 2 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg ones:4:float32 --arg ones:2x4:float32 --arg @x
expect_contains "$ERR" "output z has shape [4] but the arguments broadcast to [2, 4]"
# Raw kernels: by name or 0-based position; a scalar parameter cannot take a buffer.
expect_exit 2 kernc run "$SPEC" --kernel fill --arg zeros:10:float32 --arg 2.5 --arg @3
expect_contains "$ERR" "--arg @3: fill(float* out, float value, long long n) has no argument named 3 (name one, or give its 0-based position)"
expect_exit 2 kernc run "$SPEC" --kernel fill --in out=zeros:10:float32 --in value=@out --in n=10
expect_contains "$ERR" 'parameter "float value" is a scalar but value is an array'
expect_exit 2 kernc run "$SPEC" --kernel fill --in out=@n --in value=2.5 --in n=10
expect_contains "$ERR" "--in out=@n: n is a scalar (10 (int64 scalar))"
# A global takes a value, not a buffer.
expect_exit 2 kernc run "$PORTS" --kernel scaled --function scale_add --global scale=@x --arg ones:4:float32 --arg 4
expect_contains "$ERR" "--global scale=@x: a global takes a value; @NAME (another argument's device buffer) is for kernel arguments"

TEST "--read-global NAME[:DTYPE[:SHAPE]][=FILE.npy]: its errors exit 2 before the GPU"
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
scale_add=(--kernel scaled --function scale_add --arg ones:4:float32 --arg 4)
# Accepted: the dtype given, or taken from --global (and the shape with it); a C++ name with ::.
expect_exit 7 kernc run "$PORTS" "${scale_add[@]}" --read-global offset:int32 --read-global 'scale:float32:()=s.npy'
expect_exit 7 kernc run "$PORTS" "${scale_add[@]}" --global scale=2.5:float32 --read-global scale \
  --read-global 'ns::table:float64:2x3'
expect_exit 2 kernc run "$PORTS" "${scale_add[@]}" --read-global offset
expect_contains "$ERR" "--read-global offset: give the global's dtype, e.g. --read-global offset:float32 (no --global offset=SOURCE gives it)"
expect_exit 2 kernc run "$PORTS" "${scale_add[@]}" --read-global offset=o.npy
expect_contains "$ERR" "give the global's dtype"
expect_exit 2 kernc run "$PORTS" "${scale_add[@]}" --read-global offset:int33
expect_contains "$ERR" '--read-global offset:int33: unknown dtype "int33"'
expect_exit 2 kernc run "$PORTS" "${scale_add[@]}" --read-global offset:int32:3y
expect_contains "$ERR" "--read-global offset:int32:3y: shape \"3y\": expected extents joined by x"
expect_exit 2 kernc run "$PORTS" "${scale_add[@]}" --read-global offset:int32:3:4
expect_contains "$ERR" "--read-global \"offset:int32:3:4\": expected NAME[:DTYPE[:SHAPE]][=FILE.npy]"
expect_exit 2 kernc run "$PORTS" "${scale_add[@]}" --read-global offset:int32=
expect_contains "$ERR" "no file after the ="
expect_exit 2 kernc run "$PORTS" "${scale_add[@]}" --read-global :int32
expect_contains "$ERR" "no global named"
expect_exit 2 kernc run "$PORTS" "${scale_add[@]}" --read-global offset:int32 --read-global offset:uint32
expect_contains "$ERR" "--read-global offset is given twice"
expect_exit 2 kernc run "$SPEC" --kernel fill --arg zeros:10:float32 --arg 2.5 --arg 10 --read-global x:int32
expect_contains "$ERR" "--read-global is for raw_module kernels; kernel fill is raw"

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

# twice.json, in the current directory: a template whose parameter type is a template
# parameter, instantiated with a pointer (CuPy's name-expression kernels pass the array).
save_twice_spec() {
  cat >twice.json <<'JSON'
{"kernels": [{"kind": "raw_module", "name": "twice", "name_expressions": ["twice<float *>"],
  "code": "template <typename T>\n__global__ void twice(T p, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) p[i] = 2 * p[i];\n}\n"}]}
JSON
}

TEST "CuPy verbatim: T p of twice<float *> takes an array; an integer out of its parameter's range exits 2"
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
save_twice_spec
# Read from the instance (T is float *), not from the template's text: past the checks, to the GPU.
expect_exit 7 kernc run twice.json --kernel twice --function 'twice<float *>' --arg arange:5:float32 --arg 5 \
  --grid 1 --block 32
expect_contains "$ERR" "no usable NVIDIA GPU/driver found"
expect_exit 2 kernc run twice.json --kernel twice --function 'twice<float *>' --arg 2.0 --arg 5 --grid 1 --block 32
expect_contains "$ERR" "is a pointer"
# NEP 50, as CuPy 14: never a silent wrap, whether the type is a placeholder's or declared.
expect_exit 2 kernc run "$SPEC" --kernel saxpy --in a=300 --in x=ones:5:int8 --in y=ones:5:int8
expect_contains "$ERR" "the integer 300 is out of bounds for int8 parameter"
expect_exit 2 kernc run twice.json --kernel twice --function 'twice<float *>' --arg arange:5:float32 \
  --arg 4294967296 --grid 1 --block 32
expect_contains "$ERR" "out of bounds for parameter \"int n\" (int32)"

TEST "without a usable driver, run exits 7 with one line saying why"
expect_exit 7 env KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$KERNC" run "$SPEC" "${saxpy_args[@]}" --out z=z.npy
expect_contains "$ERR" "kernc: run: no usable NVIDIA GPU/driver found: "
expect_contains "$ERR" "/nonexistent/libcuda.so.1"
expect_equal "$(wc -l <"$ERR")" 1 "lines on stderr"
expect_file_missing z.npy

# ---------------------------------------------------------------------------------------------
# The host backend (KERNC_RUNTIME=cpu: the system C++ compiler and the host's cores) needs no
# GPU, so these run on every machine. Each kind of kernel of examples/kernels.json runs, and
# what it prints is checked against values computed here, independently: awk for small
# arange inputs, Python's standard library (no NumPy needed) for random ones read from .npy.

# awk_floats N EXPR: "[v_0, v_1, ...]" as --print shows a 1-D float array, v_k = EXPR of k.
awk_floats() {
  awk -v n="$1" 'function show(v, s) { s = sprintf("%.7g", v); if (s !~ /[.e]/) s = s ".0"; return s }
    BEGIN { printf "["; for (k = 0; k < n; k++) printf "%s%s", (k ? ", " : ""), show('"$2"'); print "]" }'
}
# awk_ints N EXPR: the same for an integer array ([2, 3, 7]).
awk_ints() {
  awk -v n="$1" 'BEGIN { printf "["; for (k = 0; k < n; k++) printf "%s%d", (k ? ", " : ""), '"$2"'; print "]" }'
}
# npy_check EXPR FILE...: evaluates EXPR in Python with the .npy files read into lists
# (f0, f1, ...) by the standard library; prints "ok" or what differs.
npy_check() {
  python3 - "$@" <<'PY'
import array, ast, math, sys
def load(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", path
    length = int.from_bytes(data[8:10], "little") if data[6] == 1 else int.from_bytes(data[8:12], "little")
    start = 10 if data[6] == 1 else 12
    header = ast.literal_eval(data[start:start + length].decode())
    code = {"<f4": "f", "<f8": "d", "<i4": "i", "|i1": "b", "<i8": "q"}[header["descr"]]
    values = array.array(code)
    values.frombytes(data[start + length:])
    return list(values)
env = {"math": math}
for k, path in enumerate(sys.argv[2:]):
    env["f%d" % k] = load(path)
print(eval(sys.argv[1], env))
PY
}

TEST "host backend: saxpy (elementwise) runs without a GPU and gives a * x + y"
export KERNC_RUNTIME=cpu KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.5 --in x=arange:7:float32 --in y=ones:7:float32 --print
expect_match "$OUT" '^kernel +saxpy \(elementwise\) on '
expect_match "$OUT" '^output +z = float32 \(7,\) '
expect_contains "$OUT" "$(awk_floats 7 '2.5 * k + 1')"
# Random data, read back from .npy and checked in Python (float32 rounding, perhaps one fma).
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=-1.75 --in x=random:1001:float32 --in y=random:1001:float32 \
  --out x=x.npy --out y=y.npy --out z=z.npy
expect_equal "$(npy_check '"ok" if len(f2) == 1001 and all(abs(z - (-1.75 * x + y)) <= 1e-6 * (1.75 * abs(x) + abs(y)) for x, y, z in zip(f0, f1, f2)) else "differ"' x.npy y.npy z.npy)" ok "z against -1.75 * x + y"

TEST "host backend: clip_add (raw input, scalars) clamps x + bias[i % bias.size()]"
export KERNC_RUNTIME=cpu KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
expect_exit 0 kernc run "$SPEC" --kernel clip_add --in x=arange:10:int32 --in bias=arange:3:int32 --in lo=2.0 \
  --in hi=7.0 --print
expect_contains "$OUT" "$(awk_ints 10 'k + k % 3 < 2 ? 2 : (k + k % 3 > 7 ? 7 : k + k % 3)')"
expect_exit 0 kernc run "$SPEC" --kernel clip_add --in x=arange:6:float32 --in bias=ones:4:float32 --in lo=0.5 \
  --in hi=4.5 --print
expect_contains "$OUT" "$(awk_floats 6 'k + 1 > 4.5 ? 4.5 : k + 1')"

TEST "host backend: sum_of_squares (reduction) over --axis 1, --axis 0 and everything"
export KERNC_RUNTIME=cpu KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
# x is arange:3x4, x[r, c] = 4r + c.
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --arg arange:3x4:float32 --axis 1 --print
expect_match "$OUT" '^output +y = float32 \(3,\) '
expect_contains "$OUT" "$(awk_floats 3 '(4*k)^2 + (4*k+1)^2 + (4*k+2)^2 + (4*k+3)^2')"
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --arg arange:3x4:float32 --axis 0 --print
expect_match "$OUT" '^output +y = float32 \(4,\) '
expect_contains "$OUT" "$(awk_floats 4 'k^2 + (k+4)^2 + (k+8)^2')"
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --arg arange:3x4:float32 --axis 0 --keepdims --format json
expect_json "$OUT" 'd["outputs"][0]["shape"]' '[1, 4]'
# The whole array of random data (sizes past one block), against a float64 sum in Python.
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --in x=random:100003:float64 --out x=x.npy --out y=y.npy
expect_equal "$(npy_check '"ok" if abs(f1[0] - math.fsum(v * v for v in f0)) <= 1e-12 * math.fsum(v * v for v in f0) else "differ"' x.npy y.npy)" ok "sum of squares"

TEST "host backend: fill (raw kernel) by name and by position"
export KERNC_RUNTIME=cpu KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
expect_exit 0 kernc run "$SPEC" --kernel fill --in out=zeros:10:float32 --in value=2.5 --in n=10 --print
expect_contains "$OUT" "$(awk_floats 10 '2.5')"
expect_exit 0 kernc run "$SPEC" --kernel fill --arg zeros:10:float32 --arg=-1.5 --arg 4 --print
expect_contains "$OUT" "$(awk_floats 10 'k < 4 ? -1.5 : 0')"

TEST "host backend: scaling (raw_module) templates by --function: axpby<float> and block_sum<float, 256>"
export KERNC_RUNTIME=cpu KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
expect_exit 0 kernc run "$SPEC" --kernel scaling --function 'axpby<float>' --arg 2.0 --arg arange:9:float32 \
  --arg 0.5 --arg ones:9:float32 --arg 9 --grid 2 --block 8 --print
expect_match "$OUT" '^output +y = float32 \(9,\) '
expect_contains "$OUT" "$(awk_floats 9 '2 * k + 0.5')"
# Shared memory and __syncthreads() over 256 threads a block: one partial sum per block.
expect_exit 0 kernc run "$SPEC" --kernel scaling --function 'block_sum<float, 256>' --arg arange:1000:float32 \
  --arg zeros:4:float32 --arg 1000 --grid 4 --block 256 --print
expect_contains "$OUT" "$(awk_floats 4 '(256*k + (k < 3 ? 256*k + 255 : 999)) * (k < 3 ? 256 : 232) / 2')"

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

TEST "KERNC_COMPILE_WORKERS=2: run compiles in a worker process (kernc itself) and gives the same answer"
KERNC_CACHE_DIR="$TEST_DIR/workers-cache" KERNC_COMPILE_WORKERS=2 expect_exit 0 kernc --log-level info run "$SPEC" \
  --kernel saxpy --in a=2.0 --in x=arange:5:float32 --in y=ones:5:float32 --print
expect_match "$OUT" '^compile +compiles: 1 in '
expect_contains "$OUT" "[1.0, 3.0, 5.0, 7.0, 9.0]"
expect_contains "$ERR" "started compile worker process"
# The worker's binary has the key and bytes of an in-process compile: the cache it filled
# serves a run without workers.
KERNC_CACHE_DIR="$TEST_DIR/workers-cache" expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 \
  --in x=arange:5:float32 --in y=ones:5:float32
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

TEST "CuPy verbatim: twice<float *> doubles the array passed for its T p"
save_twice_spec
expect_exit 0 kernc run twice.json --kernel twice --function 'twice<float *>' --arg arange:5:float32 --arg 5 \
  --grid 1 --block 32 --print
expect_contains "$OUT" "[0.0, 2.0, 4.0, 6.0, 8.0]"

TEST "--repeat prints the kernel time and the effective bandwidth"
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=random:1000000:float32 \
  --in y=random:1000000:float32 --repeat 5
expect_match "$OUT" '^time +median [0-9.]+ (us|ms), min [0-9.]+ (us|ms) over 5 launch\(es\) after 1 warm-up; [0-9.]+ GB/s effective \(12\.00 MB '

TEST "--axis '()': each output is post_map(map(x)) of one element"
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --arg arange:2x3:float32 --axis '()' --print
expect_match "$OUT" '^output +y = float32 \(2, 3\) '
expect_contains "$OUT" "[[0.0, 1.0, 4.0],"
expect_contains "$OUT" " [9.0, 16.0, 25.0]]"
expect_exit 0 kernc run "$SPEC" --kernel l2_norm --arg 'arange:5:float32[::-1]' --axis '()' --print
expect_contains "$OUT" "[4.0, 3.0, 2.0, 1.0, 0.0]"
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --arg arange:2x3:float32 --axis '()' --keepdims --format json
expect_json "$OUT" 'd["outputs"][0]["shape"]' '[2, 3]'

TEST "@NAME: an output that is an input is written in place (saxpy(a, x, y, y)), and uploaded once"
expect_exit 0 kernc run "$SPEC" --kernel saxpy --arg 2.0 --arg arange:5:float32 --arg ones:5:float32 --arg @y --print
expect_match "$OUT" '^output +z = float32 \(5,\) @y \(the device buffer of y\)$'
expect_match "$OUT" '^setup +40 B uploaded'  # x and y; z is y's buffer
expect_match "$OUT" '^output +z = float32 \(5,\) +min 1\.0 max 9\.0 '
expect_contains "$OUT" "[1.0, 3.0, 5.0, 7.0, 9.0]"
# y, shown with --out, is the same buffer after the call.
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=arange:5:float32 --in y=ones:5:float32 --in z=@y \
  --out y=y.npy --format json
expect_json "$OUT" '[i.get("shares") for i in d["outputs"] if "source" in i]' '["y"]'
expect_json "$OUT" '[o["name"] for o in d["outputs"] if "file" in o]' '["y"]'
# A raw kernel's arguments, by position: add_one(in, out=@0) adds one in place.
save_tally_spec
expect_exit 0 kernc run tally.json --kernel add_one --arg arange:6:float32 --arg @0 --arg 6 --print
expect_match "$OUT" '^input +out = float32 \(6,\) @0 \(the device buffer of in\)$'
expect_match "$OUT" '^output +out = float32 \(6,\) +min 1\.0 max 6\.0 '
expect_contains "$OUT" "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]"

TEST "--read-global shows a global after the launch, with --global's dtype and shape by default"
save_tally_spec
expect_exit 0 kernc run tally.json --kernel tally --function tally --arg arange:10:int32 --arg 10 \
  --global 'weights=arange:2x3:float64' --read-global hits:uint32 --read-global weights --print
expect_match "$OUT" '^global +hits = uint32 \(4,\) +min 2 max 3 '
expect_contains "$OUT" "[3, 3, 2, 2]"
expect_match "$OUT" '^global +weights = float64 \(2, 3\) '
expect_contains "$OUT" "[[0.0, 1.0, 2.0],"
expect_exit 0 kernc run tally.json --kernel tally --function tally --arg arange:10:int32 --arg 10 \
  --read-global 'total:float32:()' --format json
expect_json "$OUT" '[d["read_globals"][0]["name"], d["read_globals"][0]["shape"], d["read_globals"][0]["summary"][:12]]' \
  '["total", [], "min 45.0 max"]'
# The byte size is known on the GPU only: a mismatch is still a usage error (exit 2).
expect_exit 2 kernc run tally.json --kernel tally --function tally --arg arange:10:int32 --arg 10 \
  --read-global hits:uint32:3=h.npy
expect_contains "$ERR" "--read-global hits: the global has 16 byte(s), not the 12 of a uint32 array of shape (3,)"
expect_file_missing h.npy
expect_exit 2 kernc run tally.json --kernel tally --function tally --arg arange:10:int32 --arg 10 \
  --read-global total:float64
expect_contains "$ERR" "--read-global total: the global has 4 byte(s), not a whole number of float64 elements (8 byte(s) each)"
expect_exit 6 kernc run tally.json --kernel tally --function tally --arg arange:10:int32 --arg 10 \
  --read-global nothing:int32
expect_contains "$ERR" "nothing"

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

TEST "--axis '()' over random data and strided views matches NumPy (sum_of_squares, l2_norm)"
save_view_data
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --arg m.npy --axis '()' --out y=y.npy
np_check 'm, y = np.load("m.npy"), np.load("y.npy")
assert y.shape == m.shape and y.dtype == np.float32, (y.shape, y.dtype)
assert np.allclose(y, m * m, rtol=1.2e-7, atol=0), np.max(np.abs(y - m * m))'
expect_exit 0 kernc run "$SPEC" --kernel l2_norm --arg 'm.npy[::-3, 1::2].T' --axis '()' --keepdims --out y=y.npy
np_check 'm, y = np.load("m.npy"), np.load("y.npy")
x = m[::-3, 1::2].T.astype(np.float64)
assert y.shape == x.shape and y.dtype == np.float64, (y.shape, y.dtype)
assert np.allclose(y, np.sqrt(x * x), rtol=1e-15, atol=0), np.max(np.abs(y - np.abs(x)))'
# Rows a stride apart, each contiguous: the generic layout's columns kernel (NOTE [ reduction
# columns ]) with no reduced axis.
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --arg 'm.npy[::2]' --axis '()' --out y=y.npy
np_check 'm, y = np.load("m.npy"), np.load("y.npy")
x = m[::2]
assert y.shape == x.shape and np.allclose(y, x * x, rtol=1.2e-7, atol=0), np.max(np.abs(y - x * x))'
for n in 1 1001 300007; do
  np_check 'np.save("x.npy", np.random.default_rng(int(sys.argv[1])).uniform(-1, 1, int(sys.argv[1])).astype(np.float32))' "$n"
  expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --arg x.npy --axis '()' --out y=y.npy
  np_check 'x, y = np.load("x.npy"), np.load("y.npy")
assert y.shape == x.shape and np.allclose(y, x * x, rtol=1.2e-7, atol=0), (y.shape, np.max(np.abs(y - x * x)))'
done

TEST "in-place calls with @NAME match NumPy: saxpy(a, x, y, y), a reversed view, a reduction, a raw kernel"
save_view_data
np_check 'np.save("y.npy", np.random.default_rng(12).uniform(-1, 1, (64, 96)).astype(np.float32))'
expect_exit 0 kernc run "$SPEC" --kernel saxpy --arg 1.5 --arg m.npy --arg y.npy --arg @y --out z=z.npy --out y=y2.npy
np_check 'm, y, z, y2 = np.load("m.npy"), np.load("y.npy"), np.load("z.npy"), np.load("y2.npy")
ref = 1.5 * m.astype(np.float64) + y
assert z.shape == (64, 96) and np.max(np.abs(z - ref)) <= 1e-6, np.max(np.abs(z - ref))
assert np.array_equal(z, y2), "z and y are one buffer"'
# z is x reversed: x overlaps z but is not the same view, so the library reads x from a
# copy (NumPy: out=x[::-1] of a*x + y computes from the old x).
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=-2.0 --in x=m.npy --in 'y=row.npy[None, :]' \
  --in 'z=@x[::-1]' --out x=x2.npy --out z=z.npy
np_check 'm, row, x2, z = np.load("m.npy"), np.load("row.npy"), np.load("x2.npy"), np.load("z.npy")
ref = -2.0 * m.astype(np.float64) + row
assert np.max(np.abs(z - ref)) <= 1e-6, np.max(np.abs(z - ref))
assert np.array_equal(x2, z[::-1]), "x after the call is z reversed"'
expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --arg m.npy --arg @x --axis '()' --out y=y.npy
np_check 'm, y = np.load("m.npy"), np.load("y.npy")
assert np.allclose(y, m * m, rtol=1.2e-7, atol=0), "in place, axis ()"'
save_tally_spec
np_check 'np.save("f.npy", np.random.default_rng(13).uniform(-1, 1, 5003).astype(np.float32))'
expect_exit 0 kernc run tally.json --kernel add_one --in in=f.npy --in out=@in --in n=5003 --out out=g.npy
np_check 'f, g = np.load("f.npy"), np.load("g.npy")
assert np.array_equal(g, f + np.float32(1)), "add_one in place"'

TEST "--read-global writes a global the kernel computed; the values match NumPy"
save_tally_spec
for n in 1 999 100003; do
  np_check 'rng = np.random.default_rng(int(sys.argv[1]))
np.save("x.npy", rng.integers(-10, 11, int(sys.argv[1])).astype(np.int32))
np.save("w0.npy", rng.uniform(-1, 1, (2, 3)))' "$n"
  expect_exit 0 kernc run tally.json --kernel tally --function tally --arg x.npy --arg "$n" \
    --read-global 'hits:uint32:2x2=hits.npy' --read-global total:float32=total.npy \
    --global weights=w0.npy --read-global weights=w.npy
  expect_match "$OUT" '^global +hits = uint32 \(2, 2\) written to hits\.npy$'
  np_check 'x, hits, total, w = np.load("x.npy"), np.load("hits.npy"), np.load("total.npy"), np.load("w.npy")
assert hits.dtype == np.uint32 and hits.shape == (2, 2), (hits.dtype, hits.shape)
assert np.array_equal(hits.ravel(), np.bincount(x & 3, minlength=4)), (hits, np.bincount(x & 3, minlength=4))
assert total.dtype == np.float32 and total.shape == (1,), (total.dtype, total.shape)
assert total[0] == x.astype(np.int64).sum(), (total, x.sum())  # whole numbers below 2^24: exact in any order
assert w.dtype == np.float64 and w.shape == (2, 3) and np.array_equal(w, np.load("w0.npy")), (w.dtype, w.shape)'
done

TEST "--cooperative launches through cuLaunchCooperativeKernel: grid.sync() orders the whole grid"
np_check 'np.save("r.npy", np.random.default_rng(9).uniform(-1, 1, 100000).astype(np.float32))'
expect_exit 0 kernc run "$PORTS" --kernel rotate --cooperative --grid 64 --arg r.npy --arg zeros:100000:float32 \
  --arg 100000 --out 0=rotated.npy
np_check 'r, out = np.load("r.npy"), np.load("rotated.npy")
assert np.array_equal(out, np.roll(r, -1)), "not numpy.roll(x, -1)"'
expect_exit 3 kernc run "$PORTS" --kernel rotate --cooperative --grid 10000000 --arg r.npy --arg zeros:100000:float32 \
  --arg 100000
expect_contains "$ERR" "cooperative"

TEST "--cluster: block 0 of each cluster reads its blocks' shared memory; --pdl and --priority run"
cat >cluster.json <<'JSON'
{"kernels": [{"kind": "raw", "name": "cluster_sum",
  "code": "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\nextern \"C\" __global__ void cluster_sum(const int* x, long long n, long long* sums) {\n  __shared__ unsigned long long block_sum;\n  cg::cluster_group cluster = cg::this_cluster();\n  if (threadIdx.x == 0) block_sum = 0;\n  __syncthreads();\n  for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&block_sum, (unsigned long long)(long long)x[i]);\n  cluster.sync();\n  if (cluster.block_rank() == 0 && threadIdx.x == 0) {\n    unsigned long long total = 0;\n    for (unsigned r = 0; r < cluster.num_blocks(); ++r) total += *cluster.map_shared_rank(&block_sum, r);\n    sums[blockIdx.x / cluster.num_blocks()] = (long long)total;\n  }\n  cluster.sync();\n}\n"}]}
JSON
np_check 'np.save("ints.npy", np.random.default_rng(5).integers(-1000, 1000, 100003).astype(np.int32))'
expect_exit 0 kernc info --format json
ARCH=$(json_eval "$OUT" 'd["cuda_driver"]["gpus"][0]["arch"]')
if [[ ${ARCH#sm_} -ge 90 ]]; then
  expect_exit 0 kernc run cluster.json --kernel cluster_sum --arg ints.npy --arg 100003 --arg zeros:8:int64 \
    --grid 32 --block 128 --cluster 4 --out 2=sums.npy
  # Element i is added by block (i // 128) % 32 (a grid-stride loop), of cluster block // 4.
  np_check 'x, sums = np.load("ints.npy").astype(np.int64), np.load("sums.npy")
cluster = (np.arange(len(x)) // 128) % 32 // 4
want = np.array([x[cluster == c].sum() for c in range(8)], np.int64)
assert np.array_equal(sums, want), (sums, want)'
  expect_exit 3 kernc run cluster.json --kernel cluster_sum --arg ints.npy --arg 100003 --arg zeros:8:int64 \
    --grid 30 --block 128 --cluster 4
  expect_contains "$ERR" "grid.x = 30 is not a multiple of cluster.x = 4"
else
  expect_exit 3 kernc run "$SPEC" --kernel fill --in out=zeros:8:float32 --in value=1 --in n=8 --grid 2 --block 4 \
    --cluster 2
  expect_contains "$ERR" "thread-block clusters need a GPU of compute capability 9.0 or newer"
fi
expect_exit 0 kernc run "$SPEC" --kernel fill --in out=zeros:1000:float32 --in value=2.5 --in n=1000 --pdl \
  --priority 0 --repeat 3 --out out=filled.npy
np_check 'assert (np.load("filled.npy") == 2.5).all()'

finish
