#!/usr/bin/env bash
# Black-box tests of the shared Redis tier (KERNC_REMOTE_CACHE, docs/remote-cache.md) with a
# real redis-server on loopback: two "machines" (two cache directories) sharing one server,
# a server killed mid-run, and credentials kept out of everything kernc prints.
# Usage: bash test_remote_cache.sh PATH_TO_KERNC PROJECT_SOURCE_DIR
# shellcheck source=tests/cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

SPEC="$SOURCE_DIR/examples/kernels.json"
REDIS_SERVER=$(command -v redis-server || true)
[[ -n $REDIS_SERVER ]] || { echo "$SUITE: redis-server not found (tools/install-deps installs it)" >&2; exit 1; }
REDIS_DIR="$SUITE_DIR/redis"
mkdir -p "$REDIS_DIR"
REDIS_PID=""

# start_redis [ARGS...]: a server on a free loopback port, in its own directory; sets PORT.
start_redis() {
  PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$REDIS_SERVER" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$REDIS_DIR" \
    --logfile "$REDIS_DIR/redis.log" "$@" &
  REDIS_PID=$!
  for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.1)" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "redis-server did not start; see $REDIS_DIR/redis.log" >&2
  exit 1
}
stop_redis() {
  [[ -n $REDIS_PID ]] && kill -9 "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  REDIS_PID=""
}
trap 'stop_redis; cleanup' EXIT

start_redis

