// Reading KERNC_REMOTE_CACHE's URL. Hand-written, no std::regex (DESIGN §10): the URL comes
// from the environment and its errors must name the part that is wrong, never the password.

#include <cctype>
#include <set>

#include <fmt/format.h>

#include "kernc/remote_cache.hpp"
#include "kernc/error.hpp"

namespace kernc {

namespace {

Error bad_url(const std::string& what) {
  return Error(ErrorCode::invalid_argument, fmt::format("remote cache URL: {}", what));
}

// %XX escapes, as in a URL's user, password, path and option values.
std::string percent_decode(std::string_view text, const char* part) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      throw bad_url(fmt::format("a '%' in the {} is not followed by two hex digits", part));
    }
    out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

std::uint64_t parse_unsigned(std::string_view text, std::uint64_t max, const std::string& what) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string_view::npos) {
    throw bad_url(fmt::format("{} must be a whole number, not \"{}\"", what, text));
  }
  std::uint64_t value = std::stoull(std::string(text));
  if (value > max) throw bad_url(fmt::format("{} must be at most {}, not {}", what, max, value));
  return value;
}

// "250ms", "2s", "5m", "12h", "7d": a whole number and a unit, in milliseconds.
std::uint64_t parse_duration_ms(std::string_view text, const std::string& what) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string_view unit = text.substr(digits);
  std::uint64_t scale = unit == "ms" ? 1 : unit == "s" ? 1000 : unit == "m" ? 60000 : unit == "h" ? 3600000
                                                                              : unit == "d" ? 86400000 : 0;
  if (digits == 0 || scale == 0) {
    throw bad_url(fmt::format("{} must be a whole number with a unit ms, s, m, h or d (e.g. 500ms, 30s, 7d), "
                              "not \"{}\"", what, text));
  }
  return parse_unsigned(text.substr(0, digits), (1ull << 40) / scale, what) * scale;
}

void apply_option(RemoteCacheConfig& config, const std::string& name, const std::string& value) {
  auto what = fmt::format("option {}", name);
  if (name == "read_only") {
    if (value != "0" && value != "1" && value != "true" && value != "false") {
      throw bad_url(fmt::format("{} must be 1, 0, true or false, not \"{}\"", what, value));
    }
    config.read_only = value == "1" || value == "true";
  } else if (name == "prefix") {
    // Printable and unambiguous: a prefix is part of every key and shows in `kernc info`.
    if (value.empty() || value.size() > 100 ||
        value.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/") !=
            std::string::npos) {
      throw bad_url(fmt::format("{} must be 1 to 100 characters of letters, digits and _-.:/, not \"{}\"", what,
                                value));
    }
    config.prefix = value.back() == ':' ? value : value + ":";
  } else if (name == "connect_timeout" || name == "timeout" || name == "backoff") {
    std::uint64_t ms = parse_duration_ms(value, what);
    if (ms == 0 && name != "backoff") throw bad_url(fmt::format("{} must be more than 0", what));
    if (ms > 3600000) throw bad_url(fmt::format("{} must be at most 1h, not \"{}\"", what, value));
    (name == "connect_timeout" ? config.connect_timeout_ms
     : name == "timeout"       ? config.operation_timeout_ms
                               : config.backoff_ms) = static_cast<std::uint32_t>(ms);
  } else if (name == "ttl") {
    std::uint64_t ms = parse_duration_ms(value, what);
    if (ms % 1000 != 0) throw bad_url(fmt::format("{} must be whole seconds, not \"{}\"", what, value));
    config.ttl_seconds = ms / 1000;
  } else if (name == "chunk_size") {
    // A whole number of bytes, or of KiB / MiB with K or M.
    size_t digits = value.find_first_not_of("0123456789");
    std::string unit = digits == std::string::npos ? "" : value.substr(digits);
    std::uint64_t scale = unit.empty() ? 1 : unit == "K" ? 1024 : unit == "M" ? (1 << 20) : 0;
    if (digits == 0 || scale == 0) {
      throw bad_url(fmt::format("{} must be a whole number of bytes with an optional K or M, not \"{}\"", what, value));
    }
    std::uint64_t bytes = parse_unsigned(value.substr(0, digits), 1ull << 40, what) * scale;
    if (bytes < 1024 || bytes > (256ull << 20)) {
      throw bad_url(fmt::format("{} must be between 1K and 256M, not \"{}\"", what, value));
    }
    config.chunk_size = bytes;
  } else if (name == "db") {
    config.database = static_cast<int>(parse_unsigned(value, 1000000, what));
  } else if (name == "signing_key") {
    config.signing_key = value;
  } else if (name == "trusted_signers") {
    config.trusted_signers = value;
  } else {
    throw bad_url(fmt::format("unknown option \"{}\"; the options are read_only, prefix, connect_timeout, timeout, "
                              "backoff, ttl, chunk_size, db, signing_key and trusted_signers", name));
  }
}

}  // namespace

