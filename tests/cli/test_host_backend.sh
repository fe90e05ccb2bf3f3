# Black-box tests of the CLI over the host backend (Backend::cpu: the system C++ compiler
# builds a shared object, the host driver runs it on this machine's cores), on any machine
# with g++: `kernc run --device cpu` and its options, the exit 7 line that points to it,
# `kernc info`'s host compiler and CPU, `precompile`/`compile --target cpu...`,
# KERNC_COMPILE=never over a precompiled host cache, and `cache check`/`verify` refusing a
# damaged or untrusted host entry (a .so is code: it runs in the kernc process itself).
# Usage: bash test_host_backend.sh PATH_TO_KERNC [PROJECT_SOURCE_DIR]

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

SOURCE_DIR=$(realpath -- "${SOURCE_DIR:-$(dirname "${BASH_SOURCE[0]}")/../..}")  # write_small_spec reads it after a cd
SPEC=$SOURCE_DIR/examples/kernels.json
PORTS=$(realpath -- "$(dirname "$SPEC")/../tests/cli/data/cupy_ports.json")

saxpy_arange=(--kernel saxpy --in a=2.0:float32 --in x=arange:11:float32 --in y=ones:11:float32)

# expect_printed FILE PYTHON_LIST: the first line of FILE starting with "  [" (what --print shows
# of the first array shown) holds these values; PYTHON_LIST is computed by python3 from the test's own
# formula, never by kernc.
expect_printed() {
  CHECKS=$((CHECKS + 1))
  local result
  result=$(python3 - "$1" "$2" <<'EOF'
import sys
rows = [line.strip() for line in open(sys.argv[1]) if line.startswith("  [")]
if not rows:
    print("no printed array")
    sys.exit(0)
got = [float(v) for v in rows[0].strip("[]").split(",")]
want = [float(v) for v in eval(sys.argv[2])]
print("ok" if got == want else f"got {got}, expected {want}")
EOF
  )
  [[ $result == ok ]] || test_failed "printed values: $result"
}

# ---------------------------------------------------------------------------------------------
TEST "info lists the host compiler and this machine's CPU"
expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["host_compiler"]["available"]' true
expect_json "$OUT" 're.match(r"cpu-x86-64|cpu-armv8", d["host_compiler"]["supported_targets"][0]) is not None' true
expect_json "$OUT" 'd["host_device"]["available"] and d["host_device"]["threads"] >= 1' true
expect_json "$OUT" 'd["host_device"]["runs"][0] == d["host_device"]["arch"]' true
HOST_ARCH=$(json_eval "$OUT" 'd["host_device"]["arch"]')
HOST_RUNS=$(json_eval "$OUT" '" ".join(d["host_device"]["runs"])')
HOST_TRIPLE=$(json_eval "$OUT" 'd["host_compiler"]["version"]')
echo "    host: $HOST_ARCH; compiler: $HOST_TRIPLE"
expect_exit 0 kernc info
expect_match "$OUT" "^host c\+\+ +.*\(x86_64|\(aarch64"
expect_match "$OUT" "^cpu +.*, $HOST_ARCH \(kernc run --device cpu\)$"
expect_contains "$OUT" "runs: $HOST_RUNS"
expect_match "$OUT" "^  host cxx "
expect_match "$OUT" "^  cpu threads +one per hardware thread +\(default\)$"
KERNC_CPU_THREADS=3 expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["settings"]["cpu_threads"]' '{"source": "KERNC_CPU_THREADS", "value": 3}'

# ---------------------------------------------------------------------------------------------
TEST "run --device cpu: saxpy on arange and ones gives 2k + 1, on the CPU"
expect_exit 0 kernc run "$SPEC" "${saxpy_arange[@]}" --device cpu --print
expect_match "$OUT" "^kernel  saxpy \(elementwise\) on the CPU: .* \($HOST_ARCH\)$"
expect_not_contains "$OUT" "GPU"
expect_match "$OUT" "^compile compiles: 1 in "
expect_match "$OUT" "^binary  $HOST_ARCH so \(compiled here\)$"
expect_printed "$OUT" '[2 * k + 1 for k in range(11)]'
expect_entry_count 1
# The second run is a disk hit; --format json names the backend.
expect_exit 0 kernc run "$SPEC" "${saxpy_arange[@]}" --device cpu --format json
expect_json "$OUT" 'd["device"]["backend"]' cpu
expect_json "$OUT" 'd["device"]["arch"]' "$HOST_ARCH"
expect_json "$OUT" 'd["first_call"]["compiles"], d["first_call"]["disk_hits"]' '[0, 1]'
expect_json "$OUT" 'd["binaries"][0]["target"]' "$HOST_ARCH"
# KERNC_RUNTIME=cpu does the same, and --device cpu overrides KERNC_RUNTIME=cuda.
KERNC_RUNTIME=cpu expect_exit 0 kernc run "$SPEC" "${saxpy_arange[@]}" --print
expect_match "$OUT" "^kernel  saxpy \(elementwise\) on the CPU: "
expect_printed "$OUT" '[2 * k + 1 for k in range(11)]'
KERNC_RUNTIME=cuda expect_exit 0 kernc run "$SPEC" "${saxpy_arange[@]}" --device cpu:0
expect_match "$OUT" "^kernel  saxpy \(elementwise\) on the CPU: "