TEST "two machines, one Redis: the second precompile compiles nothing and fills its own disk"
export KERNC_REMOTE_CACHE="redis://127.0.0.1:$PORT/0?prefix=cli-$$"
KERNC_CACHE_DIR=$PWD/machine-a expect_exit 0 kernc precompile "$SPEC" --target sm_90 -q
expect_match "$OUT" ': 106 compiled, 0 cache hit\(s\), 0 failed'
KERNC_CACHE_DIR=$PWD/machine-a expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["remote_writes"]' 106
expect_json "$OUT" 'd["remote_misses"]' 106
start=$(date +%s%N)
KERNC_CACHE_DIR=$PWD/machine-b expect_exit 0 kernc precompile "$SPEC" --target sm_90 -q
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
expect_match "$OUT" ': 0 compiled, 106 cache hit\(s\) \(106 copied from the remote tier\), 0 failed'
echo "  machine B: 106 programs from Redis in $elapsed_ms ms"
KERNC_CACHE_DIR=$PWD/machine-b expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["compiles"]' 0
expect_json "$OUT" 'd["remote_hits"]' 106
expect_json "$OUT" 'd["remote_writes"]' 0
expect_json "$OUT" 'd["entries"]' 106
KERNC_CACHE_DIR=$PWD/machine-b expect_exit 0 kernc cache stats
expect_contains "$OUT" "remote hits       106"
# Machine B's disk now answers by itself: a third run asks Redis nothing.
KERNC_CACHE_DIR=$PWD/machine-b expect_exit 0 kernc precompile "$SPEC" --target sm_90 -q
KERNC_CACHE_DIR=$PWD/machine-b expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["remote_hits"] + d["remote_misses"]' 106
# What machine B loaded is byte for byte what machine A built.
for entry in machine-a/entries/*/*; do
  other=machine-b/entries/$(basename "$(dirname "$entry")")/$(basename "$entry")
  cmp -s "$entry" "$other" || test_failed "$other differs from $entry"
done
CHECKS=$((CHECKS + 1))

TEST "a precompile split in 4 shards over 4 machines fills the shared tier exactly as one job would"
export KERNC_REMOTE_CACHE="redis://127.0.0.1:$PORT/3"
# The 16 layout classes of saxpy: the whole spec went through Redis in the test above.
write_small_spec small.json
for k in 1 2 3 4; do
  KERNC_CACHE_DIR=$PWD/job-$k expect_exit 0 kernc precompile small.json --target sm_90 -q --shard $k/4
  expect_match "$OUT" "^shard $k/4: 4 of the $SMALL_SPEC_VARIANTS program\\(s\\)"
  expect_match "$OUT" ': 4 compiled, 0 cache hit\(s\), 0 failed'
done
KERNC_CACHE_DIR=$PWD/gpu-node expect_exit 0 kernc precompile small.json --target sm_90 -q
expect_match "$OUT" ": 0 compiled, $SMALL_SPEC_VARIANTS cache hit\\(s\\) \\($SMALL_SPEC_VARIANTS copied from the remote tier\\), 0 failed"
KERNC_CACHE_DIR=$PWD/gpu-node expect_exit 0 kernc precompile small.json --target sm_90 --list
cut -d' ' -f1 "$OUT" | sort > expected-keys
ls gpu-node/entries/*/ | grep -v ':$' | grep . | sort > node-keys
cmp -s expected-keys node-keys || test_failed "the node's entries differ from the unsharded precompile's keys"
cat job-*/entries/*/* | cmp -s - /dev/null && test_failed "the jobs stored nothing"
CHECKS=$((CHECKS + 1))

TEST "a read-only reader never publishes"
export KERNC_REMOTE_CACHE="redis://127.0.0.1:$PORT/1?read_only=1"
expect_exit 0 kernc compile "$SOURCE_DIR/examples/saxpy.cu" --target sm_90
expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["compiles"]' 1
expect_json "$OUT" 'd["remote_misses"]' 1
expect_json "$OUT" 'd["remote_writes"]' 0

TEST "a server killed mid-run costs one error, and every kernel still compiles"
# backoff=1h: one backoff period covers the whole run however slow the machine (106
# compiles under a sanitizer on a loaded machine took longer than the default 30 s, and the
# retry after it is a second error).
export KERNC_REMOTE_CACHE="redis://127.0.0.1:$PORT/2?connect_timeout=500ms&timeout=500ms&backoff=1h"
expect_exit 0 kernc compile "$SOURCE_DIR/examples/saxpy.cu" --target sm_90
stop_redis
# -j 1: requests in flight on several threads when the server dies each fail once.
write_small_spec small.json
start=$(date +%s%N)
expect_exit 0 kernc precompile small.json --target sm_90 -q -j 1
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
expect_match "$OUT" ": $SMALL_SPEC_VARIANTS compiled, 0 cache hit\\(s\\), 0 failed"
expect_contains "$ERR" "skipping it for 3600000 ms"
expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["remote_errors"]' 1
expect_json "$OUT" "d[\"remote_skipped\"] >= $SMALL_SPEC_VARIANTS" true
expect_json "$OUT" 'd["remote_ms"] < 500' true
echo "  $SMALL_SPEC_VARIANTS compiles with the server dead: $elapsed_ms ms in all"
start_redis

TEST "credentials appear nowhere in what kernc prints"
stop_redis
start_redis --requirepass 'pa55-w0rd-xyz'
export KERNC_REMOTE_CACHE="redis://default:pa55-w0rd-xyz@127.0.0.1:$PORT/0"
expect_exit 0 kernc compile "$SOURCE_DIR/examples/saxpy.cu" --target sm_90
expect_exit 0 kernc info
expect_contains "$OUT" "redis://default:***@127.0.0.1:$PORT/0"
expect_not_contains "$OUT" "pa55-w0rd-xyz"
expect_exit 0 kernc info --format json
expect_not_contains "$OUT" "pa55-w0rd-xyz"
expect_exit 0 kernc cache stats --format json
expect_json "$OUT" 'd["remote_writes"]' 1
expect_not_contains "$OUT" "pa55-w0rd-xyz"
export KERNC_REMOTE_CACHE="redis://default:wr0ng-pa55@127.0.0.1:$PORT/0"
expect_exit 0 kernc --no-cache compile "$SOURCE_DIR/examples/saxpy.cu" --target sm_90
expect_contains "$ERR" "WRONGPASS"
expect_not_contains "$ERR" "wr0ng-pa55"
expect_not_contains "$OUT" "wr0ng-pa55"
export KERNC_REMOTE_CACHE="redis://default:wr0ng-pa55@127.0.0.1:$PORT/0?colour=red"
expect_exit 2 kernc info
expect_contains "$ERR" 'KERNC_REMOTE_CACHE: remote cache URL: unknown option "colour"'
expect_not_contains "$ERR" "wr0ng-pa55"

finish
