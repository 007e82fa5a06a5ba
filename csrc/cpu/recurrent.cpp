#include "recurrent.h"
#include "dispatch.h"
#include "entry_points.h"

#include <type_traits>

#include "../common/recurrent.h"
#include "array_math.h"
#include "parallel.h"

namespace repmode::cpu {

namespace {

// out[j] = EwFormula<T, op>(in[j]) for j < n (in == out allowed): the AVX2 array routines for
// float32 when active (bitwise equal to the scalar routines), the scalar formula otherwise.
template <typename T, EwOp op>
void unary_row(const T* in, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    if (unary_array_op<float>(int(op))) return unary_array(int(op), in, out, n);
  }
  const EwParams<T> p{1.0, 0.0, 0.0};
  for (int64_t j = 0; j < n; ++j) out[j] = EwFormula<T, op>::apply(in[j], T(0), T(0), p);
}

// lstm_cell_forward (csrc/common/recurrent.h) for the H columns of one row, staged so that the
// sigmoid/tanh run over contiguous arrays; each element gets the same sequence of roundings.
template <typename T>
void lstm_forward_row(int64_t H, const T* a, const T* r, const T* c_prev, T* w, T* h) {
  for (int64_t j = 0; j < 4 * H; ++j) w[j] = canon(a[j] + r[j]);
  unary_row<T, EwOp::sigmoid>(w, w, 2 * H);              // i, f
  unary_row<T, EwOp::tanh>(w + 2 * H, w + 2 * H, H);     // g
  unary_row<T, EwOp::sigmoid>(w + 3 * H, w + 3 * H, H);  // o
  for (int64_t j = 0; j < H; ++j) w[4 * H + j] = canon(canon(w[H + j] * c_prev[j]) + canon(w[j] * w[2 * H + j]));
  unary_row<T, EwOp::tanh>(w + 4 * H, w + 5 * H, H);  // tanh(c)
  for (int64_t j = 0; j < H; ++j) h[j] = canon(w[3 * H + j] * w[5 * H + j]);
}

}  // namespace

template <typename T>
void lstm_forward_step(int64_t B, int64_t H, const T* a, int64_t a_rs, const T* r, int64_t r_rs, const T* c_prev,
                       int64_t c_rs, T* ws, T* h, int nthreads) {
  parallel_for(B, nthreads, 64 * H, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      lstm_forward_row<T>(H, a + b * a_rs, r + b * r_rs, c_prev + b * c_rs, ws + b * 6 * H, h + b * H);
  });
}

template <typename T>
void lstm_backward_step(int64_t B, int64_t H, const T* go, int64_t go_rs, int64_t go_cs, const T* dh, const T* dc,
                        const T* ws, const T* c_prev, int64_t c_rs, T* dgates, T* dc_out, int nthreads) {
  parallel_for(B, nthreads, 64 * H, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const T* w = ws + b * 6 * H;
      T* d = dgates + b * 4 * H;
      for (int64_t j = 0; j < H; ++j) {
        const T dht =
            lstm_dh<T>(go ? go[b * go_rs + j * go_cs] : T(0), go != nullptr, dh ? dh[b * H + j] : T(0), dh != nullptr);
        const LstmCellGrad<T> g = lstm_cell_backward<T>(dht, dc ? dc[b * H + j] : T(0), dc != nullptr, w[j], w[H + j],
                                                        w[2 * H + j], w[3 * H + j], w[5 * H + j], c_prev[b * c_rs + j]);
        d[j] = g.di;
        d[H + j] = g.df;
        d[2 * H + j] = g.dg;
        d[3 * H + j] = g.d_o;
        dc_out[b * H + j] = g.dc;
      }
    }
  });
}

#define REPMODE_INSTANTIATE(T)                                                                                      \
  template void lstm_forward_step<T>(int64_t, int64_t, const T*, int64_t, const T*, int64_t, const T*, int64_t, T*, \
                                     T*, int);                                                                      \
  template void lstm_backward_step<T>(int64_t, int64_t, const T*, int64_t, int64_t, const T*, const T*, const T*,   \
                                      const T*, int64_t, T*, T*, int);
REPMODE_INSTANTIATE(float)
REPMODE_INSTANTIATE(double)
#undef REPMODE_INSTANTIATE

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

void lstm_forward_step(int dtype, int64_t B, int64_t H, uintptr_t a, int64_t a_rs, uintptr_t r, int64_t r_rs,
                       uintptr_t c_prev, int64_t c_rs, uintptr_t ws, uintptr_t h, int nthreads) {
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    lstm_forward_step<T>(B, H, ptr<T>(a), a_rs, ptr<T>(r), r_rs, ptr<T>(c_prev), c_rs, ptr<T>(ws), ptr<T>(h), nthreads);
  });
}

void lstm_backward_step(int dtype, int64_t B, int64_t H, uintptr_t go, int64_t go_rs, int64_t go_cs, uintptr_t dh,
                        uintptr_t dc, uintptr_t ws, uintptr_t c_prev, int64_t c_rs, uintptr_t dgates, uintptr_t dc_out,
                        int nthreads) {
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    lstm_backward_step<T>(B, H, ptr<T>(go), go_rs, go_cs, ptr<T>(dh), ptr<T>(dc), ptr<T>(ws), ptr<T>(c_prev), c_rs,
                          ptr<T>(dgates), ptr<T>(dc_out), nthreads);
  });
}

}  // namespace repmode::cpu
