#pragma once
// NVTX ranges around kernc's phases, for Nsight Systems and other NVTX tools: off unless
// asked for (kernc::set_nvtx_ranges, KERNC_NVTX=1), and then free of everything but one
// relaxed load of a flag (NOTE [ NVTX ranges ], src/base/nvtx_range.cpp).

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

namespace kernc::detail {

/// Whether ranges are on. Constant-initialized, so reading it needs no guard.
extern std::atomic<bool> nvtx_ranges_flag;

/// The hot path's one check.
inline bool nvtx_ranges_on() noexcept { return nvtx_ranges_flag.load(std::memory_order_relaxed); }

/// What a range marks.
enum class NvtxPhase { launch, module_load, compile, cache_memory, cache_disk, cache_read_only, cache_remote };

/// A kernel and its variant, as ranges name them: "saxpy<float32, float32 -> float32
/// contiguous-i32>" (the kernel, then its signature and layout class, as `kernc precompile`
/// describes a variant); the kernel alone when `variant` is empty.
std::string nvtx_subject(std::string_view kernel, std::string_view variant);

/// A range's name: the phase, its subject, and the target when given:
/// "compile saxpy<float32, float32 -> float32 contiguous-i32> sm_90",
/// "cache read-only saxpy<...> sm_90", "launch saxpy<...>". Ranges are in the NVTX domain
/// "kernc", which Nsight shows before the name ("kernc:compile saxpy<...> sm_90").
std::string nvtx_range_name(NvtxPhase phase, std::string_view subject, std::string_view target = {});

/// The subject ranges opened on this thread name when their own code knows less (the
/// cache sees a program, not a kernel's signature): the innermost NvtxSubject's, else
/// `fallback`.
std::string_view nvtx_subject_or(std::string_view fallback) noexcept;

/// Tests only: called with each range's name as it opens (ranges on). Empty: none.
void set_nvtx_observer(std::function<void(const std::string&)> observer);

/// A name made on first use and kept for the object's life (a plan's subject), so that a
/// launch with ranges on formats nothing. Copies make their own.
class NvtxLabel {
 public:
  NvtxLabel() = default;
  NvtxLabel(const NvtxLabel&) noexcept {}
  NvtxLabel& operator=(const NvtxLabel&) noexcept { return *this; }
  ~NvtxLabel() { delete text_.load(std::memory_order_acquire); }

  template <class Make>
  const std::string& get(Make&& make) const {
    const std::string* text = text_.load(std::memory_order_acquire);
    return text ? *text : publish(new std::string(make()));
  }

 private:
  // Keeps `made` unless another thread was first (then deletes it); returns the kept one.
  const std::string& publish(const std::string* made) const noexcept;
  mutable std::atomic<const std::string*> text_{nullptr};
};

/// One NVTX range, open from construction to destruction on one thread (push/pop), when
/// ranges are on at construction; `name()` is called only then.
class NvtxRange {
 public:
  template <class Name>
  explicit NvtxRange(Name&& name) {
    if (nvtx_ranges_on()) open(name());
  }
  ~NvtxRange() {
    if (open_) close();
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  void open(const std::string& name) noexcept;
  static void close() noexcept;
  bool open_ = false;
};

/// Names this thread's ranges' subject while in scope (see nvtx_subject_or), when ranges
/// are on at construction; `subject()` is called only then.
class NvtxSubject {
 public:
  template <class Subject>
  explicit NvtxSubject(Subject&& subject) {
    if (nvtx_ranges_on()) enter(subject());
  }
  ~NvtxSubject() {
    if (entered_) leave();
  }
  NvtxSubject(const NvtxSubject&) = delete;
  NvtxSubject& operator=(const NvtxSubject&) = delete;

 private:
  void enter(std::string subject);
  void leave() noexcept;
  bool entered_ = false;
  std::string subject_;
  const std::string* outer_ = nullptr;
};

}  // namespace kernc::detail
