// The shared scanners for C++ text (src/core/source_text.hpp), on the cases their callers
// (host entries, raw declarations, snippets, output access) depend on.

#include <doctest/doctest.h>

#include <string>

#include "core/source_text.hpp"

using namespace kernc::core;

TEST_CASE("core::word_at: a whole identifier, not part of a longer one") {
  const std::string text = "extern \"C\" __global__ void k(int __global__x, int y__global__);";
  CHECK(word_at(text, text.find("__global__"), "__global__"));
  CHECK_FALSE(word_at(text, text.find("__global__x"), "__global__"));
  CHECK_FALSE(word_at(text, text.find("y__global__") + 1, "__global__"));
  CHECK(word_at("void", 0, "void"));  // at both ends of the text
  CHECK_FALSE(word_at("vo", 0, "void"));  // shorter than the word
  CHECK_FALSE(word_at("k(void)", 10, "void"));  // past the end
}

TEST_CASE("core::squeeze_spaces, skip_comment_or_literal and blank_comments") {
  CHECK(squeeze_spaces("  const\t float *\n x ") == "const float * x");
  const std::string code = "a /* b */ c // d\ne \"// f\" R\"x(g)\")x\" h";
  CHECK(skip_comment_or_literal(code, code.find("/*")) == code.find(" c"));
  CHECK(skip_comment_or_literal(code, code.find("//")) == code.find("\ne"));
  CHECK(skip_comment_or_literal(code, code.find("\"// f\"")) == code.find(" R\""));
  CHECK(skip_comment_or_literal(code, code.find("R\"x(") + 1) == code.find(" h"));  // at its quote
  CHECK(skip_comment_or_literal(code, 0) == 0);  // no comment or literal there
  const std::string blank = blank_comments(code);
  CHECK(blank.size() == code.size());
  CHECK(blank.find('b') == std::string::npos);
  CHECK(blank.find("\"// f\"") == code.find("\"// f\""));  // a literal is kept as it is
  CHECK(blank.find('\n') == code.find('\n'));
}
