#!/usr/bin/env bash
# Consumer builds (ctest label "consumer"): a tiny program outside kernc's tree compiles a
# kernel through kernc, linked the ways a downstream project links it:
#   - find_package against an installed prefix, as C++17 and as C++14 (kernc::kernc raises
#     it to C++17), and pkg-config against the same prefix (a C++14 compile is refused by
#     include/kernc/export.hpp, with its message);
#   - FetchContent, built with the CUDA headers alone: shared, then installed with the
#     program (ldd finds libkernc through the program's RPATH); the same tree with
#     KERNC_INSTALL=ON installed into a /usr-style prefix with a multiarch libdir, used
#     through pkg-config; the same tree again with BUILD_SHARED_LIBS=OFF, static;
#   - add_subdirectory, configured only: it sets up the library and nothing else;
#   - a subproject without cuda.h and nvrtc.h is refused at configure time, naming them.
# kernc is compiled from source once (the FetchContent tree): the reconfigurations
# change no compile flag of its objects, so they relink only. With ccache on the PATH the
# source build goes through it.
# Usage: bash run.sh KERNC_BUILD_DIR KERNC_SOURCE_DIR
set -euo pipefail
build_dir=$(realpath "$1")
source_dir=$(realpath "$2")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kernc-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
generator=(-G Ninja)  # tools/install-deps installs it; the add_subdirectory check reads `ninja -t commands`
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
version=$(sed -n 's/^project(kernc VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
# NOTE [ soname ] (src/CMakeLists.txt): MAJOR.MINOR while at 0.x.
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
soversion=$major
[[ $major == 0 ]] && soversion=$major.$minor
soname=libkernc.so.$soversion
multiarch=lib/x86_64-linux-gnu  # Debian's libdir under /usr, whatever this machine is
fail() { echo "consumer: FAILED: $*" >&2; exit 1; }
started=$SECONDS
# section TITLE: ends the previous section with its time and starts the next; `section` ends the last.
section() {
  [[ -z ${section_title:-} ]] || echo "  ($((SECONDS - section_start)) s)"
  section_title=$*
  section_start=$SECONDS
  [[ $# -eq 0 ]] || echo "== $*"
}
# The source build tests packaging, not speed or debugging: Debug compiles in half the
# time of Release, and without -g (emptied CMAKE_CXX_FLAGS_DEBUG) in 14% less again; the
# library in batches of files (NOTE [ unity builds ] in CMakeLists.txt; tools/sanitize's
# TSan tree builds it file by file).
consumer_flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG= -DKERNC_UNITY_BUILD=ON)

# run_consumer NAME BINARY: runs a consumer and checks what it printed.
run_consumer() {
  local output
  # A cache of its own: each consumer really compiles with NVRTC.
  output=$(KERNC_CACHE_DIR="$work/cache-$1" "$2") || fail "$1: the consumer exited non-zero: $output"
  [[ $output == "consumer: kernc $version compiled saxpy.cu for sm_90: "*"-byte ELF cubin, compiled" ]] ||
    fail "$1: unexpected output: $output"
  echo "  $1: $output"
}
# dir_of FLAG FLAGS...: the directory of the first -I (or -L) in pkg-config's output, resolved.
dir_of() {
  local flag=$1 word
  shift
  for word in "$@"; do
    if [[ $word == "$flag"* ]]; then
      realpath "${word#"$flag"}"
      return
    fi
  done
}

section "install into a clean prefix"
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
for file in include/kernc/kernels.hpp include/kernc/export.hpp include/kernc/version.hpp bin/kernc \
  lib/cmake/kernc/kerncConfig.cmake lib/cmake/kernc/kerncConfigVersion.cmake lib/cmake/kernc/kerncTargets.cmake \
  lib/pkgconfig/kernc.pc share/doc/kernc/LICENSE "lib/libkernc.so.$version"; do
  [[ -e $prefix/$file ]] || fail "the install has no $file"
done
installed_soname=$(readelf -d "$prefix/lib/libkernc.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $installed_soname == "$soname" ]] || fail "soname is '$installed_soname', not $soname"
[[ $(readlink "$prefix/lib/$soname") == "libkernc.so.$version" ]] || fail "no $soname link"
[[ $("$prefix/bin/kernc" --version) == "$version" ]] || fail "kernc --version says $("$prefix/bin/kernc" --version)"
! grep -rq "$source_dir" "$prefix/lib/cmake" || fail "the installed package refers to the source tree"
echo "  $prefix: soname $soname, kernc --version $version"

section "find_package(kernc CONFIG REQUIRED) against the prefix, C++17 and C++14"
cmake -S "$here/find_package" -B "$work/find_package" "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/fp.log"
cmake --build "$work/find_package" >>"$work/fp.log"
run_consumer find_package "$work/find_package/consumer"
# kernc::kernc's usage requirement (cxx_std_17) raised the C++14 target's standard: it
# compiled, and kernc's headers stop a C++14 compile (see the pkg-config case below). CMake
# passes no -std where the compiler's default is C++17 or later (g++ 11 on).
standard=$(grep -- '-o CMakeFiles/consumer14' "$work/find_package/compile_commands.json" | grep -o -- '-std=[^ ]*' || true)
run_consumer find_package-cxx14 "$work/find_package/consumer14"
[[ -n $standard ]] || standard="no -std flag (the compiler's default)"
echo "  the C++14 target compiled with $standard"
# A version the package cannot satisfy is refused.
mkdir -p "$work/too_new"
printf 'cmake_minimum_required(VERSION 3.22)\nproject(p CXX)\nfind_package(kernc 9.0 CONFIG REQUIRED)\n' \
  >"$work/too_new/CMakeLists.txt"
if cmake -S "$work/too_new" -B "$work/too_new/b" -DCMAKE_PREFIX_PATH="$prefix" >"$work/too_new.log" 2>&1; then
  fail "find_package(kernc 9.0) was satisfied by $version"
fi
echo "  find_package(kernc 9.0) is refused by $version"

section "pkg-config against the prefix"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[[ $(pkg-config --modversion kernc) == "$version" ]] || fail "pkg-config --modversion says $(pkg-config --modversion kernc)"
# shellcheck disable=SC2046  # the flags are words
g++ -std=c++17 "$here/consumer.cpp" -o "$work/pkgconfig-consumer" $(pkg-config --cflags --libs kernc) \
  -Wl,-rpath,"$prefix/lib"
run_consumer pkg-config "$work/pkgconfig-consumer"
# Without CMake nothing raises the standard: a C++14 compile stops with kernc's message first.
# shellcheck disable=SC2046
if g++ -std=c++14 -fsyntax-only "$here/consumer.cpp" $(pkg-config --cflags kernc) >"$work/cxx14.log" 2>&1; then
  fail "a C++14 compile of kernc's headers succeeded"
fi
first_error=$(grep -m1 'error' "$work/cxx14.log")
[[ $first_error == *"kernc's headers need C++17 or later"* ]] || fail "a C++14 compile's first error is: $first_error"
echo "  g++ -std=c++14: ${first_error#*error: }"
unset PKG_CONFIG_PATH

section "FetchContent, shared, built with cuda.h and nvrtc.h alone"
# The two headers in a directory of their own; the toolkit stays out of the search (no CUDA
# variables, no nvcc on the PATH), so the library cannot use any other part of it.
cuda_include=$(sed -n 's/^KERNC_CUDA_H_DIR:PATH=//p' "$build_dir/CMakeCache.txt")
nvrtc_include=$(sed -n 's/^KERNC_NVRTC_H_DIR:PATH=//p' "$build_dir/CMakeCache.txt")
mkdir -p "$work/cuda-headers"
cp "$cuda_include/cuda.h" "$nvrtc_include/nvrtc.h" "$work/cuda-headers/"
no_toolkit_path=$(tr ':' '\n' <<<"$PATH" | grep -v -i cuda | paste -sd:)
no_toolkit=(env -u CUDA_HOME -u CUDA_PATH -u CUDAToolkit_ROOT PATH="$no_toolkit_path")
fetch=$work/fetchcontent
"${no_toolkit[@]}" cmake -S "$here/fetchcontent" -B "$fetch" "${generator[@]}" "${launcher[@]}" \
  -DKERNC_SOURCE_DIR="$source_dir" -DKERNC_CUDA_INCLUDE_DIR="$work/cuda-headers" \
  -DCMAKE_INSTALL_LIBDIR="$multiarch" "${consumer_flags[@]}" >"$work/fetch.log"
for header in CUDA_H NVRTC_H; do
  grep -qx "KERNC_${header}_DIR:PATH=$work/cuda-headers" "$fetch/CMakeCache.txt" ||
    fail "the subproject found ${header} elsewhere: $(grep "KERNC_${header}_DIR" "$fetch/CMakeCache.txt")"
done
! grep -q '^CUDAToolkit_BIN_DIR' "$fetch/CMakeCache.txt" || fail "the subproject looked for the whole CUDA toolkit"
"${no_toolkit[@]}" cmake --build "$fetch" >>"$work/fetch.log"
# No other header of the toolkit reached an object, even where the compiler's own search path
# has them (some machines link the toolkit's headers into /usr/local/include): ninja's record
# of the headers each object read.
toolkit_real=("$(realpath "$cuda_include")" "$(realpath "$nvrtc_include")")
stray=$(ninja -C "$fetch" -t deps | sed -n 's/^    //p' | sort -u | while read -r header; do
  real=$(realpath "$header")
  [[ $real != "${toolkit_real[0]}"/* && $real != "${toolkit_real[1]}"/* ]] || echo "$header"
done)
[[ -z $stray ]] || fail "the library read these headers of the CUDA toolkit: $stray"
kernc_tree=$fetch/_deps/kernc-build
for part in tests tools examples; do
  [[ ! -d $kernc_tree/$part ]] || fail "a subproject build configured kernc's $part"
done
[[ ! -e $kernc_tree/src/libkernc_internal.a ]] || fail "a subproject build made kernc_internal (only kernc's own tests use it)"
readelf -d "$fetch/consumer" | grep -q "\[$soname\]" || fail "the FetchContent consumer does not link $soname"
run_consumer FetchContent "$fetch/consumer"

section "FetchContent, installed with the program (NOTE [ subproject install ])"
cmake --install "$fetch" --prefix "$work/app" >"$work/app-install.log"
[[ -x $work/app/bin/consumer && -f $work/app/$multiarch/$soname ]] || fail "the install has no bin/consumer or $multiarch/$soname: $(cd "$work/app" && find . -type f -o -type l)"
for dev in include "$multiarch/libkernc.so" "$multiarch/pkgconfig" "$multiarch/cmake"; do
  [[ ! -e $work/app/$dev ]] || fail "a subproject with KERNC_INSTALL off installed $dev"
done
resolved=$(ldd "$work/app/bin/consumer" | sed -n "s/^[[:space:]]*$soname => \([^ ]*\).*/\1/p")
[[ -z $resolved ]] || resolved=$(realpath -s "$resolved")  # bin/../lib/...: normalized, the soname link kept
[[ $resolved == "$work/app/$multiarch/$soname" ]] || fail "ldd resolves $soname to '$resolved': $(ldd "$work/app/bin/consumer")"
echo "  ldd: $soname => ${resolved#"$work/"}"
run_consumer installed-app "$work/app/bin/consumer"

section "the same tree with KERNC_INSTALL=ON, into a /usr prefix with libdir $multiarch: pkg-config"
"${no_toolkit[@]}" cmake -S "$here/fetchcontent" -B "$fetch" -DKERNC_INSTALL=ON >>"$work/fetch.log"
"${no_toolkit[@]}" cmake --build "$fetch" >>"$work/fetch.log"
usr=$work/usr
cmake --install "$fetch" --prefix "$usr" >"$work/usr-install.log"
export PKG_CONFIG_PATH=$usr/$multiarch/pkgconfig
[[ -f $PKG_CONFIG_PATH/kernc.pc ]] || fail "no $multiarch/pkgconfig/kernc.pc"
read -r -a flags <<<"$(pkg-config --cflags --libs kernc)"
[[ $(dir_of -I "${flags[@]}") == "$usr/include" ]] || fail "pkg-config's -I is not $usr/include: ${flags[*]}"
[[ $(dir_of -L "${flags[@]}") == "$usr/$multiarch" ]] || fail "pkg-config's -L is not $usr/$multiarch: ${flags[*]}"
g++ -std=c++17 "$here/consumer.cpp" -o "$work/usr-consumer" "${flags[@]}" -Wl,-rpath,"$usr/$multiarch"
run_consumer pkg-config-multiarch "$work/usr-consumer"
unset PKG_CONFIG_PATH

section "the same tree with BUILD_SHARED_LIBS=OFF: static"
"${no_toolkit[@]}" cmake -S "$here/fetchcontent" -B "$fetch" -DKERNC_INSTALL=OFF -DBUILD_SHARED_LIBS=OFF >>"$work/fetch.log"
"${no_toolkit[@]}" cmake --build "$fetch" >"$work/static.log"
! grep -q 'kernc_objects' "$work/static.log" || fail "going static recompiled kernc's objects"
[[ -f $kernc_tree/src/libkernc.a ]] || fail "BUILD_SHARED_LIBS=OFF built no libkernc.a"
! readelf -d "$fetch/consumer" | grep -q libkernc || fail "the static consumer needs libkernc.so"
run_consumer static "$fetch/consumer"

section "add_subdirectory: the library alone (configure only)"
sub=$work/subdirectory
"${no_toolkit[@]}" cmake -S "$here/subdirectory" -B "$sub" "${generator[@]}" -DKERNC_SOURCE_DIR="$source_dir" \
  -DKERNC_CUDA_INCLUDE_DIR="$work/cuda-headers" "${consumer_flags[@]}" >"$work/sub.log"
for part in tests tools examples; do
  [[ ! -d $sub/kernc/$part ]] || fail "add_subdirectory configured kernc's $part"
done
# What `cmake --build` would make: the consumer, kernc and its objects, nothing of kernc's own.
# The link and archive commands of the default targets (ninja -n would stop at re-running
# CMake for kernc's CONFIGURE_DEPENDS globs).
built=$(ninja -C "$sub" -t commands | sed -n -e 's/.*ar qc \([^ ]*\) .*/\1/p' -e 's/^: && .* -o \([^ ]*\) .*/\1/p' |
  sort | paste -sd' ')
[[ $built == "consumer kernc/src/libkernc.a" ]] || fail "add_subdirectory would link: $built"
echo "  would link: $built"

section "a subproject without cuda.h and nvrtc.h is refused"
mkdir -p "$work/empty"
# Every place it would find them hidden: the toolkit's include directory, and the system's
# include directories where a package or a link put them.
ignore=""
for dir in "$cuda_include" "$nvrtc_include" /usr/local/cuda/include /usr/local/include /usr/include; do
  [[ -e $dir/cuda.h || -e $dir/nvrtc.h ]] && ignore+="$dir;$(realpath "$dir");"
done
if [[ ";$ignore" == *";/usr/include;"* ]]; then
  # Hiding /usr/include would hide OpenSSL's headers too: the configure would fail first on those.
  echo "  skipped: /usr/include has cuda.h or nvrtc.h, and cannot be hidden from the configure"
elif "${no_toolkit[@]}" cmake -S "$here/subdirectory" -B "$work/no-cuda" "${generator[@]}" -DKERNC_SOURCE_DIR="$source_dir" \
  -DKERNC_CUDA_INCLUDE_DIR="$work/empty" -DCMAKE_IGNORE_PATH="$ignore" >"$work/no-cuda.log" 2>&1; then
  fail "a subproject configured without the CUDA headers"
else
  message=$(tr -s ' \n' ' ' <"$work/no-cuda.log")
  [[ $message == *"kernc: cuda.h and nvrtc.h not found. kernc needs two headers of the CUDA toolkit"* ]] ||
    fail "no clear message without the CUDA headers: $(cat "$work/no-cuda.log")"
  echo "  CMake Error: kernc: cuda.h and nvrtc.h not found. kernc needs two headers of the CUDA toolkit ..."
fi
section
echo "consumer: PASSED in $((SECONDS - started)) s (find_package C++17/C++14, pkg-config, FetchContent shared + installed + /usr multiarch pkg-config + static, add_subdirectory, no CUDA headers)"
