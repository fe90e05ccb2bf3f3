#!/usr/bin/env bash
# Consumer builds (ctest label "consumer"): a tiny program outside kernc's tree compiles a
# kernel through kernc, linked four ways — find_package against an installed prefix,
# pkg-config against the same prefix, add_subdirectory (static), FetchContent (shared).
# Usage: bash run.sh KERNC_BUILD_DIR KERNC_SOURCE_DIR
set -euo pipefail
build_dir=$(realpath "$1")
source_dir=$(realpath "$2")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kernc-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
version=$(sed -n 's/^project(kernc VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
fail() { echo "consumer: FAILED: $*" >&2; exit 1; }
# The source builds (add_subdirectory, FetchContent) test packaging, not speed or
# debugging: Debug compiles in half the time of Release, and without -g (emptied
# CMAKE_CXX_FLAGS_DEBUG) in 14% less again.
consumer_build_type=Debug
consumer_flags=(-DCMAKE_BUILD_TYPE="$consumer_build_type" -DCMAKE_CXX_FLAGS_DEBUG=)

# run_consumer NAME BINARY: runs a consumer and checks what it printed.
run_consumer() {
  local output
  # A cache of its own: each consumer really compiles with NVRTC.
  output=$(KERNC_CACHE_DIR="$work/cache-$1" "$2") || fail "$1: the consumer exited non-zero: $output"
  [[ $output == "consumer: kernc $version compiled saxpy.cu for sm_90: "*"-byte ELF cubin, compiled" ]] ||
    fail "$1: unexpected output: $output"
  echo "  $1: $output"
}

echo "== install into a clean prefix"
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
for file in include/kernc/kernels.hpp include/kernc/export.hpp include/kernc/version.hpp bin/kernc \
  lib/cmake/kernc/kerncConfig.cmake lib/cmake/kernc/kerncConfigVersion.cmake lib/cmake/kernc/kerncTargets.cmake \
  lib/pkgconfig/kernc.pc share/doc/kernc/LICENSE "lib/libkernc.so.$version"; do
  [[ -e $prefix/$file ]] || fail "the install has no $file"
done
soname=$(readelf -d "$prefix/lib/libkernc.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == "libkernc.so.${version%%.*}" ]] || fail "soname is '$soname'"
[[ $(readlink "$prefix/lib/$soname") == "libkernc.so.$version" ]] || fail "no $soname link"
[[ $("$prefix/bin/kernc" --version) == "$version" ]] || fail "kernc --version says $("$prefix/bin/kernc" --version)"
! grep -rq "$source_dir" "$prefix/lib/cmake" || fail "the installed package refers to the source tree"
echo "  $prefix: soname $soname, kernc --version $version"

echo "== find_package(kernc CONFIG REQUIRED) against the prefix"
cmake -S "$here/find_package" -B "$work/find_package" "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix" >"$work/fp.log"
cmake --build "$work/find_package" >>"$work/fp.log"
run_consumer find_package "$work/find_package/consumer"
# A version the package cannot satisfy is refused.
mkdir -p "$work/too_new"
printf 'cmake_minimum_required(VERSION 3.22)\nproject(p CXX)\nfind_package(kernc 9.0 CONFIG REQUIRED)\n' \
  >"$work/too_new/CMakeLists.txt"
if cmake -S "$work/too_new" -B "$work/too_new/b" -DCMAKE_PREFIX_PATH="$prefix" >"$work/too_new.log" 2>&1; then
  fail "find_package(kernc 9.0) was satisfied by $version"
fi
echo "  find_package(kernc 9.0) is refused by $version"

echo "== pkg-config against the prefix"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[[ $(pkg-config --modversion kernc) == "$version" ]] || fail "pkg-config --modversion says $(pkg-config --modversion kernc)"
# shellcheck disable=SC2046  # the flags are words
g++ -std=c++17 "$here/consumer.cpp" -o "$work/pkgconfig-consumer" $(pkg-config --cflags --libs kernc) \
  -Wl,-rpath,"$prefix/lib"
run_consumer pkg-config "$work/pkgconfig-consumer"

echo "== add_subdirectory, static"
cmake -S "$here/subdirectory" -B "$work/subdirectory" "${generator[@]}" -DKERNC_SOURCE_DIR="$source_dir" \
  "${consumer_flags[@]}" >"$work/sub.log"
cmake --build "$work/subdirectory" >>"$work/sub.log"
[[ -f $work/subdirectory/kernc/src/libkernc.a ]] || fail "add_subdirectory with BUILD_SHARED_LIBS=OFF built no libkernc.a"
for part in tests tools examples; do
  [[ ! -d $work/subdirectory/kernc/$part ]] || fail "a subproject build configured kernc's $part"
done
! readelf -d "$work/subdirectory/consumer" | grep -q libkernc || fail "the static consumer needs libkernc.so"
run_consumer add_subdirectory "$work/subdirectory/consumer"

echo "== FetchContent from a local path, shared"
cmake -S "$here/fetchcontent" -B "$work/fetchcontent" "${generator[@]}" -DKERNC_SOURCE_DIR="$source_dir" \
  "${consumer_flags[@]}" >"$work/fetch.log"
cmake --build "$work/fetchcontent" >>"$work/fetch.log"
readelf -d "$work/fetchcontent/consumer" | grep -q "libkernc.so.${version%%.*}" || fail "the FetchContent consumer does not link libkernc.so"
run_consumer FetchContent "$work/fetchcontent/consumer"
echo "consumer: PASSED (find_package, pkg-config, add_subdirectory static, FetchContent shared)"
