// Loop shapes, indexers and array views: what generated kernels receive as parameters.
// NOTE [ kernel parameter layout ]: the host packs these structs byte for byte
// (src/runtime/param_pack.hpp packs them and names the same kMaxDims, as does Layout::kMaxDims
// in include/kernc/signature.hpp); change them together.
#pragma once

namespace kernc {

constexpr int kMaxDims = 16;

// Which types a multi-index may hold: any integer type CuPy code uses for one (int,
// ptrdiff_t, size_t, long long, unsigned, ...), not a floating-point type.
template <class I> struct IsIndexInteger { static constexpr bool value = false; };
template <> struct IsIndexInteger<char> { static constexpr bool value = true; };
template <> struct IsIndexInteger<signed char> { static constexpr bool value = true; };
template <> struct IsIndexInteger<unsigned char> { static constexpr bool value = true; };
template <> struct IsIndexInteger<short> { static constexpr bool value = true; };
template <> struct IsIndexInteger<unsigned short> { static constexpr bool value = true; };
template <> struct IsIndexInteger<int> { static constexpr bool value = true; };
template <> struct IsIndexInteger<unsigned int> { static constexpr bool value = true; };
template <> struct IsIndexInteger<long> { static constexpr bool value = true; };
template <> struct IsIndexInteger<unsigned long> { static constexpr bool value = true; };
template <> struct IsIndexInteger<long long> { static constexpr bool value = true; };
template <> struct IsIndexInteger<unsigned long long> { static constexpr bool value = true; };
template <class I> struct IsIndexInteger<const I> : IsIndexInteger<I> {};
template <class I> struct IsIndexInteger<volatile I> : IsIndexInteger<I> {};
template <class I> struct IsIndexInteger<const volatile I> : IsIndexInteger<I> {};
#define KERNC_CHECK_INDEX_TYPE(I) \
  static_assert(::kernc::IsIndexInteger<I>::value, "an array's multi-index must be an array of an integer type")

// The largest of some sizes, at compile time (the tiled template's shared tile holds any of
// its inputs' types).
KERNC_DEVICE constexpr unsigned long long largest_of(unsigned long long a) { return a; }
template <class... Rest>
KERNC_DEVICE constexpr unsigned long long largest_of(unsigned long long a, unsigned long long b, Rest... rest) {
  return largest_of(a > b ? a : b, rest...);
}

// NOTE [ vectorized contiguous loop ]
// The contiguous kernel gives each thread kN adjacent elements per step and moves them
// with 16-byte loads and stores (8 bytes for fewer, smaller items) when an array's data
// is aligned to that size, as cudaMalloc'd memory is: a quarter of the load and store
// instructions of one element per access, and what a raw float4 kernel does.
// VectorAccess<T, kN> is that access for one array; anything unaligned takes the element
// by element path of templates/elementwise_contiguous.cu.in.
template <class T, int kN>
struct VectorAccess {
  static constexpr unsigned long long kWanted = kN * sizeof(T) < 16 ? kN * sizeof(T) : 16;
  static constexpr unsigned long long kBytes = kWanted > sizeof(T) ? kWanted : sizeof(T);
  static constexpr int kPer = static_cast<int>(kBytes / sizeof(T));  // elements per access
  static_assert(kN % kPer == 0, "a thread's elements are a whole number of accesses");
  struct alignas(kBytes) Chunk { T v[kPer]; };
  KERNC_DEVICE static bool aligned(const void* p) { return reinterpret_cast<unsigned long long>(p) % kBytes == 0; }
  KERNC_DEVICE static void load(T (&dst)[kN], const T* src) {
#pragma unroll
    for (int c = 0; c < kN / kPer; ++c) {
      const Chunk chunk = reinterpret_cast<const Chunk*>(src)[c];
#pragma unroll
      for (int e = 0; e < kPer; ++e) dst[c * kPer + e] = chunk.v[e];
    }
  }
  KERNC_DEVICE static void store(T* dst, const T (&src)[kN]) {
#pragma unroll
    for (int c = 0; c < kN / kPer; ++c) {
      Chunk chunk;
#pragma unroll
      for (int e = 0; e < kPer; ++e) chunk.v[e] = src[c * kPer + e];
      reinterpret_cast<Chunk*>(dst)[c] = chunk;
    }
  }
};

// Whether `n` elements of A at `a` and of B at `b` share no byte: the host's contiguous
// kernel then reads and writes a whole group in place (templates/elementwise_contiguous.cu.in).
template <class A, class B, class I>
KERNC_DEVICE bool apart(const A* a, const B* b, I n) {
  const unsigned long long pa = reinterpret_cast<unsigned long long>(a), pb = reinterpret_cast<unsigned long long>(b);
  return pa + static_cast<unsigned long long>(n) * sizeof(A) <= pb || pb + static_cast<unsigned long long>(n) * sizeof(B) <= pa;
}

// The iteration space of a kernel: `size` elements in C order over `dims`.
// Rank 0 = flat (contiguous layout), rank -1 = rank known at run time (up to kMaxDims).
template <int kRank, class Index> struct Shape { Index size; Index dims[kRank]; };
template <class Index> struct Shape<0, Index> { Index size; };
template <class Index> struct Shape<-1, Index> { Index size; int rank; Index dims[kMaxDims]; };

// CuPy's CIndexer: the loop's current position as a multi-index.
// NOTE [ stepping the multi-index ]
// A grid-stride loop moves every thread's flat index by the same step. start(i, step)
// divides once, for the first index and for the step's digits; advance() then adds the
// digits with a carry per axis (a digit is below its extent, so one subtraction at most)
// instead of a division and a modulo per axis per element.
template <int kRank, class Index>
struct Indexer {
  Shape<kRank, Index> shape;
  Index index[kRank];
  Index step_[kRank];
  KERNC_DEVICE explicit Indexer(const Shape<kRank, Index>& s) : shape(s) {}
  KERNC_DEVICE Index size() const { return shape.size; }
  KERNC_DEVICE void set(Index i) {
#pragma unroll
    for (int d = kRank - 1; d > 0; --d) {
      index[d] = i % shape.dims[d];
      i /= shape.dims[d];
    }
    index[0] = i;
  }
  KERNC_DEVICE void start(Index i, Index step) {
    set(i);
    set_step(step);
  }
  // The step's digits alone: a loop that sets its multi-index at the top of each pass
  // divides in one place (templates/elementwise.cu.in).
  KERNC_DEVICE void set_step(Index step) {
#pragma unroll
    for (int d = kRank - 1; d > 0; --d) {
      step_[d] = step % shape.dims[d];
      step /= shape.dims[d];
    }
    step_[0] = step;
  }
  KERNC_DEVICE void advance() {
    Index carry = 0;
#pragma unroll
    for (int d = kRank - 1; d > 0; --d) {
      index[d] += step_[d] + carry;
      carry = index[d] >= shape.dims[d] ? 1 : 0;
      if (carry) index[d] -= shape.dims[d];
    }
    index[0] += step_[0] + carry;
  }
  KERNC_DEVICE const Index* get() const { return index; }
};

template <class Index>
struct Indexer<0, Index> {
  Shape<0, Index> shape;
  Index index[1];
  KERNC_DEVICE explicit Indexer(const Shape<0, Index>& s) : shape(s) {}
  KERNC_DEVICE Index size() const { return shape.size; }
  KERNC_DEVICE void set(Index i) { index[0] = i; }
  KERNC_DEVICE void start(Index i, Index step) { index[0] = i; step_ = step; }
  KERNC_DEVICE void set_step(Index step) { step_ = step; }
  KERNC_DEVICE void advance() { index[0] += step_; }
  KERNC_DEVICE const Index* get() const { return index; }
  Index step_;
};

// NOTE [ rolled loops over a run-time rank ]
// A loop over the dimensions of a rank known only at run time (the generic layout, raw
// arrays) is kept rolled: its trip count is the rank, bounded by kMaxDims = 16, so NVVM
// unrolled each one sixteen times with an exit per step, and with 8 loads in flight a
// generic program carried 8 x 16 copies of a 64-bit `%` and `/`. Kept rolled, a generic
// program compiles 4-7x faster (1.6-1.9 s to 0.24-0.47 s of CPU for sm_90, its cubin 2.5-3.5x
// smaller; tools/bench/NOTES.md, "compile-v1"); a step of the loop costs a compare and a
// branch beside the division it holds, which is what bounds it.
// KERNC_UNROLL_RANK_LOOPS gives NVVM its way again, only to measure what rolling saves
// (tools/bench/compile_bench.cpp --flag -DKERNC_UNROLL_RANK_LOOPS).
#ifdef KERNC_UNROLL_RANK_LOOPS
#define KERNC_RANK_LOOP
#else
#define KERNC_RANK_LOOP _Pragma("unroll 1")
#endif

template <class Index>
struct Indexer<-1, Index> {
  Shape<-1, Index> shape;
  Index index[kMaxDims];
  KERNC_DEVICE explicit Indexer(const Shape<-1, Index>& s) : shape(s) {}
  KERNC_DEVICE Index size() const { return shape.size; }
  KERNC_DEVICE void set(Index i) {
    KERNC_RANK_LOOP  // NOTE [ rolled loops over a run-time rank ]
    for (int d = shape.rank - 1; d > 0; --d) {
      index[d] = i % shape.dims[d];
      i /= shape.dims[d];
    }
    index[0] = i;
  }
  KERNC_DEVICE void start(Index i, Index step) {
    set(i);
    set_step(step);
  }
  KERNC_DEVICE void set_step(Index step) {
    KERNC_RANK_LOOP  // NOTE [ rolled loops over a run-time rank ]
    for (int d = shape.rank - 1; d > 0; --d) {
      step_[d] = step % shape.dims[d];
      step /= shape.dims[d];
    }
    step_[0] = step;
  }
  KERNC_DEVICE void advance() {
    Index carry = 0;
    KERNC_RANK_LOOP  // NOTE [ rolled loops over a run-time rank ]
    for (int d = shape.rank - 1; d > 0; --d) {
      index[d] += step_[d] + carry;
      carry = index[d] >= shape.dims[d] ? 1 : 0;
      if (carry) index[d] -= shape.dims[d];
    }
    index[0] += step_[0] + carry;
  }
  Index step_[kMaxDims];
  KERNC_DEVICE const Index* get() const { return index; }
};

// CuPy's CArray: data pointer, shape and strides in bytes. x[i] takes a flat index in
// the array's own C order; x[idx] a multi-index of the array's rank.
template <class T, int kRank, class Index>
struct ArrayView {
  T* data_;
  Index size_;
  Index shape_[kRank];
  Index strides_[kRank];
  KERNC_DEVICE Index size() const { return size_; }
  KERNC_DEVICE const Index* shape() const { return shape_; }
  KERNC_DEVICE const Index* strides() const { return strides_; }
  KERNC_DEVICE int ndim() const { return kRank; }
  template <class I>
  KERNC_DEVICE T& operator[](const I* idx) const {
    KERNC_CHECK_INDEX_TYPE(I);
    Index offset = 0;
#pragma unroll
    for (int d = 0; d < kRank; ++d) offset += static_cast<Index>(idx[d]) * strides_[d];
    return *reinterpret_cast<T*>(reinterpret_cast<char*>(data_) + offset);
  }
  // NOTE [ brace multi-index ]: x[{i % 3, i / 3}], as CuPy's CArray takes a braced list of
  // indices of one integer type. Indices of one type bind to the first overload, which
  // refuses a floating type as x[idx] does; a mix of integer types (an int and a size_t)
  // binds to the second, as long long. One index per dimension.
  template <class I, int kN>
  KERNC_DEVICE T& operator[](const I (&idx)[kN]) const {
    static_assert(kN == kRank, "a braced multi-index needs one index per dimension of the array");
    return (*this)[static_cast<const I*>(idx)];
  }
  template <int kN>
  KERNC_DEVICE T& operator[](const long long (&idx)[kN]) const {
    static_assert(kN == kRank, "a braced multi-index needs one index per dimension of the array");
    return (*this)[static_cast<const long long*>(idx)];
  }
  KERNC_DEVICE T& operator[](Index i) const {
    Index offset = 0;
#pragma unroll
    for (int d = kRank - 1; d >= 0; --d) {
      offset += (i % shape_[d]) * strides_[d];
      i /= shape_[d];
    }
    return *reinterpret_cast<T*>(reinterpret_cast<char*>(data_) + offset);
  }
};

// Contiguous layout: a flat array; its multi-index is the flat index.
template <class T, class Index>
struct ArrayView<T, 0, Index> {
  T* data_;
  Index size_;
  KERNC_DEVICE Index size() const { return size_; }
  KERNC_DEVICE const Index* shape() const { return &size_; }
  KERNC_DEVICE int ndim() const { return 1; }
  template <class I>
  KERNC_DEVICE T& operator[](const I* idx) const {
    KERNC_CHECK_INDEX_TYPE(I);
    return data_[static_cast<Index>(idx[0])];
  }
  template <class I, int kN>
  KERNC_DEVICE T& operator[](const I (&idx)[kN]) const {  // NOTE [ brace multi-index ]
    KERNC_CHECK_INDEX_TYPE(I);
    static_assert(kN == 1, "a braced multi-index needs one index per dimension of the array");
    return data_[static_cast<Index>(idx[0])];
  }
  template <int kN>
  KERNC_DEVICE T& operator[](const long long (&idx)[kN]) const {
    static_assert(kN == 1, "a braced multi-index needs one index per dimension of the array");
    return data_[static_cast<Index>(idx[0])];
  }
  KERNC_DEVICE T& operator[](Index i) const { return data_[i]; }
};

// Rank known at run time: raw parameters, and strided arrays of high rank.
template <class T, class Index>
struct ArrayView<T, -1, Index> {
  T* data_;
  Index size_;
  int ndim_;
  int contiguous_;  // 1 if C-contiguous: x[i] is then data_[i]
  Index shape_[kMaxDims];
  Index strides_[kMaxDims];
  KERNC_DEVICE Index size() const { return size_; }
  KERNC_DEVICE const Index* shape() const { return shape_; }
  KERNC_DEVICE const Index* strides() const { return strides_; }
  KERNC_DEVICE int ndim() const { return ndim_; }
  template <class I>
  KERNC_DEVICE T& operator[](const I* idx) const {
    KERNC_CHECK_INDEX_TYPE(I);
    Index offset = 0;
    KERNC_RANK_LOOP  // NOTE [ rolled loops over a run-time rank ]
    for (int d = 0; d < ndim_; ++d) offset += static_cast<Index>(idx[d]) * strides_[d];
    return *reinterpret_cast<T*>(reinterpret_cast<char*>(data_) + offset);
  }
  // NOTE [ brace multi-index ]; the rank is known only at run time: the list's length is
  // taken as the rank the kernel means (CuPy's CArray would not compile another length).
  template <class I, int kN>
  KERNC_DEVICE T& operator[](const I (&idx)[kN]) const {
    KERNC_CHECK_INDEX_TYPE(I);
    Index offset = 0;
#pragma unroll
    for (int d = 0; d < kN; ++d) offset += static_cast<Index>(idx[d]) * strides_[d];
    return *reinterpret_cast<T*>(reinterpret_cast<char*>(data_) + offset);
  }
  template <int kN>
  KERNC_DEVICE T& operator[](const long long (&idx)[kN]) const {
    return operator[]<long long, kN>(idx);
  }
  KERNC_DEVICE T& operator[](Index i) const {
    if (contiguous_) return data_[i];
    Index offset = 0;
    KERNC_RANK_LOOP  // NOTE [ rolled loops over a run-time rank ]
    for (int d = ndim_ - 1; d >= 0; --d) {
      offset += (i % shape_[d]) * strides_[d];
      i /= shape_[d];
    }
    return *reinterpret_cast<T*>(reinterpret_cast<char*>(data_) + offset);
  }
};

// A reduction's input in the generic layout, seen as rows: the view's trailing dimensions,
// whose extents multiply to `inner` (the reduce size), are the reduced ones, and the
// leading ones index the outputs. row(i) finds output i's first element once (a % and a /
// per leading dimension); at(row, j) is then one multiply when a single dimension is
// reduced, so the loop over the reduced elements does no integer division (which bound
// outer-axis reductions: tools/bench/NOTES.md v7).
template <class T, class Index>
struct ReductionRows {
  const ArrayView<T, -1, Index>& view;
  int split;  // the first reduced dimension
  KERNC_DEVICE ReductionRows(const ArrayView<T, -1, Index>& v, Index inner) : view(v), split(v.ndim_) {
    Index product = 1;
    while (split > 0 && product < inner) product *= view.shape_[--split];
  }
  KERNC_DEVICE char* row(Index i) const {
    Index offset = 0;
    KERNC_RANK_LOOP  // NOTE [ rolled loops over a run-time rank ]
    for (int d = split - 1; d >= 0; --d) {
      offset += (i % view.shape_[d]) * view.strides_[d];
      i /= view.shape_[d];
    }
    return reinterpret_cast<char*>(view.data_) + offset;
  }
  // Whether outputs i, ..., i + n - 1 start sizeof(T) apart: the innermost kept dimension
  // holds them all and its stride is one element. Their elements of any row then lie side
  // by side, and a host loop over them is one vector loop (templates/reduction_columns.cu.in).
  KERNC_DEVICE bool side_by_side(Index i, Index n) const {
    if (n <= 1) return true;
    if (split == 0 || view.strides_[split - 1] != static_cast<Index>(sizeof(T))) return false;
    return i % view.shape_[split - 1] + n <= view.shape_[split - 1];
  }
  KERNC_DEVICE T& at(char* row, Index j) const {
    if (split == view.ndim_ - 1) return *reinterpret_cast<T*>(row + j * view.strides_[split]);
    Index offset = 0;
    KERNC_RANK_LOOP  // NOTE [ rolled loops over a run-time rank ]
    for (int d = view.ndim_ - 1; d >= split; --d) {
      offset += (j % view.shape_[d]) * view.strides_[d];
      j /= view.shape_[d];
    }
    return *reinterpret_cast<T*>(row + offset);
  }
};

}  // namespace kernc
