#!/usr/bin/env bash
# docs/cli.md is the CLI's own --help output (tools/update-cli-docs): fails when they differ.
# Usage: bash test_cli_reference.sh PATH_TO_KERNC PROJECT_SOURCE_DIR
set -euo pipefail
kernc=$(realpath "$1")
source_dir=$(realpath "$2")
generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
"$source_dir/tools/update-cli-docs" "$kernc" "$generated" >/dev/null
if ! diff -u "$source_dir/docs/cli.md" "$generated"; then
  echo "FAILED: docs/cli.md differs from the CLI's --help (the diff above); run tools/update-cli-docs" >&2
  exit 1
fi
echo "PASSED: docs/cli.md matches --help of $(grep -c '^## kernc' "$generated") commands"
