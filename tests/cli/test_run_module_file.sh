# Black-box tests of a spec's raw_module made of binary files ("path"/"paths", CuPy's
# RawModule(path=...)): the binaries are built here by `kernc compile`; a file that is
# missing or not trusted exits 4, fields that need source exit 2, both before any GPU;
# precompile and cache check pass over the module; without a GPU `kernc run` gets to the
# GPU (exit 7), with one it runs the PTX and the result is checked.
# Usage: bash test_run_module_file.sh PATH_TO_KERNC [PROJECT_SOURCE_DIR]

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# scale.cu, bin/scale.ptx (compute_75: runs on every GPU CUDA 13 supports), bin/scale.sm_80.cubin
# and spec.json naming them relative to itself, in the current directory.
build_module() {
  cat >scale.cu <<'CU'
extern "C" __global__ void scale(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
CU
  mkdir -p bin
  expect_exit 0 kernc compile scale.cu --target compute_75 -o bin/scale.ptx
  expect_exit 0 kernc compile scale.cu --target sm_80 -o bin/scale.sm_80.cubin
  chmod 0644 bin/scale.ptx bin/scale.sm_80.cubin
  cat >spec.json <<'JSON'
{"kernels": [
  {"kind": "raw_module", "name": "prebuilt", "path": "bin/scale.ptx"},
  {"kind": "raw_module", "name": "ladder", "paths": ["bin/scale.sm_80.cubin", "bin/scale.ptx"]},
  {"kind": "raw", "name": "add_one",
   "code": "extern \"C\" __global__ void add_one(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] += 1.0f; }"}
]}
JSON
}

# ---------------------------------------------------------------------------------------------
TEST "a raw_module of binary files is read relative to the spec and runs up to the GPU"
build_module
mkdir elsewhere
cd elsewhere || exit 1
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
expect_exit 7 kernc run ../spec.json --kernel prebuilt --function scale --arg zeros:100:float32 \
  --arg random:100:float32 --arg 2.0:float32 --arg 100:int32
expect_exit 2 kernc run ../spec.json --kernel prebuilt
expect_contains "$ERR" "kernel prebuilt is a raw_module: name the function to launch with --function NAME"
# No declaration to name parameters by.
expect_exit 2 kernc run ../spec.json --kernel prebuilt --function scale --in y=zeros:4:float32
expect_contains "$ERR" "give its arguments in order with --arg SOURCE"

TEST "missing and untrusted files exit 4 naming the path and why; fields that need source exit 2"
build_module
export KERNC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
chmod 0664 bin/scale.ptx
expect_exit 4 kernc run spec.json --kernel prebuilt --function scale --arg 1
expect_contains "$ERR" "RawModule prebuilt: cannot load ./bin/scale.ptx: not trusted: it is writable by its group (mode 664)"
chmod 0644 bin/scale.ptx
ln -s scale.ptx bin/link.ptx
cat >link.json <<'JSON'
{"kernels": [{"kind": "raw_module", "name": "linked", "path": "bin/link.ptx"}]}
JSON
expect_exit 4 kernc run link.json --kernel linked --function scale --arg 1
expect_contains "$ERR" "not trusted: it is a symbolic link"
cat >missing.json <<'JSON'
{"kernels": [{"kind": "raw_module", "name": "gone", "path": "bin/absent.cubin"}]}
JSON
expect_exit 4 kernc run missing.json --kernel gone --function scale --arg 1
expect_contains "$ERR" "RawModule gone: cannot load ./bin/absent.cubin: No such file or directory"
cat >expressions.json <<'JSON'
{"kernels": [{"kind": "raw_module", "name": "m", "path": "bin/scale.ptx", "name_expressions": ["scale<float>"]}]}
JSON
expect_exit 2 kernc run expressions.json --kernel m --function scale --arg 1
expect_contains "$ERR" "\"name_expressions\" cannot go with \"path\" or \"paths\""
cp scale.cu bin/not_binary.cubin
cat >garbage.json <<'JSON'
{"kernels": [{"kind": "raw_module", "name": "m", "path": "bin/not_binary.cubin"}]}
JSON
expect_exit 2 kernc run garbage.json --kernel m --function scale --arg 1
expect_contains "$ERR" "not a cubin (\\x7fELF), fatbin (magic 0xba55ed50) or PTX"

TEST "precompile and cache check pass over binary modules"
build_module
expect_exit 0 kernc precompile spec.json --target sm_80 --format json
expect_json "$OUT" 'd["programs"]' 1  # add_one only: the binaries have nothing to compile
expect_contains "$ERR" "kernel ladder is a module of binary files (\"path\"/\"paths\"): it is loaded as built"
expect_json "$OUT" 'd["failed"]' 0
expect_exit 0 kernc cache check spec.json --target sm_80 --format json
expect_json "$OUT" 'd["ok"]' true
expect_json "$OUT" 'd["targets"][0]["variants"]' 1

if has_gpu; then
  TEST "with a GPU: the PTX alone, and the ladder's choice, run and scale"
  build_module
  for kernel in prebuilt ladder; do
    expect_exit 0 kernc run spec.json --kernel "$kernel" --function scale --arg zeros:5:float32 \
      --arg arange:5:float32 --arg 2.5:float32 --arg 5:int32 --print
    expect_contains "$OUT" "[0.0, 2.5, 5.0, 7.5, 10.0]"
  done
fi

finish