RemoteCacheConfig parse_remote_cache_url(const std::string& url) {
  RemoteCacheConfig config;
  config.url = url;
  size_t scheme_end = url.find("://");
  std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if (scheme == "rediss") {
    throw bad_url("rediss:// (TLS) is not supported: the hiredis kernc uses has no TLS; reach the server "
                  "through a unix socket or a TLS tunnel such as stunnel or spiped (see docs/remote-cache.md)");
  }
  if (scheme != "redis" && scheme != "unix") {
    throw bad_url("must start with redis:// or unix:// (e.g. redis://cache.example:6379/0 or "
                  "unix:///run/redis/redis.sock)");
  }
  std::string_view rest(url);
  rest.remove_prefix(scheme_end + 3);
  std::string_view query;
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  // Credentials end at the last '@' before the path: a password may contain '@' only escaped.
  if (size_t at = rest.find('@'); at != std::string_view::npos && (scheme == "unix" || rest.find('/') > at)) {
    std::string_view credentials = rest.substr(0, at);
    rest.remove_prefix(at + 1);
    if (size_t colon = credentials.find(':'); colon != std::string_view::npos) {
      config.user = percent_decode(credentials.substr(0, colon), "user name");
      config.password = percent_decode(credentials.substr(colon + 1), "password");
    } else {
      // redis://PASSWORD@host is what most clients read as a bare password.
      config.password = percent_decode(credentials, "password");
    }
  }
  if (scheme == "unix") {
    if (rest.empty() || rest.front() != '/') throw bad_url("unix:// needs an absolute socket path (unix:///PATH)");
    config.socket_path = percent_decode(rest, "socket path");
    config.host.clear();
  } else {
    std::string_view authority = rest.substr(0, rest.find('/'));
    std::string_view path = authority.size() < rest.size() ? rest.substr(authority.size() + 1) : std::string_view();
    std::string_view port;
    if (!authority.empty() && authority.front() == '[') {  // [IPv6]:port
      size_t close = authority.find(']');
      if (close == std::string_view::npos) throw bad_url("an IPv6 host lacks its closing ']'");
      config.host = std::string(authority.substr(1, close - 1));
      std::string_view after = authority.substr(close + 1);
      if (!after.empty() && after.front() != ':') throw bad_url("expected ':PORT' after the IPv6 host");
      if (!after.empty()) port = after.substr(1);
    } else {
      size_t colon = authority.find(':');
      config.host = std::string(authority.substr(0, colon));
      if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    }
    if (config.host.empty()) throw bad_url("no host (redis://HOST[:PORT][/DB])");
    if (!port.empty()) {
      config.port = static_cast<int>(parse_unsigned(port, 65535, "the port"));
      if (config.port == 0) throw bad_url("the port must be 1 to 65535, not 0");
    } else if (authority.find(':') != std::string_view::npos && authority.front() != '[') {
      throw bad_url("':' after the host must be followed by a port");
    }
    if (!path.empty()) config.database = static_cast<int>(parse_unsigned(path, 1000000, "the database number"));
  }
  std::set<std::string> seen;
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    if (pair.empty()) continue;
    size_t equals = pair.find('=');
    if (equals == std::string_view::npos) throw bad_url(fmt::format("option \"{}\" has no value (NAME=VALUE)", pair));
    std::string name(pair.substr(0, equals));
    if (!seen.insert(name).second) throw bad_url(fmt::format("option {} is given twice", name));
    apply_option(config, name, percent_decode(pair.substr(equals + 1), ("option " + name).c_str()));
  }
  if (!config.signing_key.empty() && config.read_only) {
    throw bad_url("signing_key is for writers, but read_only=1 is set: a read-only tier never publishes");
  }
  return config;
}

std::string RemoteCacheConfig::redacted() const {
  if (password.empty()) return url;
  // Replace what stands between the scheme and the '@' that ends the credentials.
  size_t start = url.find("://");
  size_t at = url.find('@', start == std::string::npos ? 0 : start + 3);
  if (start == std::string::npos || at == std::string::npos) return "<remote cache URL with a password>";
  std::string credentials = url.substr(start + 3, at - start - 3);
  size_t colon = credentials.find(':');
  std::string shown = colon == std::string::npos ? "***" : credentials.substr(0, colon) + ":***";
  return url.substr(0, start + 3) + shown + url.substr(at);
}

}  // namespace kernc