TEST "run --device cpu on random data matches NumPy"
if [[ -z $NUMPY_PYTHON ]]; then
  echo "    (no python3 with numpy: skipped)"
else
  expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=1.5:float64 --in x=random:1001:float64 --in y=random:1001:float64 \
    --out x=x.npy --out y=y.npy --out z=z.npy --device cpu
  np_check 'x, y, z = (np.load(f) for f in ("x.npy", "y.npy", "z.npy"))
assert np.allclose(z, 1.5 * x + y, rtol=1e-12), np.abs(z - (1.5 * x + y)).max()'
  expect_exit 0 kernc run "$SPEC" --kernel sum_of_squares --in x=random:37x5:float32 --axis 1 --out x=x.npy --out y=y.npy \
    --device cpu
  np_check 'x, y = np.load("x.npy"), np.load("y.npy")
assert y.shape == (37,), y.shape
assert np.allclose(y, (x.astype(np.float64) ** 2).sum(axis=1), rtol=1e-5), np.abs(y - (x ** 2).sum(axis=1)).max()'
fi

TEST "run --device cpu: raw_module globals, --read-global, --cooperative, --shared, --repeat"
# scale_add: x[i] = x[i] * scale + offset[i % 3].
expect_exit 0 kernc run "$PORTS" --kernel scaled --function scale_add --global scale=2.5:float32 \
  --global offset=arange:3:int32 --arg arange:7:float32 --arg 7 --read-global offset --read-global scale:float32 \
  --device cpu --print
expect_match "$OUT" "^global  scale = 2.5 \(float32 scalar\) \(4 byte\(s\) at 0x"
expect_contains "$OUT" "output  x = float32 (7,)"
python3 -c 'print([k * 2.5 + k % 3 for k in range(7)])' >expected
grep '^  \[' "$OUT" | sed -n 1p >got
expect_equal "$(python3 -c 'import sys; print([float(v) for v in open("got").read().strip().strip("[]").split(",")])')" \
  "$(cat expected)" "x after scale_add"
expect_contains "$OUT" "global  offset = int32 (3,)"
expect_contains "$OUT" "global  scale = float32 ()"
# rotate: x becomes numpy.roll(x, -1) through grid.sync(), over 3 blocks of 4 threads.
expect_exit 0 kernc run "$PORTS" --kernel rotate --arg arange:10:float32 --arg zeros:10:float32 --arg 10 \
  --cooperative --grid 3 --block 4 --out tmp=tmp.npy --device cpu --print
expect_printed "$OUT" '[(k + 1) % 10 for k in range(10)]'
# Dynamic shared memory: each block reverses its 4 elements through extern __shared__, and
# above 48 KiB the launch opts in as on a GPU.
cat >shared.json <<'JSON'
{"kernels": [{"kind": "raw", "name": "reverse_blocks",
  "code": "extern \"C\" __global__ void reverse_blocks(const float* x, float* y, int n) {\n  extern __shared__ float tile[];\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  tile[threadIdx.x] = i < n ? x[i] : -1.0f;\n  __syncthreads();\n  if (i < n) y[i] = tile[blockDim.x - 1 - threadIdx.x];\n}\n"}]}
JSON
for shared in 16 65536; do
  expect_exit 0 kernc run shared.json --kernel reverse_blocks --arg arange:8:float32 --arg zeros:8:float32 --arg 8 \
    --grid 2 --block 4 --shared $shared --device cpu --print
  expect_printed "$OUT" '[3, 2, 1, 0, 7, 6, 5, 4]'
done
# Launch attributes (NOTE [ launch attributes ]): --pdl and --priority are taken and change
# nothing on the host (launches run in order); --cluster is refused, saying why.
expect_exit 0 kernc run "$SPEC" --kernel fill --in out=zeros:8:float32 --in value=2.5 --in n=8 --pdl --priority -3 \
  --device cpu --print
