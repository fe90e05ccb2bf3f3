# Helpers for the black-box tests of the kernc CLI, sourced by tests/cli/test_*.sh.
#
# ctest runs each script as `bash SCRIPT PATH_TO_KERNC PROJECT_SOURCE_DIR` (see
# tests/CMakeLists.txt); run one by hand the same way. Modelled on ccache's test/run:
# TEST starts a case in a fresh directory with a clean environment, and the first failed
# expectation stops the script, naming the case and showing the command's output.
# Set KERNC_TEST_KEEP=1 to keep the temp directories for a look afterwards.

# shellcheck disable=SC2034  # KERNC, SOURCE_DIR, OUT, ERR, ENTRY, ... are for the sourcing scripts

set -u
set -o pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: bash $0 PATH_TO_KERNC [PROJECT_SOURCE_DIR]" >&2
  exit 2
fi
KERNC=$(realpath -- "$1")
SOURCE_DIR=${2:-}
if [[ ! -x $KERNC ]]; then
  echo "$0: $KERNC is not an executable kernc binary" >&2
  exit 2
fi
if ! command -v python3 >/dev/null; then
  echo "$0: python3 is needed to read the JSON output" >&2
  exit 2
fi

KEEP=${KERNC_TEST_KEEP:-}  # read now: TEST unsets every KERNC_* variable
SUITE=$(basename "$0" .sh)
SUITE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kernc-$SUITE.XXXXXX")
CURRENT_TEST="(setup)"
TEST_DIR=""
TESTS=0
CHECKS=0

cleanup() {
  cd / || true
  if [[ -n $KEEP ]]; then
    echo "$SUITE: test directories kept in $SUITE_DIR"
  else
    rm -rf "$SUITE_DIR"
  fi
}
trap cleanup EXIT

# The kernc under test; a function so that `expect_exit 0 kernc ...` reads like the command line.
kernc() { "$KERNC" "$@"; }

# ---------------------------------------------------------------------------------------------
# Test cases

# TEST "name": starts a case in a fresh directory, with KERNC_CACHE_DIR=<dir>/cache, HOME inside
# it (so nothing can reach the real ~/.cache), and no KERNC_* setting from the caller's shell.
TEST() {
  CURRENT_TEST=$1
  TESTS=$((TESTS + 1))
  local name
  while read -r name; do
    [[ -n $name ]] && unset "$name"
  done <<<"$(env | sed -n 's/^\(KERNC_[A-Z0-9_]*\)=.*$/\1/p')"
  unset XDG_CACHE_HOME
  cd / || exit 1
  [[ -n $TEST_DIR && -z $KEEP ]] && rm -rf "$TEST_DIR"
  TEST_DIR=$SUITE_DIR/$(printf '%02d' "$TESTS")
  mkdir -p "$TEST_DIR/home"
  cd "$TEST_DIR" || exit 1
  export HOME=$TEST_DIR/home
  export KERNC_CACHE_DIR=$TEST_DIR/cache
  OUT=$TEST_DIR/stdout
  ERR=$TEST_DIR/stderr
  LAST_COMMAND=""
  : >"$OUT"
  : >"$ERR"
  printf '  %s\n' "$CURRENT_TEST"
}

# Prints `file` (at most 80 lines), indented, for failure messages.
show_file() {
  local label=$1 file=$2
  echo "---- $label ($file)"
  if [[ -f $file ]]; then
    head -n 80 "$file" | sed 's/^/    /'
    [[ $(wc -l <"$file") -gt 80 ]] && echo "    ... (truncated)"
  else
    echo "    (missing)"
  fi
}

test_failed() {
  echo
  echo "FAILED: $SUITE: $CURRENT_TEST"
  echo "reason: $*"
  if [[ -n ${LAST_COMMAND:-} ]]; then
    echo "last command: $LAST_COMMAND"
    show_file stdout "$OUT"
    show_file stderr "$ERR"
  fi
  echo "test directory: $TEST_DIR (set KERNC_TEST_KEEP=1 to keep it)"
  exit 1
}

# Prints the summary; the last line of every script.
finish() {
  echo "PASSED: $SUITE: $TESTS tests, $CHECKS checks"
  exit 0
}

# ---------------------------------------------------------------------------------------------
# Expectations. Each stops the script at the first failure.

