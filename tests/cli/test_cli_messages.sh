# Black-box tests of a CLI that fails early and says things once (issue 34): a cache that
# cannot store is refused before compiling, summaries add up, --target repeats, kernc's own
# words instead of CLI11's or the JSON library's, each error once and naming its kernel
# once, no warnings about kernc's generated code, the ambiguous dtype "float" refused, and
# exit codes in every command's --help.
# Usage: bash test_cli_messages.sh PATH_TO_KERNC PROJECT_SOURCE_DIR

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# write_bad_spec FILE: an elementwise kernel whose operation names something undefined and
# leaves its input unused (the generated code binds it all the same).
write_bad_spec() {
  cat >"$1" <<'EOF'
{"kernels": [{"kind": "elementwise", "name": "bad", "in_params": "T x", "out_params": "T y",
  "operation": "y = undefined_thing", "signatures": ["float32 -> float32"]}]}
EOF
}

# ---------------------------------------------------------------------------------------------
TEST "precompile (and compile SPEC.json) refuse a cache that cannot store, before compiling"
write_small_spec small.json
expect_exit 4 kernc precompile small.json --target sm_90 --cache-dir /proc/kernc-cache
expect_equal "$(cat "$ERR")" "kernc: error: the cache directory is unusable, so nothing was compiled: cannot create /proc/kernc-cache: No such file or directory" "stderr"
expect_equal "$(cat "$OUT")" "" "stdout"
expect_exit 4 kernc compile small.json --target sm_90 --cache-dir /proc/kernc-cache
expect_contains "$ERR" "the cache directory is unusable, so nothing was compiled"
expect_exit 4 kernc --no-cache precompile small.json --target sm_90 -q
expect_equal "$(cat "$ERR")" "kernc: error: precompile stores what it compiles in the cache directory, and the disk cache is off (--no-cache or KERNC_CACHE_DISABLE=1); nothing was compiled" "stderr"
# A source file's compile keeps its binary and report: the cache is a by-product there.
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu --target sm_80 --cache-dir /proc/kernc-cache
expect_match "$OUT" '^sm_80 +compiled '
expect_count "$ERR" "cannot create /proc/kernc-cache" 1
# --list compiles nothing: it needs no cache it can write.
expect_exit 0 kernc precompile small.json --target sm_90 --list --cache-dir /proc/kernc-cache

TEST "a compile's summary adds up to its targets"
write_sample_kernel k.cu
expect_exit 3 kernc compile k.cu --target sm_35
expect_match "$OUT" '^sm_35 +ERROR$'
expect_contains "$OUT" "1 target(s): 0 compiled, 0 cache hit(s), 1 failed; 0 corrupt entries replaced"
expect_exit 3 kernc compile k.cu --target sm_35,sm_80
expect_contains "$OUT" "2 target(s): 1 compiled, 0 cache hit(s), 1 failed"
expect_exit 3 kernc compile k.cu --target sm_35,sm_80 --format json
expect_json "$OUT" 'd["summary"]["compiled"] + d["summary"]["cache_hits"] + d["summary"]["failed"]' 2
expect_json "$OUT" 'd["summary"]["cache_hits"]' 1

TEST "--target may be repeated, as with nvcc, and merges with comma lists"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu --target sm_80 --target sm_90
expect_match "$OUT" '^sm_80 +compiled '
expect_match "$OUT" '^sm_90 +compiled '
expect_contains "$OUT" "2 target(s): 2 compiled, 0 cache hit(s), 0 failed"
expect_exit 0 kernc compile k.cu -t sm_80,sm_90 -t sm_86
expect_contains "$OUT" "3 target(s): 1 compiled, 2 cache hit(s), 0 failed"

