// LSTM cell, per (row, column j) of one time step: the pointwise part of docs/semantics.md
// "Recurrent layers". Every step is the same elementwise op repmode's Python composite calls
// (add, mul, sigmoid, tanh, tanh_backward, sigmoid_backward: EwFormula), so the fused kernel
// and the op-by-op composite give the same bits.
#pragma once

#include "defs.h"
#include "elementwise.h"

namespace repmode {

template <typename T>
struct LstmCellOut {
  T i, f, g, o, c, tc, h;
};

// a: x_t·W_ihᵀ + b_ih and r: h·W_hhᵀ + b_hh, each the 4 gates (i, f, g, o) of column j.
template <typename T>
REPMODE_HD LstmCellOut<T> lstm_cell_forward(const T a[4], const T r[4], T c_prev) {
  const EwParams<T> p{1.0, 0.0, 0.0};
  const T z(0);
  LstmCellOut<T> s;
  s.i = EwFormula<T, EwOp::sigmoid>::apply(canon(a[0] + r[0]), z, z, p);
  s.f = EwFormula<T, EwOp::sigmoid>::apply(canon(a[1] + r[1]), z, z, p);
  s.g = EwFormula<T, EwOp::tanh>::apply(canon(a[2] + r[2]), z, z, p);
  s.o = EwFormula<T, EwOp::sigmoid>::apply(canon(a[3] + r[3]), z, z, p);
  s.c = canon(canon(s.f * c_prev) + canon(s.i * s.g));
  s.tc = EwFormula<T, EwOp::tanh>::apply(s.c, z, z, p);
  s.h = canon(s.o * s.tc);
  return s;
}

template <typename T>
struct LstmCellGrad {
  T di, df, dg, d_o, dc;  // pre-activation gate gradients and the gradient to c_{t-1}
};

// dht: the gradient reaching h_t (grad_output[t] + recurrent dh, formed by the caller with
// lstm_dh); dc: the recurrent gradient of c_t (has_dc false: none).
template <typename T>
REPMODE_HD LstmCellGrad<T> lstm_cell_backward(T dht, T dc, bool has_dc, T i, T f, T g, T o, T tc, T c_prev) {
  const EwParams<T> p{1.0, 0.0, 0.0};
  const T z(0);
  LstmCellGrad<T> d;
  const T dto = canon(dht * tc);
  T dct = EwFormula<T, EwOp::tanh_backward>::apply(canon(dht * o), tc, z, p);
  if (has_dc) dct = canon(dc + dct);
  d.di = EwFormula<T, EwOp::sigmoid_backward>::apply(canon(dct * g), i, z, p);
  d.df = EwFormula<T, EwOp::sigmoid_backward>::apply(canon(dct * c_prev), f, z, p);
  d.dg = EwFormula<T, EwOp::tanh_backward>::apply(canon(dct * i), g, z, p);
  d.d_o = EwFormula<T, EwOp::sigmoid_backward>::apply(dto, o, z, p);
  d.dc = canon(dct * f);
  return d;
}

// The gradient reaching h_t: grad_output[t] + dh when both exist, else whichever exists, else 0.
template <typename T>
REPMODE_HD T lstm_dh(T go, bool has_go, T dh, bool has_dh) {
  if (has_go && has_dh) return canon(go + dh);
  if (has_go) return go;
  if (has_dh) return dh;
  return T(0);
}

}  // namespace repmode