# expect_exit CODE COMMAND...: runs COMMAND with stdout in $OUT and stderr in $ERR; fails
# unless it exits with CODE. Prefix assignments work: `VAR=x expect_exit 0 kernc ...`.
expect_exit() {
  local expected=$1
  shift
  LAST_COMMAND="$*"
  local status=0
  "$@" >"$OUT" 2>"$ERR" || status=$?
  CHECKS=$((CHECKS + 1))
  if [[ $status -ne $expected ]]; then
    test_failed "expected exit code $expected, got $status"
  fi
}

# expect_contains FILE TEXT: FILE contains TEXT (a fixed string).
expect_contains() {
  CHECKS=$((CHECKS + 1))
  if [[ ! -f $1 ]] || ! grep -qF -- "$2" "$1"; then
    test_failed "expected $(basename "$1") to contain \"$2\""
  fi
}

expect_not_contains() {
  CHECKS=$((CHECKS + 1))
  if [[ -f $1 ]] && grep -qF -- "$2" "$1"; then
    test_failed "expected $(basename "$1") not to contain \"$2\""
  fi
}

# expect_match FILE REGEX: some line of FILE matches the extended regular expression.
expect_match() {
  CHECKS=$((CHECKS + 1))
  if [[ ! -f $1 ]] || ! grep -qE -- "$2" "$1"; then
    test_failed "expected a line of $(basename "$1") to match /$2/"
  fi
}

# expect_count FILE TEXT N: TEXT (a fixed string) occurs on exactly N lines of FILE.
expect_count() {
  CHECKS=$((CHECKS + 1))
  local count
  count=$(grep -cF -- "$2" "$1" 2>/dev/null)
  if [[ $count -ne $3 ]]; then
    test_failed "expected \"$2\" on $3 line(s) of $(basename "$1"), found it on $count"
  fi
}

# expect_equal ACTUAL EXPECTED WHAT
expect_equal() {
  CHECKS=$((CHECKS + 1))
  if [[ "$1" != "$2" ]]; then
    test_failed "$3: expected \"$2\", got \"$1\""
  fi
}

expect_file_exists() {
  CHECKS=$((CHECKS + 1))
  [[ -f $1 ]] || test_failed "expected the file $1 to exist"
}

expect_file_missing() {
  CHECKS=$((CHECKS + 1))
  [[ ! -e $1 ]] || test_failed "expected $1 not to exist"
}

# expect_elf FILE: FILE starts with the ELF magic (cubin and hsaco are both ELF).
expect_elf() {
  CHECKS=$((CHECKS + 1))
  [[ -f $1 ]] || test_failed "expected the file $1 to exist"
  local magic
  magic=$(od -An -tx1 -N4 "$1" | tr -d ' \n')
  [[ $magic == 7f454c46 ]] || test_failed "expected $1 to start with the ELF magic 7f 45 4c 46, found \"$magic\""
}

# json_eval FILE EXPR: prints EXPR evaluated in Python with `d` = FILE's parsed JSON (strings
# as they are, anything else as JSON: true, 3, ["a"]). Fails the test if FILE is not JSON.
json_eval() {
  python3 - "$1" "$2" <<'EOF'
import json, re, sys
try:
    with open(sys.argv[1]) as f:
        d = json.load(f)
except Exception as e:
    print(f"<not JSON: {e}>")
    sys.exit(3)
value = eval(sys.argv[2], {"d": d, "re": re})
print(value if isinstance(value, str) else json.dumps(value))
EOF
}

# expect_json FILE EXPR EXPECTED: e.g. expect_json "$OUT" 'd["compiles"]' 1
expect_json() {
  CHECKS=$((CHECKS + 1))
  local value status=0
  value=$(json_eval "$1" "$2" 2>&1) || status=$?
  [[ $status -eq 0 ]] || test_failed "$(basename "$1") as JSON, evaluating $2: $value"
  [[ "$value" == "$3" ]] || test_failed "$(basename "$1") as JSON: expected $2 == $3, got $value"
}

# ---------------------------------------------------------------------------------------------
# NumPy, for checking results computed on a GPU

# A python3 that imports numpy: the one on PATH, else Debian's (python3-numpy), which a
# pyenv or virtualenv python3 on PATH does not see.
NUMPY_PYTHON=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import numpy' >/dev/null 2>&1; then
    NUMPY_PYTHON=$candidate
    break
  fi
done

