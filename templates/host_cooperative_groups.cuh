// kernc host backend: <cooperative_groups.h> for programs compiled for the host
// (Backend::cpu). Served under the include name "cooperative_groups.h"; needs
// templates/host_cuda.cuh first (NOTE [ host CUDA environment ]). Groups: the block, the
// grid (sync only in cooperative launches), tiles of at most a warp, the coalesced threads.
#pragma once
#ifndef KERNC_HOST_COOPERATIVE_GROUPS_CUH
#define KERNC_HOST_COOPERATIVE_GROUPS_CUH

namespace cooperative_groups {

class thread_block {
 public:
  void sync() const { __syncthreads(); }
  unsigned thread_rank() const { return kernc_host::thread_rank(); }
  unsigned size() const { return kernc_host::block_threads(); }
  unsigned num_threads() const { return size(); }
  dim3 group_index() const { return blockIdx; }
  dim3 thread_index() const { return threadIdx; }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};
inline thread_block this_thread_block() { return {}; }

class grid_group {
 public:
  void sync() const { kernc_host::grid_barrier(); }
  bool is_valid() const { return true; }
  unsigned long long block_rank() const { return blockIdx.x + 1ull * gridDim.x * (blockIdx.y + 1ull * gridDim.y * blockIdx.z); }
  unsigned long long num_blocks() const { return 1ull * gridDim.x * gridDim.y * gridDim.z; }
  unsigned long long thread_rank() const { return block_rank() * kernc_host::block_threads() + kernc_host::thread_rank(); }
  unsigned long long size() const { return num_blocks() * kernc_host::block_threads(); }
  unsigned long long num_threads() const { return size(); }
  dim3 group_dim() const { return gridDim; }
  dim3 dim_blocks() const { return gridDim; }
  dim3 block_index() const { return blockIdx; }
};
inline grid_group this_grid() { return {}; }

template <unsigned N>
class thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "tiled_partition<N>: N a power of two up to 32");

 public:
  static constexpr unsigned num_threads() { return N; }
  static constexpr unsigned size() { return N; }
  unsigned thread_rank() const { return kernc_host::thread_rank() & (N - 1); }
  unsigned meta_group_rank() const { return kernc_host::thread_rank() / N; }
  unsigned meta_group_size() const { return (kernc_host::block_threads() + N - 1) / N; }
  void sync() const { __syncwarp(mask()); }
  template <class T> T shfl(T var, int src) const { return __shfl_sync(mask(), var, src, N); }
  template <class T> T shfl_down(T var, unsigned delta) const { return __shfl_down_sync(mask(), var, delta, N); }
  template <class T> T shfl_up(T var, unsigned delta) const { return __shfl_up_sync(mask(), var, delta, N); }
  template <class T> T shfl_xor(T var, int lane_mask) const { return __shfl_xor_sync(mask(), var, lane_mask, N); }
  unsigned ballot(int predicate) const { return (__ballot_sync(mask(), predicate) & mask()) >> first_lane(); }
  int any(int predicate) const { return ballot(predicate) != 0; }
  int all(int predicate) const { return ballot(predicate) == static_cast<unsigned>((1ull << lanes()) - 1u); }

 private:
  unsigned first_lane() const { return (kernc_host::thread_rank() & 31u) & ~(N - 1); }
  // The tile's lanes that exist (a block's last warp may be short).
  unsigned lanes() const { return static_cast<unsigned>(__builtin_popcount(mask())); }
  unsigned mask() const { return (N == 32 ? ~0u : ((1u << N) - 1u) << first_lane()) & kernc_host::warp_lanes(); }
};

template <unsigned N, class Parent>
thread_block_tile<N> tiled_partition(const Parent&) {
  return {};
}

// The lanes of the caller's warp that exist: a host warp never runs diverged lanes apart.
class coalesced_group {
 public:
  unsigned size() const { return static_cast<unsigned>(__builtin_popcount(mask_)); }
  unsigned num_threads() const { return size(); }
  unsigned thread_rank() const { return static_cast<unsigned>(__builtin_popcount(mask_ & __lanemask_lt())); }
  void sync() const { __syncwarp(mask_); }
  template <class T> T shfl(T var, int src) const { return __shfl_sync(mask_, var, lane_of(static_cast<unsigned>(src))); }
  unsigned ballot(int predicate) const { return __ballot_sync(mask_, predicate); }
  int any(int predicate) const { return ballot(predicate) != 0; }
  int all(int predicate) const { return ballot(predicate) == mask_; }

 private:
  int lane_of(unsigned rank) const {
    unsigned m = mask_;
    for (unsigned r = 0; r < rank && m; ++r) m &= m - 1;
    return m ? __builtin_ctz(m) : 0;
  }
  unsigned mask_ = __activemask();
};
inline coalesced_group coalesced_threads() { return {}; }

template <class Group>
void sync(const Group& group) {
  group.sync();
}

}  // namespace cooperative_groups

#endif  // KERNC_HOST_COOPERATIVE_GROUPS_CUH