expect_printed "$OUT" '[2.5] * 8'
expect_exit 3 kernc run "$SPEC" --kernel fill --in out=zeros:8:float32 --in value=2.5 --in n=8 --grid 2 --block 4 \
  --cluster 2 --device cpu
expect_contains "$ERR" "fill: a cluster of 2 x 1 x 1 blocks on"
expect_contains "$ERR" "the host backend (Backend::cpu) has no thread-block clusters"
# --repeat: host clock times between events, a median and a minimum.
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=random:100000:float32 --in y=random:100000:float32 \
  --repeat 5 --device cpu
expect_match "$OUT" "^time    median [0-9.]+ [mu]?s, min [0-9.]+ [mu]?s over 5 launch\(es\) after 1 warm-up; [0-9.]+ GB/s"
expect_exit 0 kernc run "$SPEC" --kernel saxpy --in a=2.0 --in x=random:100000:float32 --in y=random:100000:float32 \
  --repeat 3 --device cpu --format json
expect_json "$OUT" 'd["time"]["launches"] == 3 and 0 < d["time"]["min_ms"] <= d["time"]["median_ms"]' true
expect_json "$OUT" 'd["time"]["bytes_per_launch"]' 1200000.0

# ---------------------------------------------------------------------------------------------
TEST "--device: malformed values exit 2; a missing device exits 7"
for bad in gpu -1 cuda: cuda:x cpu:1 1x ''; do
  expect_exit 2 kernc run "$SPEC" "${saxpy_arange[@]}" --device "$bad"
  expect_contains "$ERR" "--device: expected a GPU ordinal (0, 1, ...), cuda:N, or cpu"
done
KERNC_RUNTIME=cpu expect_exit 7 kernc run "$SPEC" "${saxpy_arange[@]}" --device 1
expect_contains "$ERR" "kernc: run: the host device (this machine's CPU) cannot be used: "
expect_contains "$ERR" "there is no device 1"

TEST "without a usable GPU, run exits 7 with one line that names --device cpu"
for device in 0 cuda:0 cuda; do
  expect_exit 7 env KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$KERNC" run "$SPEC" "${saxpy_arange[@]}" \
    --device $device
  expect_contains "$ERR" "kernc: run: no usable NVIDIA GPU/driver found: "
  expect_contains "$ERR" "/nonexistent/libcuda.so.1"
  expect_contains "$ERR" "to run on this machine's CPU instead, add --device cpu (or set KERNC_RUNTIME=cpu)"
  expect_equal "$(wc -l <"$ERR")" 1 "lines on stderr"
done
# The same driver setting does not matter to --device cpu.
expect_exit 0 env KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$KERNC" run "$SPEC" "${saxpy_arange[@]}" --device cpu

# ---------------------------------------------------------------------------------------------
TEST "precompile --target cpu, then KERNC_COMPILE=never runs from the cache; cache check and ls"
write_small_spec small.json
KERNC_COMPILE=never expect_exit 8 kernc run small.json "${saxpy_arange[@]}" --device cpu
expect_contains "$ERR" "compiling is off"
expect_contains "$ERR" "kernc: to add it, where the cache is built: kernc precompile small.json --target $HOST_ARCH"
expect_exit 8 kernc cache check small.json --target cpu
expect_contains "$OUT" "$HOST_ARCH 0 of $SMALL_SPEC_VARIANTS variant(s) servable"
expect_exit 0 kernc precompile small.json --target cpu --quiet
expect_match "$OUT" "^$SMALL_SPEC_VARIANTS program\(s\) .*: $SMALL_SPEC_VARIANTS compiled, 0 cache hit\(s\), 0 failed"
expect_entry_count $SMALL_SPEC_VARIANTS
KERNC_COMPILE=never expect_exit 0 kernc run small.json "${saxpy_arange[@]}" --device cpu --print
expect_match "$OUT" "^compile compiles: 0, 1 disk cache hit\(s\)"
expect_match "$OUT" "^binary  $HOST_ARCH so from $KERNC_CACHE_DIR$"
expect_printed "$OUT" '[2 * k + 1 for k in range(11)]'
expect_exit 0 kernc cache check small.json --target cpu
expect_contains "$OUT" "$HOST_ARCH $SMALL_SPEC_VARIANTS of $SMALL_SPEC_VARIANTS variant(s) servable ($SMALL_SPEC_VARIANTS from $HOST_ARCH)"
expect_exit 0 kernc cache check small.json --target "$HOST_ARCH" --format json
expect_json "$OUT" 'd["ok"], d["targets"][0]["servable"]' "[true, $SMALL_SPEC_VARIANTS]"
expect_exit 0 kernc cache ls
expect_count "$OUT" " $HOST_ARCH " $SMALL_SPEC_VARIANTS
expect_exit 0 kernc cache verify
expect_contains "$OUT" "$SMALL_SPEC_VARIANTS checked, 0 bad"