# np_check SCRIPT ARGS...: runs a Python snippet with numpy as np and sys imported; fails the
# test unless it exits 0 (a failed assert prints its message).
np_check() {
  CHECKS=$((CHECKS + 1))
  local script=$1 output status=0
  shift
  output=$("$NUMPY_PYTHON" -c "import sys, numpy as np
$script" "$@" 2>&1) || status=$?
  [[ $status -eq 0 ]] || test_failed "numpy check failed: $output"
}

# has_gpu: true when `kernc info` lists a usable GPU (overwrites $OUT and $ERR).
has_gpu() {
  "$KERNC" info --format json >"$OUT" 2>"$ERR" || return 1
  [[ $(json_eval "$OUT" 'd["cuda_driver"]["available"] and len(d["cuda_driver"]["gpus"]) > 0') == true ]]
}

# ---------------------------------------------------------------------------------------------
# The cache

# Entry files under $KERNC_CACHE_DIR/entries, one path a line.
entry_files() {
  find "$KERNC_CACHE_DIR/entries" -type f -regextype posix-extended \
    -regex '.*/entries/[0-9a-f]{2}/[0-9a-f]{64}-[0-9a-f]{16}' 2>/dev/null | sort
}

expect_entry_count() {
  CHECKS=$((CHECKS + 1))
  local count
  count=$(entry_files | wc -l)
  [[ $count -eq $1 ]] || test_failed "expected $1 entry file(s) under $KERNC_CACHE_DIR/entries, found $count"
}

# keep_cache NAME: keeps a copy of this test's cache directory for later tests of the suite.
# seed_cache NAME [DIR]: DIR (default $KERNC_CACHE_DIR) starts as a copy of the one kept as
# NAME. For tests that need a cache holding examples/kernels.json but do not test compiling
# it: an earlier test compiled those entries and checked that it did (106 real compiles
# cost a suite 15-20 s of CPU each time).
keep_cache() {
  rm -rf "$SUITE_DIR/kept-$1"
  cp -a "$KERNC_CACHE_DIR" "$SUITE_DIR/kept-$1"
}
seed_cache() {
  local dir=${2:-$KERNC_CACHE_DIR}
  [[ -d $SUITE_DIR/kept-$1 ]] || test_failed "no cache kept as $1 (keep_cache $1 in an earlier test)"
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  cp -a "$SUITE_DIR/kept-$1" "$dir"
}

# Sets ENTRY to the path of the only entry file (fails unless there is exactly one).
find_only_entry() {
  expect_entry_count 1
  ENTRY=$(entry_files)
}

# expect_stat NAME VALUE: the counter NAME (as in `cache stats --format json`, e.g. disk_hits)
# is VALUE, both in the JSON and on the text line ("disk hits   1"). Overwrites $OUT and $ERR.
expect_stat() {
  local name=$1 value=$2 label=${1//_/ }
  expect_exit 0 kernc cache stats --format json
  expect_json "$OUT" "d[\"$name\"]" "$value"
  expect_exit 0 kernc cache stats
  expect_match "$OUT" "^$label +$value\$"
}

# flip_byte FILE OFFSET: inverts one byte; a negative OFFSET counts from the end.
flip_byte() {
  python3 - "$1" "$2" <<'EOF'
import sys
path, offset = sys.argv[1], int(sys.argv[2])
data = bytearray(open(path, "rb").read())
data[offset] ^= 0xFF
open(path, "wb").write(data)
EOF
}

# write_u32 FILE OFFSET VALUE: overwrites a little-endian u32 (e.g. the format version at 8).
write_u32() {
  python3 - "$1" "$2" "$3" <<'EOF'
import struct, sys
path, offset, value = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = bytearray(open(path, "rb").read())
data[offset:offset + 4] = struct.pack("<I", value)
open(path, "wb").write(data)
EOF
}

file_size() { stat -c %s "$1"; }

# ---------------------------------------------------------------------------------------------
# Sources

# write_sample_kernel FILE: an extern "C" saxpy and a template kernel (for name expressions).
write_sample_kernel() {
  cat >"$1" <<'EOF'
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T>
__global__ void scale(T* data, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}
EOF
}

# write_small_spec FILE: examples/kernels.json cut down to saxpy with its float32 signature:
# SMALL_SPEC_VARIANTS variants a target (the 16 layout classes), for tests of precompile
# mechanics that need a spec, not all of it (it compiles in a sixth of the time).
SMALL_SPEC_VARIANTS=16
write_small_spec() {
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["kernels"] = [k for k in d["kernels"] if k["name"] == "saxpy"]
d["kernels"][0]["signatures"] = ["scalar float32, float32, float32 -> float32"]
json.dump(d, open(sys.argv[2], "w"))' "$SOURCE_DIR/examples/kernels.json" "$1"
}
