// NOTE [ vendor libraries ] (top CMakeLists.txt): libkernc dlopens the vendor libraries,
// so that one binary runs on machines without a GPU, a driver or one of the toolkits.
// The dynamic section is where a stray link would show.

#include <doctest/doctest.h>

#include <stdio.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace {

// The output of a shell command and its exit status.
std::pair<std::string, int> run(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return {"", -1};
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  int status = ::pclose(pipe);
  return {output, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// The library names of the NEEDED entries in `readelf -d` output.
std::vector<std::string> needed_libraries(const std::string& readelf_output) {
  std::vector<std::string> needed;
  size_t pos = 0;
  while ((pos = readelf_output.find("(NEEDED)", pos)) != std::string::npos) {
    size_t open = readelf_output.find('[', pos);
    size_t close = readelf_output.find(']', open);
    size_t line_end = readelf_output.find('\n', pos);
    if (open == std::string::npos || close == std::string::npos || open > line_end) break;
    needed.push_back(readelf_output.substr(open + 1, close - open - 1));
    pos = close;
  }
  return needed;
}

}  // namespace

TEST_CASE("linkage::libkernc needs none of the vendor libraries") {
  // Not a structured binding: INFO captures output (C++20 only).
  const auto result = run(std::string("readelf -d '") + KERNC_LIBRARY_FILE + "' 2>&1");
  const std::string& output = result.first;
  const int status = result.second;
  INFO("readelf output:\n" << output);
  REQUIRE(status == 0);
  std::vector<std::string> needed = needed_libraries(output);
  // The check is only real if the parse found the libraries kernc does link.
  REQUIRE(!needed.empty());
  bool links_libc = false;
  for (const auto& library : needed) {
    INFO("NEEDED " << library);
    links_libc = links_libc || kernc::test::starts_with(library, "libc.so");
    for (const char* vendor : {"libcuda", "libnvrtc", "libamdhip64", "libhiprtc", "libamd_comgr", "libcudart"}) {
      CHECK_FALSE(kernc::test::contains(library, vendor));
    }
  }
  CHECK(links_libc);
}

// include/kernc/export.hpp and src/kernc.map: the dynamic symbols of libkernc.so are the
// public API — kernc:: declarations outside the internal namespaces, and the typeinfo and
// vtables of public classes — and nothing else (no internals, no std:: or fmt:: instances).
TEST_CASE("linkage::libkernc exports only the public API") {
  auto [output, status] = run(std::string("nm -D --defined-only -C '") + KERNC_LIBRARY_FILE + "' 2>&1");
  REQUIRE(status == 0);
  std::vector<std::string> exported, stray;
  size_t pos = 0;
  while (pos < output.size()) {
    size_t end = output.find('\n', pos);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(pos, end - pos);
    pos = end + 1;
    // "0000000000012340 T kernc::version()": the name starts after the address and the type.
    size_t first = line.find(' '), second = first == std::string::npos ? first : line.find(' ', first + 1);
    if (second == std::string::npos) continue;
    std::string name = line.substr(second + 1);
    exported.push_back(name);
    for (const char* prefix : {"typeinfo name for ", "typeinfo for ", "vtable for "}) {
      if (kernc::test::starts_with(name, prefix)) name = name.substr(std::string(prefix).size());
    }
    bool is_public = kernc::test::starts_with(name, "kernc::");
    for (const char* internal : {"kernc::detail::", "kernc::cache::", "kernc::compiler::", "kernc::dsl::",
                                 "kernc::codegen::", "kernc::platform::", "kernc::(anonymous namespace)"}) {
      is_public = is_public && !kernc::test::starts_with(name, internal);
    }
    if (!is_public) stray.push_back(line);
  }
  std::string listing;
  for (const auto& line : stray) listing += line + "\n";
  INFO("exported but not public API:\n" << listing);
  CHECK(stray.empty());
  // The check is only real if the public API is there: a few of its landmarks.
  for (const char* symbol : {"kernc::version()", "kernc::Cache::get_or_compile(", "kernc::ElementwiseKernel::operator()(",
                             "typeinfo for kernc::Error"}) {
    INFO("missing: " << symbol);
    bool found = false;
    for (const auto& name : exported) found = found || kernc::test::starts_with(name, symbol);
    CHECK(found);
  }
}