TEST "command-line mistakes are told in kernc's words, with the command's --help"
write_sample_kernel k.cu
expect_exit 2 kernc compile k.cu
expect_equal "$(cat "$ERR")" "kernc: error: --target is required
Run \`kernc compile --help\` for the options." "stderr"
expect_exit 2 kernc cache ls --format text --format json
expect_equal "$(head -1 "$ERR")" "kernc: error: --format is given more than once, and takes one value" "stderr"
expect_exit 2 kernc frobnicate
expect_equal "$(head -1 "$ERR")" "kernc: error: a command is needed: compile, cache, info, precompile or run" "stderr"
expect_exit 2 kernc info extra
expect_equal "$(head -1 "$ERR")" "kernc: error: unexpected argument(s): extra" "stderr"
expect_exit 2 kernc precompile k.cu -t sm_80 -j many
expect_equal "$(head -1 "$ERR")" "kernc: error: --jobs: \"many\" is not a valid value" "stderr"
for f in "$ERR"; do
  expect_not_contains "$f" "At Most"
  expect_not_contains "$f" "Run with --help"
done

TEST "a malformed spec is told in kernc's words, with its line and column"
printf '{"kernels": [\n  {x}]}\n' >bad.json
expect_exit 2 kernc precompile bad.json -t sm_80
expect_contains "$ERR" "kernc: error: bad.json: spec is not valid JSON: line 2, column 4: syntax error while parsing object key - invalid literal; last read: "
expect_not_contains "$ERR" "json.exception"

TEST "a missing spec field names the kernel once"
cat >a.json <<'EOF'
{"kernels": [{"kind": "elementwise", "name": "a", "in_params": "T x", "operation": "y = x"}]}
EOF
expect_exit 2 kernc precompile a.json -t sm_80
expect_equal "$(cat "$ERR")" "kernc: error: a.json: kernel a: missing field \"out_params\"" "stderr"

TEST "an error in a snippet is printed once, without warnings about the generated code"
write_bad_spec bad.json
expect_exit 1 kernc precompile bad.json -t sm_80 -q
expect_count "$ERR" 'identifier "undefined_thing" is undefined' 1
expect_contains "$ERR" "kernc: error: kernel bad (float32 -> float32 "
expect_contains "$ERR" "bad operation, line 1: error: identifier \"undefined_thing\" is undefined"
expect_not_contains "$ERR" "_v_x"
expect_not_contains "$ERR" "declared but never referenced"
expect_exit 1 kernc run bad.json -k bad --in x=random:8:float32 --device cpu
expect_count "$ERR" "was not declared in this scope" 1
expect_not_contains "$ERR" "_v_x"
expect_not_contains "$ERR" "warning"

TEST "the dtype \"float\" is refused as ambiguous, naming float32 and float64"
cat >f.json <<'EOF'
{"kernels": [{"kind": "elementwise", "name": "f", "in_params": "T x", "out_params": "T y",
  "operation": "y = x", "signatures": ["float -> float"]}]}
EOF
expect_exit 2 kernc precompile f.json -t sm_80
expect_equal "$(cat "$ERR")" "kernc: error: f.json: kernel f: signature \"float -> float\": \"float\" is ambiguous (NumPy's float is float64, CUDA's float is float32): write float32 or float64" "stderr"
sed -i 's/float -> float/float32 -> float32/' f.json
expect_exit 2 kernc run f.json -k f --in x=random:8:float --device cpu
expect_contains "$ERR" "\"float\" is ambiguous (NumPy's float is float64, CUDA's float is float32): write float32 or float64"

TEST "every command's --help lists its exit codes"
for command in "" compile precompile run info cache "cache stats" "cache ls" "cache verify" "cache prune" \
               "cache clear" "cache inspect" "cache merge" "cache check" "cache explain"; do
  # shellcheck disable=SC2086  # "cache ls" is two words
  expect_exit 0 kernc $command --help
  expect_contains "$OUT" "Exit codes:"
  expect_match "$OUT" '^  0 +ok$'
  expect_match "$OUT" '^  2 +bad command line'
  expect_match "$OUT" '^  70 +internal error'
done
expect_exit 0 kernc run --help
expect_match "$OUT" '^  7 +no usable GPU'
expect_match "$OUT" '^  8 +not precompiled'
expect_exit 0 kernc cache check --help
expect_match "$OUT" '^  8 +not precompiled'

finish
