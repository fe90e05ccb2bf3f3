# Black-box tests of `kernc cache ls|inspect|verify|prune|clear|stats` and of the cache
# settings (KERNC_CACHE_MAX_SIZE, KERNC_CACHE_DISABLE, an unusable cache directory).
# Usage: bash test_cache_commands.sh PATH_TO_KERNC [PROJECT_SOURCE_DIR]

# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# Fills the cache with two entries: k.cu for sm_90 (with a name expression) and for gfx90a.
# Sets SM90_KEY and GFX_KEY from `cache ls --format json`.
compile_two_kernels() {
  write_sample_kernel k.cu
  expect_exit 0 kernc compile k.cu -t sm_90 -n 'scale<float>'
  expect_exit 0 kernc compile k.cu -t gfx90a
  expect_entry_count 2
  expect_exit 0 kernc cache ls --format json
  cp "$OUT" ls.json
  SM90_KEY=$(json_eval ls.json '[e["key"] for e in d if e["target"] == "sm_90"][0]') ||
    test_failed "no sm_90 entry in cache ls --format json"
  GFX_KEY=$(json_eval ls.json '[e["key"] for e in d if e["target"] == "gfx90a"][0]') ||
    test_failed "no gfx90a entry in cache ls --format json"
}

# A hex prefix that starts no key in the cache.
unused_prefix() {
  local digit
  for digit in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do
    if [[ ${SM90_KEY:0:1} != "$digit" && ${GFX_KEY:0:1} != "$digit" ]]; then
      echo "${digit}0000000"
      return
    fi
  done
}

# ---------------------------------------------------------------------------------------------
TEST "cache ls lists the entries, as text and as JSON"
compile_two_kernels
expect_exit 0 kernc cache ls
expect_contains "$OUT" "2 entries"
expect_match "$OUT" "^KEY +KERNEL +VARIANT +TARGET +COMPILER +SIZE +LAST USED$"
expect_match "$OUT" "^${SM90_KEY:0:12} +k\.cu +- +sm_90 +nvrtc "
expect_match "$OUT" "^${GFX_KEY:0:12} +k\.cu +- +gfx90a +hiprtc "
expect_not_contains "$OUT" "BAD"
expect_json ls.json 'len(d)' 2
expect_json ls.json 'all(re.fullmatch("[0-9a-f]{64}-[0-9a-f]{16}", e["key"]) for e in d)' true
expect_json ls.json 'sorted(e["target"] for e in d)' '["gfx90a", "sm_90"]'
expect_json ls.json '[e["lowered_names"] for e in d if e["target"] == "sm_90"][0]["scale<float>"]' \
  _Z5scaleIfEvPT_S0_i
expect_json ls.json 'all(e["size_bytes"] > 56 for e in d)' true
# The keys are the entry files' names, in their two-digit shard.
expect_file_exists "$KERNC_CACHE_DIR/entries/${SM90_KEY:0:2}/$SM90_KEY"
expect_file_exists "$KERNC_CACHE_DIR/entries/${GFX_KEY:0:2}/$GFX_KEY"

# ---------------------------------------------------------------------------------------------
TEST "cache ls on an empty cache"
expect_exit 0 kernc cache ls
expect_contains "$OUT" "0 entries"
expect_exit 0 kernc cache ls --format json
expect_json "$OUT" 'd' '[]'

# ---------------------------------------------------------------------------------------------
TEST "cache inspect PREFIX shows the entry"
compile_two_kernels
expect_exit 0 kernc cache inspect "${SM90_KEY:0:8}"
expect_match "$OUT" "^key +$SM90_KEY\$"
expect_match "$OUT" '^target +sm_90 \(cubin\)'
expect_match "$OUT" '^compiler +nvrtc '
expect_contains "$OUT" "-arch=sm_90"
expect_contains "$OUT" "scale<float> -> _Z5scaleIfEvPT_S0_i"
expect_exit 0 kernc cache inspect "${GFX_KEY:0:8}"
expect_match "$OUT" '^target +gfx90a \(hsaco\)'
expect_match "$OUT" '^compiler +hiprtc '
# The whole key works too.
expect_exit 0 kernc cache inspect "$SM90_KEY"
expect_match "$OUT" "^key +$SM90_KEY\$"