# The cache's trust rules hold for host entries: a damaged .so is a miss (never loaded), and
# so is an intact one that others could have written.
victim=$(entry_files | head -1)
cp "$victim" intact
flip_byte "$victim" $(($(file_size "$victim") / 2))
expect_exit 8 kernc cache check small.json --target cpu
expect_contains "$OUT" "$HOST_ARCH $((SMALL_SPEC_VARIANTS - 1)) of $SMALL_SPEC_VARIANTS variant(s) servable"
expect_match "$OUT" "^missing  $HOST_ARCH saxpy"
expect_exit 5 kernc cache verify
expect_contains "$OUT" "$(basename "$victim")"
expect_contains "$OUT" "checksum mismatch"
cp intact "$victim"
chmod 0644 "$victim"
expect_exit 0 kernc cache check small.json --target cpu
chmod 0664 "$victim"
expect_exit 8 kernc cache check small.json --target cpu
expect_contains "$OUT" "$HOST_ARCH $((SMALL_SPEC_VARIANTS - 1)) of $SMALL_SPEC_VARIANTS variant(s) servable"
chmod 0644 "$victim"
# Every variant damaged: a never-compile run refuses all of them rather than load one.
for entry in $(entry_files); do flip_byte "$entry" -20; done
KERNC_COMPILE=never expect_exit 8 kernc run small.json "${saxpy_arange[@]}" --device cpu
expect_contains "$ERR" "corrupt cache entry passed over"

TEST "a cache built for a lower ISA level serves this CPU (the host ladder)"
write_small_spec small.json
if [[ " $HOST_RUNS " != *" cpu-x86-64-v2 "* ]]; then
  echo "    (this CPU does not run cpu-x86-64-v2 binaries: skipped)"
else
  expect_exit 0 kernc precompile small.json --target cpu-x86-64-v2 --quiet
  expect_exit 0 kernc cache check small.json --target cpu,cpu-x86-64-v2
  expect_contains "$OUT" "$HOST_ARCH $SMALL_SPEC_VARIANTS of $SMALL_SPEC_VARIANTS variant(s) servable ($SMALL_SPEC_VARIANTS from cpu-x86-64-v2)"
  expect_exit 8 kernc cache check small.json --target cpu-x86-64
  expect_contains "$ERR" "add them with: kernc precompile small.json --target cpu-x86-64"
  expect_exit 0 kernc cache ls --format json
  expect_json "$OUT" 'sorted({e["target"] for e in d})' '["cpu-x86-64-v2"]'
  KERNC_COMPILE=never expect_exit 0 kernc run small.json "${saxpy_arange[@]}" --device cpu --print
  expect_match "$OUT" "^binary  cpu-x86-64-v2 shared object \(a lower ISA level than $HOST_ARCH"
  expect_printed "$OUT" '[2 * k + 1 for k in range(11)]'
fi

# ---------------------------------------------------------------------------------------------
TEST "compile k.cu --target cpu-x86-64...: a .so"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu --target cpu-x86-64 -o out/
expect_elf out/k.cpu-x86-64.so
expect_exit 0 kernc compile k.cu --target cpu -o k.so --format json
expect_json "$OUT" 'd["targets"][0]["binary_kind"], d["targets"][0]["target"]' "[\"so\", \"$HOST_ARCH\"]"
expect_elf k.so
expect_exit 0 kernc compile k.cu --target cpu-x86-64,cpu-x86-64-v2 -o both
expect_elf both/k.cpu-x86-64.so
expect_elf both/k.cpu-x86-64-v2.so
# A dynamic library that exports the kernel's entry table (NOTE [ host kernel ABI ]).
expect_equal "$(od -An -tx1 -j16 -N1 k.so | tr -d ' ')" 03 "ELF type (ET_DYN)"
if [[ $(uname -m) == x86_64 ]]; then
  expect_exit 3 kernc compile k.cu --target cpu-armv8-a
  expect_contains "$ERR" "cannot compile for cpu-armv8-a"
fi
expect_exit 2 kernc compile k.cu --target cpu-x86-64-v9
expect_exit 2 kernc cache check "$SPEC" --target compute_90
expect_contains "$ERR" "cpu-x86-64-vN"

