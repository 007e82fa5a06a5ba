// Elementwise ops on the GPU (csrc/cuda/launchers.h): out[i] = EwFormula<T, op>::apply(a[i], b[i],
// c[i], p) over an N-d strided index space, the CPU engine's contract (csrc/cpu/elementwise.h).
// Every element is independent, so the only thing a GPU decides is which thread computes which
// element; its bits are the shared formula's (csrc/common/elementwise.h).
#include <stdexcept>
#include <string>

#include "../common/elementwise.h"
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

// Dims after merging; torch's TensorIterator allows 25, so a torch tensor always fits.
constexpr int kMaxDims = 25;

// One operand: an array walked with per-dim strides, or (data == nullptr) the single value
// `value` (a Python number rounded once to T on the host, or 0 for an absent operand, as the
// CPU engine reads a zero for absent b and c).
template <typename T>
struct EwInput {
  const T* data;
  T value;
  int64_t strides[kMaxDims];
};

template <typename T>
struct EwArgs {
  int nd = 0;
  int64_t n = 0;  // elements
  int64_t sizes[kMaxDims] = {};
  int64_t out_strides[kMaxDims] = {};
  T* out = nullptr;
  EwInput<T> in[3] = {};  // a, b, c
  EwParams<T> p{};
};

// One thread per output element (grid-stride). The linear index is split into per-dim indices
// from the innermost dim outwards; a one-dim (flat) layout takes no division. An output that
// aliases an input with identical strides is read and written by the same thread.
template <typename T, EwOp op>
__global__ void ew_kernel(const EwArgs<T> g) {
  for (int64_t i = global_thread(); i < g.n; i += grid_stride()) {
    int64_t rem = i, oo = 0, off[3] = {0, 0, 0};
    for (int d = g.nd - 1; d >= 0; --d) {
      int64_t k = rem;
      if (d > 0) {
        const int64_t q = rem / g.sizes[d];
        k = rem - q * g.sizes[d];
        rem = q;
      }
      oo += k * g.out_strides[d];
      for (int m = 0; m < 3; ++m) off[m] += k * g.in[m].strides[d];
    }
    T v[3];
    for (int m = 0; m < 3; ++m) v[m] = g.in[m].data ? g.in[m].data[off[m]] : g.in[m].value;
    g.out[oo] = EwFormula<T, op>::apply(v[0], v[1], v[2], g.p);
  }
}

template <typename T>
void launch(int op, const EwArgs<T>& g, cudaStream_t stream) {
  switch (static_cast<EwOp>(op)) {
#define REPMODE_EW_LAUNCH(name, code)                                    \
  case EwOp::name:                                                       \
    ew_kernel<T, EwOp::name><<<blocks_for(g.n), kBlock, 0, stream>>>(g); \
    break;
    REPMODE_EW_OPS(REPMODE_EW_LAUNCH)
#undef REPMODE_EW_LAUNCH
    default:
      throw std::invalid_argument("repmode._C_cuda: unknown elementwise op code " + std::to_string(op));
  }
  check_launch("elementwise");
}

// An operand as the CPU binding builds it: a pointer with strides, or the number `value`.
template <typename T>
EwInput<T> input_of(uintptr_t p, double value, bool present) {
  EwInput<T> in{};
  in.data = present && p ? ptr<const T>(p) : nullptr;
  in.value = present && !p ? static_cast<T>(value) : T(0);  // a Python float: one RNE rounding to T
  return in;
}

