#pragma once
// Small, dull file helpers: whole-file reads, atomic writes, directories.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace kernc::platform {

/// The whole file, or std::nullopt if it does not exist. Throws kernc::Error(io) on other errors.
std::optional<std::string> read_file_if_exists(const std::string& path);
/// The rest of an open file; throws kernc::Error(io) naming `path` on a read error.
std::string read_all(int fd, const std::string& path);
/// The whole file; throws kernc::Error(io) naming the path and the reason.
std::string read_file(const std::string& path);

/// Writes `bytes` to a unique temporary file in the same directory as `path`, fsyncs nothing,
/// then renames it over `path`: readers see the old file or the new one, never a mix.
/// Throws kernc::Error(io) (the temporary file is removed) on failure.
void write_file_atomic(const std::string& path, std::string_view bytes, unsigned mode = 0600);

/// Creates `path` and missing parents with `mode`; throws kernc::Error(io) on failure.
void make_directories(const std::string& path, unsigned mode = 0700);

/// Every regular file under `directory` (symlinked directories followed), as its path
/// relative to `directory` and its size, sorted by path: a listing that is the same on
/// every machine with the same files. On a listing error, `error` is set and what was
/// listed so far is returned.
using FileListing = std::vector<std::pair<std::string, std::uintmax_t>>;
FileListing list_tree(const std::string& directory, std::error_code& error);

/// A unique name for a temporary file in `directory`, starting with ".tmp." so that
/// listings and cleanup can recognise it.
std::string unique_temp_path(const std::string& directory, std::string_view stem);

/// Whether `name` (a file name, not a path) is one made by unique_temp_path.
bool is_temp_name(std::string_view name) noexcept;

}  // namespace kernc::platform
