# Black-box tests of `kernc info` and `kernc --version`: the compilers found, what they
# support, and where each setting came from.
# Usage: bash test_info.sh PATH_TO_KERNC [PROJECT_SOURCE_DIR]

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# ---------------------------------------------------------------------------------------------
TEST "--version prints 0.2.0"
expect_exit 0 kernc --version
expect_match "$OUT" '^(kernc )?0\.2\.0$'

# ---------------------------------------------------------------------------------------------
TEST "info shows both compilers and their targets"
expect_exit 0 kernc info
expect_match "$OUT" '^kernc 0\.2\.0$'
expect_match "$OUT" '^nvrtc +[0-9]+\.[0-9]+ \(.*libnvrtc'
expect_match "$OUT" '^ +targets: .*\bsm_90\b'
expect_match "$OUT" '^hiprtc +[0-9.]+(\+comgr[0-9.]+)? \('
expect_match "$OUT" '^ +targets: .*\bgfx90a\b'
expect_match "$OUT" '^driver '
# This build has hiredis (tools/install-deps installs libhiredis-dev): the library loads.
expect_match "$OUT" '^redis +hiredis \(.*libhiredis\.so\.[0-9.]+\): KERNC_REMOTE_CACHE can be used$'
expect_match "$OUT" "^ +cache dir +$KERNC_CACHE_DIR +\\(KERNC_CACHE_DIR\\)\$"
expect_match "$OUT" '^ +cache max size +4\.0 GiB +\(default\)$'
expect_match "$OUT" '^ +log level +warn +\(default\)$'

# ---------------------------------------------------------------------------------------------
TEST "info shows the toolkit include directories NVRTC is given, and KERNC_CUDA_INCLUDE overrides them"
expect_exit 0 kernc info
expect_match "$OUT" '^ +includes: /.*/include /.*/include/cccl \((CUDA_HOME|next to .*|/usr/local/cuda)\)$'
expect_match "$OUT" '^ +headers: cuda [0-9]+, cccl [0-9]+, [0-9]+ files sha256:[0-9a-f]{16}$'
default_tag=$(sed -n '/^nvrtc/,/^hiprtc/p' "$OUT" | sed -n 's/^ *cache tag: //p' | head -1)
KERNC_CUDA_INCLUDE=none expect_exit 0 kernc info
expect_match "$OUT" '^ +includes: none \(KERNC_CUDA_INCLUDE\)$'
expect_match "$OUT" '^ +cuda include +none +\(KERNC_CUDA_INCLUDE\)$'
none_tag=$(sed -n '/^nvrtc/,/^hiprtc/p' "$OUT" | sed -n 's/^ *cache tag: //p' | head -1)
[[ -n $default_tag && -n $none_tag && $default_tag != "$none_tag" ]] ||
  test_failed "the cache tag should change with the include directories: '$default_tag' vs '$none_tag'"
KERNC_CUDA_INCLUDE=/nonexistent/kernc-include expect_exit 0 kernc info
expect_match "$OUT" '^nvrtc +not available: KERNC_CUDA_INCLUDE: /nonexistent/kernc-include is not a directory'

# ---------------------------------------------------------------------------------------------
TEST "info --format json"
expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["version"]' 0.2.0
expect_json "$OUT" 'd["nvrtc"]["available"]' true
expect_json "$OUT" '"sm_90" in d["nvrtc"]["supported_targets"]' true
expect_json "$OUT" '"sm_30" in d["nvrtc"]["supported_targets"]' false
expect_json "$OUT" 'bool(re.fullmatch("[0-9a-f]{16}", d["nvrtc"]["cache_tag"]))' true
expect_json "$OUT" 'd["settings"]["compile"]' '{"source": "default", "value": "auto"}'
expect_json "$OUT" 'd["hiprtc"]["available"]' true
expect_json "$OUT" '"gfx90a" in d["hiprtc"]["supported_targets"]' true
# No GPU is needed; whether one is there depends on the machine.
expect_json "$OUT" 'isinstance(d["cuda_driver"]["available"], bool)' true
expect_json "$OUT" 'isinstance(d["cuda_driver"]["gpus"], list)' true
expect_json "$OUT" 'd["cuda_driver"]["available"] or "problem" in d["cuda_driver"]' true
expect_json "$OUT" 'd["remote_cache"]["available"]' true
expect_json "$OUT" 'd["settings"]["cache_dir"]["value"]' "$KERNC_CACHE_DIR"
expect_json "$OUT" 'd["settings"]["cache_dir"]["source"]' KERNC_CACHE_DIR
expect_json "$OUT" 'd["settings"]["cache_max_size"]["source"]' default
expect_json "$OUT" 'd["settings"]["cache_disabled"]["value"]' false

# ---------------------------------------------------------------------------------------------
TEST "info names the source of each setting"
KERNC_CACHE_MAX_SIZE=512M KERNC_CACHE_DISABLE=1 KERNC_LOG_LEVEL=error expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["settings"]["cache_max_size"]["value"]' $((512 * 1024 * 1024))
expect_json "$OUT" 'd["settings"]["cache_max_size"]["source"]' KERNC_CACHE_MAX_SIZE
expect_json "$OUT" 'd["settings"]["cache_disabled"]["value"]' true
expect_json "$OUT" 'd["settings"]["cache_disabled"]["source"]' KERNC_CACHE_DISABLE
expect_json "$OUT" 'd["settings"]["log_level"]["source"]' KERNC_LOG_LEVEL
unset KERNC_CACHE_DIR
XDG_CACHE_HOME=$TEST_DIR/xdg expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["settings"]["cache_dir"]["value"]' "$TEST_DIR/xdg/kernc"
expect_json "$OUT" 'd["settings"]["cache_dir"]["source"]' XDG_CACHE_HOME
expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["settings"]["cache_dir"]["value"]' "$HOME/.cache/kernc"
expect_json "$OUT" 'd["settings"]["cache_dir"]["source"]' HOME

