#!/usr/bin/env bash
# The precompile-in-CI flow: step 1 runs anywhere (no GPU needed) and fills a cache for
# the GPU architectures you deploy to; step 2 runs on the GPU machine with zero compiles.
# Usage: precompile_flow.sh KERNC_BINARY RUN_PRECOMPILED_BINARY SPEC CACHE_DIR [TARGETS]
# Without TARGETS: this machine's GPU architecture, or sm_90 when there is no GPU.
set -euo pipefail
kernc=$1 runner=$2 spec=$3 cache=$4 targets=${5:-}
if [ -z "$targets" ]; then
  targets=$("$kernc" info --format json | python3 -c '
import json, sys
gpus = json.load(sys.stdin)["cuda_driver"]["gpus"]
print(gpus[0]["arch"] if gpus else "sm_90")')
fi
rm -rf "$cache"
echo "step 1: kernc precompile $spec --target $targets"
KERNC_CACHE_DIR=$cache "$kernc" precompile "$spec" --target "$targets" -q
echo "step 2: run from that cache"
status=0
"$runner" "$spec" "$cache" || status=$?
exit $status