TEST "float8: a quantize kernel writes ml_dtypes' .npy, which a dequantize kernel reads back by name"
cat >f8.json <<'JSON'
{"kernels": [
  {"kind": "elementwise", "name": "quantize", "in_params": "float32 x, float32 inv_scale", "out_params": "T q",
   "operation": "q = x * inv_scale"},
  {"kind": "elementwise", "name": "dequantize", "in_params": "T q, float32 scale", "out_params": "float32 y",
   "operation": "y = q * scale"}
]}
JSON
np_check 'np.save("x.npy", np.array([0.0, -0.0, 1.0, -2.5, 0.1, 1e-4, 14.0, 14.5, 100.0, -1e9, np.inf, np.nan], np.float32))'
for dtype in float8_e4m3fn float8_e5m2; do
  expect_exit 0 kernc run f8.json --kernel quantize --in x=x.npy --in inv_scale=32:float32 --bind "T=$dtype" \
    --device cpu --out q=q.npy --print
  [[ $dtype == float8_e4m3fn ]] && descr='<V1' || descr='<f1'
  expect_contains "$OUT" "written to q.npy (as ml_dtypes saves $dtype: '$descr')"
  # The reference from the format's definition (not kernc's code): decode every code, take
  # the nearest finite value (ties to the even code), saturate past the largest, float NaN -> 0x7f.
  np_check '
import struct
name = sys.argv[1]
e, m, bias = (4, 3, 7) if name.endswith("e4m3fn") else (5, 2, 15)
def value(c):
    ex, ma = (c >> m) & ((1 << e) - 1), c & ((1 << m) - 1)
    if name.endswith("e5m2") and ex == 31: return None
    if name.endswith("e4m3fn") and ex == 15 and ma == 7: return None
    v = (ma / 2**m) * 2.0**(1 - bias) if ex == 0 else (1 + ma / 2**m) * 2.0**(ex - bias)
    return -v if c & 0x80 else v
finite = [(c, value(c)) for c in range(128) if value(c) is not None]
def encode(x):
    if np.isnan(x): return 0x7f
    s = 0x80 if np.signbit(x) else 0
    if np.isinf(x): return s | max(c for c, v in finite)
    best = min(finite, key=lambda cv: (abs(cv[1] - abs(x)), cv[0] & 1))
    return s | best[0]
raw = open("q.npy", "rb").read()
hl = raw[8] | raw[9] << 8
header = raw[10:10 + hl].decode()
assert header.startswith("{\x27descr\x27: \x27%s\x27, \x27fortran_order\x27: False, \x27shape\x27: (12,), }" % sys.argv[2]), header
got = list(raw[10 + hl:])
x = np.load("x.npy").astype(np.float64) * 32
want = [encode(v) for v in x]
assert got == want, (got, want)' "$dtype" "$descr"
  expect_exit 0 kernc run f8.json --kernel dequantize --in "q=q.npy:$dtype" --in scale=0.03125:float32 \
    --device cpu --out y=y.npy
  expect_contains "$OUT" "q.npy:$dtype"
  np_check '
x, y = np.load("x.npy"), np.load("y.npy")
assert y.dtype == np.float32 and y.shape == (12,)
lim = 448 / 32 if sys.argv[1].endswith("e4m3fn") else 57344 / 32
assert y[0] == 0 and np.signbit(y[1]) and y[2] == 1 and y[3] == -2.5 and y[9] == -lim and y[10] == lim
assert y[8] == (lim if sys.argv[1].endswith("e4m3fn") else 96)  # 3200 is 3072 in e5m2
assert np.isnan(y[11]) and abs(y[4] - 0.1) < 0.1 / 8' "$dtype"
done
# ml_dtypes writes every 1-byte type as '<V1': without a name, kernc says how to give one.
expect_exit 0 kernc run f8.json --kernel quantize --in x=x.npy --in inv_scale=1:float32 --bind T=float8_e4m3fn \
  --device cpu --out q=q4.npy
expect_exit 2 kernc run f8.json --kernel dequantize --in q=q4.npy --in scale=1:float32 --device cpu
expect_contains "$ERR" "'<V1'"
expect_contains "$ERR" "FILE.npy:float8_e4m3fn"
# A float8 scalar prints as its float8 value.
expect_exit 0 kernc run f8.json --kernel dequantize --in q=zeros:3:float8_e5m2 --in scale=0.3:float8_e5m2 --device cpu
expect_contains "$OUT" "0.3125 (float8_e5m2 scalar)"

finish