// Drops size-1 dims and merges a dim into the one outside it where every operand walks the two
// as one (stride_outer == stride_inner * size_inner). Only who-reads-what changes, not the bits.
// `strides[m]` may be null (an operand with stride 0 everywhere).
template <typename T>
void set_layout(EwArgs<T>& g, const Ints& sizes, const Ints* strides[4]) {
  int64_t* dst[4] = {g.out_strides, g.in[0].strides, g.in[1].strides, g.in[2].strides};
  auto stride = [&](int m, size_t d) { return strides[m] ? (*strides[m])[d] : int64_t(0); };
  g.nd = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool merge = g.nd > 0;
    for (int m = 0; m < 4 && merge; ++m) merge = dst[m][g.nd - 1] == stride(m, d) * sizes[d];
    if (merge) {
      g.sizes[g.nd - 1] *= sizes[d];
      for (int m = 0; m < 4; ++m) dst[m][g.nd - 1] = stride(m, d);
      continue;
    }
    if (g.nd == kMaxDims)
      throw std::invalid_argument("repmode._C_cuda: elementwise supports at most " + std::to_string(kMaxDims) +
                                  " non-mergeable dims");
    g.sizes[g.nd] = sizes[d];
    for (int m = 0; m < 4; ++m) dst[m][g.nd] = stride(m, d);
    ++g.nd;
  }
  if (g.nd == 0) {  // a single element
    g.nd = 1;
    g.sizes[0] = 1;
    for (int m = 0; m < 4; ++m) dst[m][0] = 0;
  }
}

void check_strides(const Ints& sizes, const Ints& strides, const char* which) {
  if (strides.size() != sizes.size())
    throw std::invalid_argument(std::string("repmode._C_cuda: elementwise: ") + which +
                                " strides do not match the number of dims");
}

}  // namespace

// General form: one thread per output element of the broadcast N-d index space (ew_kernel).
void elementwise(int op, int dtype, const Ints& sizes, uintptr_t out, const Ints& out_strides, uintptr_t a,
                 const Ints& a_strides, double a_value, uintptr_t b, const Ints& b_strides, double b_value, bool has_b,
                 uintptr_t c, const Ints& c_strides, double c_value, bool has_c, const std::vector<double>& params,
                 uintptr_t stream) {
  StreamScope scope(stream);
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  if (n == 0) return;  // as the CPU: nothing to write, no op check
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    EwArgs<T> g;
    g.n = n;
    g.out = ptr<T>(out);
    g.in[0] = input_of<T>(a, a_value, true);
    g.in[1] = input_of<T>(b, b_value, has_b);
    g.in[2] = input_of<T>(c, c_value, has_c);
    g.p = {params.size() > 0 ? params[0] : 0.0, params.size() > 1 ? params[1] : 0.0,
           params.size() > 2 ? params[2] : 0.0};
    check_strides(sizes, out_strides, "out");
    const Ints* strides[4] = {&out_strides, nullptr, nullptr, nullptr};
    const Ints* given[3] = {&a_strides, &b_strides, &c_strides};
    const char* names[3] = {"a", "b", "c"};
    for (int m = 0; m < 3; ++m) {
      if (!g.in[m].data) continue;
      check_strides(sizes, *given[m], names[m]);
      strides[m + 1] = given[m];
    }
    set_layout(g, sizes, strides);
    launch(op, g, scope.get());
  });
}

// The contiguous form: the same kernel on a one-dim layout (no index division); b is an array
// (stride 1), the number b_value, or absent; c is absent.
void elementwise_flat(int op, int dtype, int64_t n, uintptr_t out, uintptr_t a, uintptr_t b, double b_value, bool has_b,
                      double p0, double p1, uintptr_t stream) {
  StreamScope scope(stream);
  if (n <= 0) return;
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    EwArgs<T> g;
    g.nd = 1;
    g.n = n;
    g.sizes[0] = n;
    g.out_strides[0] = 1;
    g.out = ptr<T>(out);
    g.in[0] = input_of<T>(a, 0.0, true);
    g.in[0].strides[0] = 1;
    g.in[1] = input_of<T>(b, b_value, has_b);
    g.in[1].strides[0] = g.in[1].data ? 1 : 0;
    g.in[2] = input_of<T>(0, 0.0, false);
    g.p = {p0, p1, 0.0};
    launch(op, g, scope.get());
  });
}

}  // namespace repmode::cuda
