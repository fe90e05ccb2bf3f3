// NOTE [ outputs in registers ] (src/dsl/output_access.hpp): which outputs of an
// elementwise operation the contiguous kernel may leave unloaded, and when outputs must
// stay bound to memory. Every "write-only" answer here must be one a compiler would agree
// with; every doubtful case must answer "load it".

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "dsl/output_access.hpp"

using kernc::dsl::scan_output_access;

namespace {

// The write-only flags for an operation over outputs z (and w).
std::vector<bool> write_only(const std::string& operation, const std::string& preamble = "",
                             const std::string& loop_prep = "") {
  auto access = scan_output_access(operation, preamble, loop_prep, {"z", "w"});
  REQUIRE(access.in_registers);
  return access.write_only;
}

bool in_registers(const std::string& operation) { return scan_output_access(operation, "", "", {"z"}).in_registers; }

}  // namespace

TEST_CASE("plain assignments leave their outputs unloaded") {
  CHECK(write_only("z = a * x + y") == std::vector<bool>{true, false});
  CHECK(write_only("z = x; w = z + 1") == std::vector<bool>{true, true});
  CHECK(write_only("  z  =  x > 0 ? x : -x ;\n w = x && y") == std::vector<bool>{true, true});
  CHECK(write_only("float t = x * 2;\nz = t; w = t + z") == std::vector<bool>{true, true});
  CHECK(write_only("// z is the result\nz = x") == std::vector<bool>{true, false});
  CHECK(write_only("/* w = 0 */ z = x; /* z */ w = z") == std::vector<bool>{true, true});
  // Later control flow cannot undo an assignment already made.
  CHECK(write_only("z = x; if (x > 0) { z = -x; continue; }") == std::vector<bool>{true, false});
  // An #include in the preamble is not a macro that could reach the outputs.
  CHECK(write_only("z = x", "#include <cuda_fp16.h>") == std::vector<bool>{true, false});
}

TEST_CASE("an output that may be read or skipped before it is assigned is loaded") {
  CHECK(write_only("z += x") == std::vector<bool>{false, false});        // compound assignment reads it
  CHECK(write_only("z = z * 2") == std::vector<bool>{false, false});     // the right side reads it
  CHECK(write_only("z = x == z") == std::vector<bool>{false, false});
  CHECK(write_only("z == x") == std::vector<bool>{false, false});        // a comparison, not an assignment
  CHECK(write_only("w = z; z = x") == std::vector<bool>{false, true});   // read before assigned
  CHECK(write_only("if (x > 0) z = x") == std::vector<bool>{false, false});  // conditional
  CHECK(write_only("x > 0 && (z = x)") == std::vector<bool>{false, false});
  CHECK(write_only("if (x < 0) continue; z = x") == std::vector<bool>{false, false});
  CHECK(write_only("switch (n) { case 1: ; z = x; }") == std::vector<bool>{false, false});
  CHECK(write_only("{ ; z = x; }") == std::vector<bool>{false, false});
  CHECK(write_only("float& r = z; r = x") == std::vector<bool>{false, false});
  CHECK(write_only("atomicAdd(&z, x)") == std::vector<bool>{false, false});
  CHECK(write_only("SET(x)", "#define SET(v) z = v") == std::vector<bool>{false, false});
  CHECK(write_only("z = VALUE", "#define VALUE (z + 1)") == std::vector<bool>{false, false});
  CHECK(write_only("z = x", "", "#define Z z") == std::vector<bool>{false, false});
  CHECK(write_only("y = x") == std::vector<bool>{false, false});  // never named: it keeps its values
  CHECK(write_only("printf(\"z = %f\", x); z = x") == std::vector<bool>{false, false});
  // A comment cannot hide a read: `// ; z = 1` is not code.
  CHECK(write_only("// ; z = 1\nz += x") == std::vector<bool>{false, false});
}

TEST_CASE("an operation that can leave the element loop keeps its outputs in memory") {
  CHECK(in_registers("z = x"));
  CHECK(in_registers("z = x; if (x > 0) continue;"));
  CHECK_FALSE(in_registers("if (x < 0) return; z = x"));
  CHECK_FALSE(in_registers("z = x; if (x < 0) break"));
  CHECK_FALSE(in_registers("if (x < 0) goto done; z = x; done: ;"));
  CHECK_FALSE(in_registers("asm volatile(\"exit;\"); z = x"));
  CHECK(in_registers("z = x; // return early some day"));  // a comment is not code
  CHECK(in_registers("z = return_value(x)"));              // a word, not the keyword
}

TEST_CASE("an operation that names an output's raw view keeps its outputs in memory (CuPy binds them by reference)") {
  // CuPy: `y = x * 2; z = _raw_y[i] + 1` reads the y just assigned (issue 36).
  CHECK_FALSE(in_registers("z = x * 2; w = _raw_z[i] + 1"));
  CHECK_FALSE(in_registers("_raw_z[i] = x"));
  CHECK_FALSE(in_registers("z = x; /* ok */ w = _raw_z [ i ]"));
  // Another array's raw view, or a longer name, is not z's.
  CHECK(in_registers("z = _raw_x[i]"));
  CHECK(in_registers("z = _raw_zz[i]"));
  CHECK(in_registers("z = x; // _raw_z[i] in a comment is not code"));
}
