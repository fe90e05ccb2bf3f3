#pragma once
// The trust rule for files kernc loads code from (NOTE [ entry trust ] in local_store.hpp).

#include <sys/stat.h>

#include <string>

namespace kernc::cache {

/// Why a file with this status must not be trusted; empty if it may be.
std::string untrusted(const struct stat& info);

}  // namespace kernc::cache