# ---------------------------------------------------------------------------------------------
TEST "cache inspect --format json and --extract"
compile_two_kernels
expect_exit 0 kernc cache inspect "${SM90_KEY:0:8}" --format json --extract sm90.bin
expect_json "$OUT" 'd["key"]' "$SM90_KEY"
expect_json "$OUT" 'd["target"]' sm_90
expect_json "$OUT" 'd["binary_kind"]' cubin
expect_json "$OUT" '"-arch=sm_90" in d["flags"]' true
expect_json "$OUT" 'd["lowered_names"]["scale<float>"]' _Z5scaleIfEvPT_S0_i
expect_elf sm90.bin
expect_json "$OUT" 'd["payload_bytes"]' "$(file_size sm90.bin)"
# The extracted binary is the one `compile -o` writes.
expect_exit 0 kernc compile k.cu -t sm_90 -n 'scale<float>' -o compiled.cubin
CHECKS=$((CHECKS + 1))
cmp -s sm90.bin compiled.cubin || test_failed "inspect --extract wrote other bytes than compile -o"
expect_exit 0 kernc cache inspect "${GFX_KEY:0:8}" --extract gfx.bin
expect_contains "$OUT" "wrote"
expect_elf gfx.bin

# ---------------------------------------------------------------------------------------------
TEST "cache inspect of an unknown key exits 6, of a non-hex one 2"
compile_two_kernels
expect_exit 6 kernc cache inspect "$(unused_prefix)"
expect_contains "$ERR" "$(unused_prefix)"
expect_exit 2 kernc cache inspect not-a-key
expect_contains "$ERR" "not-a-key"
expect_exit 2 kernc cache inspect ''
expect_exit 2 kernc cache inspect

# ---------------------------------------------------------------------------------------------
TEST "cache verify: clean, then damaged (5), then --fix"
compile_two_kernels
expect_exit 0 kernc cache verify
expect_contains "$OUT" "2 checked, 0 bad"
expect_exit 0 kernc cache verify --format json
expect_json "$OUT" 'd["checked"]' 2
expect_json "$OUT" 'd["bad"]' '[]'
sm90_entry=$KERNC_CACHE_DIR/entries/${SM90_KEY:0:2}/$SM90_KEY
flip_byte "$sm90_entry" $(($(file_size "$sm90_entry") - 10))
expect_exit 5 kernc cache verify
expect_contains "$OUT" "$SM90_KEY"
expect_not_contains "$OUT" "$GFX_KEY"
expect_contains "$OUT" "2 checked, 1 bad, 0 removed"
expect_exit 5 kernc cache verify --format json
expect_json "$OUT" 'len(d["bad"])' 1
expect_json "$OUT" 'd["bad"][0]["path"].rsplit("/", 1)[-1]' "$SM90_KEY"
expect_json "$OUT" 'd["removed"]' 0
# ls still lists it, marked, and inspect refuses it with exit 5.
expect_exit 0 kernc cache ls
expect_match "$OUT" "^${SM90_KEY:0:12} .*BAD"
expect_exit 5 kernc cache inspect "${SM90_KEY:0:8}"
expect_contains "$ERR" "$SM90_KEY"
expect_exit 0 kernc cache verify --fix
expect_contains "$OUT" "2 checked, 1 bad, 1 removed"
expect_file_missing "$sm90_entry"
expect_entry_count 1
expect_exit 0 kernc cache verify
expect_contains "$OUT" "1 checked, 0 bad"

# ---------------------------------------------------------------------------------------------
TEST "cache prune --max-size 1 removes every entry"
compile_two_kernels
expect_exit 0 kernc cache prune --max-size 1
expect_contains "$OUT" "removed 2 entries"
expect_entry_count 0
expect_stat evictions 2
expect_exit 0 kernc cache ls
expect_contains "$OUT" "0 entries"
# A cap above the size keeps everything.
compile_two_kernels
expect_exit 0 kernc cache prune --max-size 1G
expect_contains "$OUT" "removed 0 entries"
expect_entry_count 2
expect_exit 2 kernc cache prune --max-size lots
expect_contains "$ERR" "--max-size"
expect_entry_count 2

# ---------------------------------------------------------------------------------------------
TEST "cache stats counts the host compiler's precompiled headers, and cache clear removes them too"
write_small_spec small.json
# The saxpy variant's layout classes are several programs of one header set: the second
# compile makes the PCH (NOTE [ host precompiled headers ]).
expect_exit 0 kernc precompile small.json --target cpu-x86-64 -j 1 -q
CHECKS=$((CHECKS + 1))
pchs=("$KERNC_CACHE_DIR"/pch/pch-host-*.hpp.gch)
[[ -f ${pchs[0]} ]] || test_failed "no host PCH in $KERNC_CACHE_DIR/pch after a precompile"
CHECKS=$((CHECKS + 1))
[[ $(stat -c %a "${pchs[0]}") == 600 ]] || test_failed "the host PCH is mode $(stat -c %a "${pchs[0]}"), not 600"
# cache stats counts them beside the entries: the files and bytes find sees in pch/.
pch_files=$(find "$KERNC_CACHE_DIR/pch" -type f -name 'pch-*' | wc -l)
pch_bytes=$(find "$KERNC_CACHE_DIR/pch" -type f -name 'pch-*' -printf '%s\n' | awk '{s += $1} END {print s + 0}')
expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["precompiled_header_files"]' "$pch_files"
expect_json "$OUT" 'd["precompiled_header_bytes"]' "$pch_bytes"
expect_json "$OUT" 'd["precompiled_header_bytes"] > 1000000' true
expect_exit 0 kernc cache stats
expect_match "$OUT" "^precompiled hdrs +$pch_files file\\(s\\), "
expect_exit 0 kernc cache clear
CHECKS=$((CHECKS + 1))
[[ -z $(ls -A "$KERNC_CACHE_DIR/pch") ]] || test_failed "cache clear left $(ls "$KERNC_CACHE_DIR/pch")"
expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["precompiled_header_files"]' 0

