// LSTM cell steps on the GPU (csrc/cuda/launchers.h), the twins of csrc/cpu/recurrent.cpp: one
// thread per (row b, column j) of the B x H step, evaluating lstm_cell_forward /
// lstm_cell_backward (csrc/common/recurrent.h), the same per-element sequence the CPU's staged
// rows compute. Nothing is reduced, so the partition cannot change a bit.
#include "../common/recurrent.h"
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

// a, r: rows of the 4 gate pre-activations (i | f | g | o, H each) with row strides a_rs,
// r_rs; ws rows: i | f | g | o | c | tanh c (6H, contiguous); h: B x H contiguous.
template <typename T>
__global__ void lstm_forward_kernel(int64_t B, int64_t H, const T* a, int64_t a_rs, const T* r, int64_t r_rs,
                                    const T* c_prev, int64_t c_rs, T* ws, T* h) {
  for (int64_t e = global_thread(); e < B * H; e += grid_stride()) {
    const int64_t b = e / H, j = e - b * H;
    const T* ar = a + b * a_rs + j;
    const T* rr = r + b * r_rs + j;
    const T av[4] = {ar[0], ar[H], ar[2 * H], ar[3 * H]};
    const T rv[4] = {rr[0], rr[H], rr[2 * H], rr[3 * H]};
    const LstmCellOut<T> s = lstm_cell_forward<T>(av, rv, c_prev[b * c_rs + j]);
    T* w = ws + b * 6 * H + j;
    w[0] = s.i;
    w[H] = s.f;
    w[2 * H] = s.g;
    w[3 * H] = s.o;
    w[4 * H] = s.c;
    w[5 * H] = s.tc;
    h[e] = s.h;
  }
}

// go: strides go_rs, go_cs (null: none); dh, dc: B x H contiguous (null: none); dgates: B x 4H
// contiguous (di | df | dg | do); dc_out: B x H contiguous.
template <typename T>
__global__ void lstm_backward_kernel(int64_t B, int64_t H, const T* go, int64_t go_rs, int64_t go_cs, const T* dh,
                                     const T* dc, const T* ws, const T* c_prev, int64_t c_rs, T* dgates, T* dc_out) {
  for (int64_t e = global_thread(); e < B * H; e += grid_stride()) {
    const int64_t b = e / H, j = e - b * H;
    const T* w = ws + b * 6 * H + j;
    const T dht = lstm_dh<T>(go ? go[b * go_rs + j * go_cs] : T(0), go != nullptr, dh ? dh[e] : T(0), dh != nullptr);
    const LstmCellGrad<T> g = lstm_cell_backward<T>(dht, dc ? dc[e] : T(0), dc != nullptr, w[0], w[H], w[2 * H],
                                                    w[3 * H], w[5 * H], c_prev[b * c_rs + j]);
    T* d = dgates + b * 4 * H + j;
    d[0] = g.di;
    d[H] = g.df;
    d[2 * H] = g.dg;
    d[3 * H] = g.d_o;
    dc_out[e] = g.dc;
  }
}

}  // namespace

// One thread per (b, j) element of the step (grid-stride).
void lstm_forward_step(int dtype, int64_t B, int64_t H, uintptr_t a, int64_t a_rs, uintptr_t r, int64_t r_rs,
                       uintptr_t c_prev, int64_t c_rs, uintptr_t ws, uintptr_t h, uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (B <= 0 || H <= 0) return;
    lstm_forward_kernel<T><<<blocks_for(B * H), kBlock, 0, scope.get()>>>(
        B, H, ptr<const T>(a), a_rs, ptr<const T>(r), r_rs, ptr<const T>(c_prev), c_rs, ptr<T>(ws), ptr<T>(h));
    check_launch("lstm_forward_kernel");
  });
}

// One thread per (b, j) element of the step (grid-stride).
void lstm_backward_step(int dtype, int64_t B, int64_t H, uintptr_t go, int64_t go_rs, int64_t go_cs, uintptr_t dh,
                        uintptr_t dc, uintptr_t ws, uintptr_t c_prev, int64_t c_rs, uintptr_t dgates, uintptr_t dc_out,
                        uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (B <= 0 || H <= 0) return;
    lstm_backward_kernel<T><<<blocks_for(B * H), kBlock, 0, scope.get()>>>(
        B, H, ptr<const T>(go), go_rs, go_cs, ptr<const T>(dh), ptr<const T>(dc), ptr<const T>(ws),
        ptr<const T>(c_prev), c_rs, ptr<T>(dgates), ptr<T>(dc_out));
    check_launch("lstm_backward_kernel");
  });
}

}  // namespace repmode::cuda
