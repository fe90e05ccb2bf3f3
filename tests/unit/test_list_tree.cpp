// platform::list_tree, the listing behind the toolkit's identity in every compiler's key
// (issue 35, item 5: it is a fresh process's first compile's largest cost after NVRTC).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "compiler/toolkit_includes.hpp"
#include "platform/files.hpp"
#include "temp_dir.hpp"

using kernc::platform::FileListing;
using kernc::platform::list_tree;
using kernc::test::TempDir;

TEST_CASE("list_tree lists every regular file under a directory by relative path and size, sorted") {
  TempDir dir;
  dir.write("tree/b.h", "12345");
  dir.write("tree/a/x.h", "");
  dir.write("tree/a/deeper/y.hpp", "1234567");
  dir.write("tree/a.h", "123");
  dir.write("elsewhere/z.h", "1234");
  dir.write("elsewhere/sub/w.h", "12");
  // A symbolic link to a directory is followed and named where it is found; one to a file
  // gives the file's size; a dangling one is left out, as the compiler's search leaves it.
  std::filesystem::create_directory_symlink(dir / "elsewhere", dir / "tree/linked");
  std::filesystem::create_symlink(dir / "tree/b.h", dir / "tree/c.h");
  std::filesystem::create_symlink(dir / "missing.h", dir / "tree/dangling.h");

  std::error_code error;
  const FileListing listing = list_tree(dir / "tree", error);
  CHECK_FALSE(error);
  const FileListing expected = {{"a.h", 3},        {"a/deeper/y.hpp", 7}, {"a/x.h", 0},         {"b.h", 5},
                                {"c.h", 5},        {"linked/sub/w.h", 2}, {"linked/z.h", 4}};
  CHECK(listing == expected);
}

TEST_CASE("list_tree reports a directory it cannot list, and stops at a loop of symbolic links") {
  TempDir dir;
  std::error_code error;
  CHECK(list_tree(dir / "absent", error).empty());
  CHECK(error == std::errc::no_such_file_or_directory);

  dir.write("loop/f.h", "1");
  std::filesystem::create_directory_symlink(dir / "loop", dir / "loop/again");
  const FileListing listing = list_tree(dir / "loop", error);
  CHECK(error == std::errc::too_many_symbolic_link_levels);
  // What was listed before the loop was found comes back; how much depends on the order
  // the directory gives its two entries in, so only the bound is certain.
  CHECK(listing.size() <= 65);
}

TEST_CASE("a nested include directory's identity is its own listing, though taken from the outer one's") {
  // CUDA 13 searches its include directory and the cccl one in it; the second listing is
  // cut from the first.
  TempDir dir;
  for (const std::string root : {"toolkit/include", "copy"}) {
    const std::string nested = root == "copy" ? root : root + "/cccl";
    dir.write(nested + "/cuda/std/version", "#define X 1\n");
    dir.write(nested + "/cub/cub.cuh", "// cub\n");
  }
  dir.write("toolkit/include/cuda.h", "#define CUDA_VERSION 13000\n");
  dir.write("other/cuda.h", "#define CUDA_VERSION 13000\n");
  dir.write("other/cccl/cuda/std/version", "#define X 1\n");
  dir.write("other/cccl/cub/cub.cuh", "// cub\n");
  const std::string include = dir / "toolkit/include";
  // The hash names no directory: the same files listed on their own give the same identity.
  const std::string nested = kernc::compiler::include_dirs_identity({include, include + "/cccl"});
  const std::string separate = kernc::compiler::include_dirs_identity({include, dir / "copy"});
  CHECK(nested == separate);
  CHECK(nested.find("cuda 13000") != std::string::npos);
  CHECK(nested.find(" 5 files ") != std::string::npos);  // 3 under include/, 2 of them in cccl/
  // A size changed in the nested directory changes it.
  dir.write("other/cccl/cub/cub.cuh", "// cub, longer\n");
  CHECK(kernc::compiler::include_dirs_identity({dir / "other", dir / "other/cccl"}) != nested);
}