# ---------------------------------------------------------------------------------------------
TEST "cache clear removes every entry"
compile_two_kernels
expect_exit 0 kernc cache clear
expect_contains "$OUT" "removed 2 entries"
expect_entry_count 0
expect_exit 0 kernc cache ls
expect_contains "$OUT" "0 entries"
expect_exit 0 kernc cache verify
expect_contains "$OUT" "0 checked"
# The next compile misses.
expect_exit 0 kernc compile k.cu -t sm_90 -n 'scale<float>'
expect_match "$OUT" '^sm_90 +compiled '

# ---------------------------------------------------------------------------------------------
TEST "cache stats --zero resets the counters"
compile_two_kernels
expect_exit 0 kernc compile k.cu -t gfx90a
expect_stat compiles 2
expect_stat disk_hits 1
expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["entries"]' 2
expect_exit 0 kernc cache stats --zero
expect_stat compiles 0
expect_stat disk_hits 0
expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["entries"]' 2
expect_json "$OUT" 'd["compile_ms"]' 0.0

# ---------------------------------------------------------------------------------------------
TEST "KERNC_CACHE_MAX_SIZE=garbage exits 2 naming the variable"
write_sample_kernel k.cu
KERNC_CACHE_MAX_SIZE=garbage expect_exit 2 kernc compile k.cu -t sm_90
expect_contains "$ERR" "KERNC_CACHE_MAX_SIZE"
expect_contains "$ERR" "garbage"
KERNC_CACHE_MAX_SIZE=garbage expect_exit 2 kernc cache stats
expect_contains "$ERR" "KERNC_CACHE_MAX_SIZE"
expect_entry_count 0
KERNC_CACHE_MAX_SIZE=512M expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["max_size_bytes"]' $((512 * 1024 * 1024))

# ---------------------------------------------------------------------------------------------
TEST "KERNC_CACHE_DISABLE=1 compiles without writing entries"
write_sample_kernel k.cu
KERNC_CACHE_DISABLE=1 expect_exit 0 kernc compile k.cu -t sm_90
expect_match "$OUT" '^sm_90 +compiled '
KERNC_CACHE_DISABLE=1 expect_exit 0 kernc compile k.cu -t sm_90
expect_match "$OUT" '^sm_90 +compiled '
expect_entry_count 0
expect_file_missing "$KERNC_CACHE_DIR/stats.json"
expect_exit 0 kernc --no-cache compile k.cu -t sm_90
expect_match "$OUT" '^sm_90 +compiled '
expect_entry_count 0
KERNC_CACHE_DISABLE=yes expect_exit 2 kernc compile k.cu -t sm_90
expect_contains "$ERR" "KERNC_CACHE_DISABLE"

# ---------------------------------------------------------------------------------------------
TEST "a cache directory shared with other users is refused"
write_sample_kernel k.cu
mkdir "$KERNC_CACHE_DIR"
chmod 0777 "$KERNC_CACHE_DIR"
expect_exit 0 kernc compile k.cu -t sm_90
expect_match "$OUT" '^sm_90 +compiled '
expect_contains "$ERR" "warning"
expect_contains "$ERR" "writable by other users"
expect_entry_count 0
expect_exit 4 kernc cache ls
expect_contains "$ERR" "writable by other users"

# ---------------------------------------------------------------------------------------------
TEST "a cache directory under a regular file: compile warns once and works"
write_sample_kernel k.cu
touch not-a-directory
export KERNC_CACHE_DIR=$TEST_DIR/not-a-directory/cache
expect_exit 0 kernc compile k.cu -t sm_90
expect_match "$OUT" '^sm_90 +compiled '
expect_contains "$ERR" "warning"
expect_contains "$ERR" "not-a-directory/cache"
expect_not_contains "$ERR" "internal error"
# Looking after the cache is the point of `kernc cache`: there an unusable directory is an error.
expect_exit 4 kernc cache ls
expect_contains "$ERR" "not-a-directory/cache"
# One warning, not the library's log line and the CLI's own line saying the same thing twice.
expect_exit 0 kernc compile k.cu -t sm_90
expect_count "$ERR" "not-a-directory/cache" 1

finish
