#include "base/nvtx_range.hpp"

#include <mutex>

#include "kernc/error.hpp"
#include "kernc/profiling.hpp"

// Set by src/CMakeLists.txt where the CUDA toolkit has NVTX 3.
#ifndef KERNC_WITH_NVTX
#define KERNC_WITH_NVTX 0
#endif
#if KERNC_WITH_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace kernc::detail {

// NOTE [ NVTX ranges ]
// kernc marks its phases for Nsight Systems with NVTX 3 ranges in the domain "kernc": a
// call's launch (src/kernels/call.cpp, around everything a Call::launch does, so a first
// call's load nests in it), each cache tier's look-up (src/cache/cache.cpp: memory, disk,
// read-only, remote), the compile (src/cache/cache.cpp, around Compiler::compile) and the
// module load (src/kernels/engine.cpp, src/kernels/raw_module_file.cpp). A range names the
// kernel and its variant where the code that opens it knows them; the cache and the engine
// see a Program only, so the call path and precompile name the subject of the ranges below
// them on their thread (NvtxSubject), and those fall back to the program's name.
//
// Off, the default, a site costs one relaxed load of a constant-initialized atomic bool and
// a predicted branch: no NVTX call, no string is built (the name is a lambda, called only
// when on), nothing is locked; a launch then pays two such loads (the subject, the range).
// On, NVTX 3 is header-only: its first call looks for a tool (NVTX_INJECTION64_PATH, set by
// Nsight) and, without one, every later call returns at once; libnvToolsExt is not linked.
// A launch's subject is made once per plan (NvtxLabel), so a launch with ranges on formats
// only "launch " + the subject.
std::atomic<bool> nvtx_ranges_flag{false};

namespace {

std::mutex observer_mutex;
std::function<void(const std::string&)> observer;  // under observer_mutex
std::atomic<bool> observed{false};

thread_local const std::string* current_subject = nullptr;

#if KERNC_WITH_NVTX
nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t handle = nvtxDomainCreateA("kernc");
  return handle;
}
#endif

const char* phase_name(NvtxPhase phase) noexcept {
  switch (phase) {
    case NvtxPhase::launch: return "launch";
    case NvtxPhase::module_load: return "module load";
    case NvtxPhase::compile: return "compile";
    case NvtxPhase::cache_memory: return "cache memory";
    case NvtxPhase::cache_disk: return "cache disk";
    case NvtxPhase::cache_read_only: return "cache read-only";
    case NvtxPhase::cache_remote: return "cache remote";
  }
  return "?";
}

}  // namespace

std::string nvtx_subject(std::string_view kernel, std::string_view variant) {
  std::string subject(kernel);
  if (!variant.empty()) {
    subject += '<';
    subject += variant;
    subject += '>';
  }
  return subject;
}

std::string nvtx_range_name(NvtxPhase phase, std::string_view subject, std::string_view target) {
  std::string name = phase_name(phase);
  name += ' ';
  name += subject;
  if (!target.empty()) {
    name += ' ';
    name += target;
  }
  return name;
}

std::string_view nvtx_subject_or(std::string_view fallback) noexcept {
  return current_subject ? std::string_view(*current_subject) : fallback;
}

void set_nvtx_observer(std::function<void(const std::string&)> new_observer) {
  std::lock_guard<std::mutex> lock(observer_mutex);
  observer = std::move(new_observer);
  observed.store(static_cast<bool>(observer), std::memory_order_relaxed);
}

const std::string& NvtxLabel::publish(const std::string* made) const noexcept {
  const std::string* expected = nullptr;
  if (text_.compare_exchange_strong(expected, made, std::memory_order_acq_rel)) return *made;
  delete made;
  return *expected;
}

void NvtxRange::open(const std::string& name) noexcept {
  open_ = true;
  if (observed.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(observer_mutex);
    try {
      if (observer) observer(name);
    } catch (...) {
      // A test's observer; it must not change what the library does.
    }
  }
#if KERNC_WITH_NVTX
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = name.c_str();
  nvtxDomainRangePushEx(domain(), &attributes);
#endif
}

void NvtxRange::close() noexcept {
#if KERNC_WITH_NVTX
  nvtxDomainRangePop(domain());
#endif
}

void NvtxSubject::enter(std::string subject) {
  subject_ = std::move(subject);
  outer_ = current_subject;
  current_subject = &subject_;
  entered_ = true;
}

void NvtxSubject::leave() noexcept { current_subject = outer_; }

}  // namespace kernc::detail

namespace kernc {

bool nvtx_ranges_built() noexcept { return KERNC_WITH_NVTX != 0; }

void set_nvtx_ranges(bool on) {
  if (on && !nvtx_ranges_built()) {
    throw Error(ErrorCode::backend_disabled,
                "NVTX ranges: this build of kernc has no NVTX (the CUDA toolkit's nvtx3/nvToolsExt.h was not "
                "found when it was built)");
  }
  detail::nvtx_ranges_flag.store(on, std::memory_order_relaxed);
}

bool nvtx_ranges() noexcept { return detail::nvtx_ranges_on(); }

}  // namespace kernc