# ---------------------------------------------------------------------------------------------
TEST "info with --cache-dir says the value came from --cache-dir"
expect_exit 0 kernc --cache-dir "$TEST_DIR/elsewhere" info
expect_match "$OUT" "^ +cache dir +$TEST_DIR/elsewhere +\\(--cache-dir\\)\$"
expect_exit 0 kernc --cache-dir "$TEST_DIR/elsewhere" info --format json
expect_json "$OUT" 'd["settings"]["cache_dir"]["value"]' "$TEST_DIR/elsewhere"
expect_json "$OUT" 'd["settings"]["cache_dir"]["source"]' --cache-dir

# ---------------------------------------------------------------------------------------------
TEST "info with a missing NVRTC library still exits 0 and says why"
KERNC_NVRTC_LIBRARY=/nonexistent/libnvrtc.so expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["nvrtc"]["available"]' false
expect_json "$OUT" '"/nonexistent/libnvrtc.so" in d["nvrtc"]["problem"]' true
expect_json "$OUT" 'd["settings"]["nvrtc_library"]["source"]' KERNC_NVRTC_LIBRARY
expect_json "$OUT" 'd["hiprtc"]["available"]' true
KERNC_NVRTC_LIBRARY=/nonexistent/libnvrtc.so expect_exit 0 kernc info
expect_match "$OUT" '^nvrtc +not available: '
expect_contains "$OUT" "/nonexistent/libnvrtc.so"

# ---------------------------------------------------------------------------------------------
TEST "info rejects a malformed setting with exit 2"
KERNC_CACHE_MAX_SIZE=garbage expect_exit 2 kernc info
expect_contains "$ERR" "KERNC_CACHE_MAX_SIZE"
KERNC_LOG_LEVEL=chatty expect_exit 2 kernc info
expect_contains "$ERR" "KERNC_LOG_LEVEL"
expect_contains "$ERR" "trace, debug, info, warn (or warning), error, critical and off"
expect_exit 2 kernc --log-level verbose info
expect_contains "$ERR" '--log-level: unknown log level "verbose"'
KERNC_NVTX=yes expect_exit 2 kernc info
expect_contains "$ERR" 'KERNC_NVTX must be 0 or 1, not "yes"'
expect_exit 2 kernc info --format yaml

# ---------------------------------------------------------------------------------------------
TEST "level names are read in any case and shown as kernc names them; KERNC_NVTX is shown"
KERNC_LOG_LEVEL=WARNING expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["settings"]["log_level"]["value"]' warn
expect_exit 0 kernc info --format json --log-level ERROR
expect_json "$OUT" 'd["settings"]["log_level"]["value"]' error
KERNC_NVTX=1 expect_exit 0 kernc info
expect_match "$OUT" '^ +nvtx ranges +on +\(KERNC_NVTX\)$'

# ---------------------------------------------------------------------------------------------
TEST "info shows the compile worker settings: in-process by default, the CLI itself as the worker"
expect_exit 0 kernc info
expect_match "$OUT" '^ +compile workers +0 \(compiles run in the calling process\) +\(default\)$'
expect_match "$OUT" '^ +compile worker +/proc/self/exe +\(the kernc CLI itself\)$'
KERNC_COMPILE_WORKERS=6 KERNC_COMPILE_WORKER=/opt/kernc/bin/kernc expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["settings"]["compile_workers"]' '{"source": "KERNC_COMPILE_WORKERS", "value": 6}'
expect_json "$OUT" 'd["settings"]["compile_worker"]' '{"source": "KERNC_COMPILE_WORKER", "value": "/opt/kernc/bin/kernc"}'
KERNC_COMPILE_WORKERS=auto expect_exit 0 kernc info --format json
expect_json "$OUT" 'd["settings"]["compile_workers"]["value"] >= 1' true
KERNC_COMPILE_WORKERS=-2 expect_exit 2 kernc info
expect_contains "$ERR" 'KERNC_COMPILE_WORKERS must be a number of compile worker processes from 0 (compile in this process) to 1024, or auto (one per hardware thread), not "-2"'

# ---------------------------------------------------------------------------------------------
# cli_context.hpp documents the global flags as "Flags every subcommand accepts", and
# `kernc cache ls --cache-dir X` is how people type it. (CLI11 matches a parent's options
# after a subcommand only when the subcommand falls through to its parent.)
TEST "global flags are accepted after the subcommand"
expect_exit 0 kernc info --cache-dir "$TEST_DIR/elsewhere"
expect_match "$OUT" "^ +cache dir +$TEST_DIR/elsewhere +\\(--cache-dir\\)\$"
expect_exit 0 kernc info --format json --log-level error
expect_json "$OUT" 'd["settings"]["log_level"]["source"]' --log-level
expect_exit 0 kernc cache ls --cache-dir "$TEST_DIR/elsewhere"
expect_contains "$OUT" "0 entries"
write_sample_kernel k.cu
expect_exit 0 kernc compile k.cu -t sm_90 --no-cache
expect_match "$OUT" '^sm_90 +compiled '
expect_entry_count 0

finish
