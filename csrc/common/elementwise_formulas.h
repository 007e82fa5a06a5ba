// Per-element formulas: the exact sequence of IEEE-754 roundings of each elementwise op
// (docs/semantics.md, "Elementwise"). Shared by the CPU and CUDA kernels. Every result
// passes through canon() so a NaN output has one bit pattern on every device.
#pragma once

#include "defs.h"
#include "math.h"

namespace repmode {

// Codes shared with the Python side (repmode/kernels/elementwise.py, OP_CODES).
enum class EwOp : int {
  add = 0,                 // a + (alpha * b)
  sub = 1,                 // a - (alpha * b)
  mul = 2,                 // a * b
  div = 3,                 // a / b
  threshold_backward = 4,  // b <= alpha ? +0 : a    (a = grad, b = input, alpha = threshold)
  neg = 10,                // -a
  relu = 11,               // a > 0 ? a : +0         (NaN stays NaN)
  exp = 12,                // exp(a), correctly rounded for float32
  log = 13,                // log(a), correctly rounded for float32
  abs = 14,                // a <= 0 ? 0 - a : a    (so abs(-0) = +0)
};

template <typename T, EwOp op>
struct EwFormula;

template <typename T> struct EwFormula<T, EwOp::add> {
  static REPMODE_HD T apply(T a, T b, T alpha) { return canon(a + alpha * b); }
};
template <typename T> struct EwFormula<T, EwOp::sub> {
  static REPMODE_HD T apply(T a, T b, T alpha) { return canon(a - alpha * b); }
};
template <typename T> struct EwFormula<T, EwOp::mul> {
  static REPMODE_HD T apply(T a, T b, T) { return canon(a * b); }
};
template <typename T> struct EwFormula<T, EwOp::div> {
  static REPMODE_HD T apply(T a, T b, T) { return canon(a / b); }
};
template <typename T> struct EwFormula<T, EwOp::threshold_backward> {
  static REPMODE_HD T apply(T grad, T input, T threshold) {
    return input <= threshold ? T(0.0) : canon(grad);
  }
};
template <typename T> struct EwFormula<T, EwOp::neg> {
  static REPMODE_HD T apply(T a, T, T) { return canon(-a); }
};
template <typename T> struct EwFormula<T, EwOp::relu> {
  static REPMODE_HD T apply(T a, T, T) { return a > T(0.0) ? a : (a != a ? Canonical<T>::nan() : T(0.0)); }
};
template <typename T> struct EwFormula<T, EwOp::abs> {
  static REPMODE_HD T apply(T a, T, T) { return canon(a <= T(0.0) ? T(0.0) - a : a); }
};
template <> struct EwFormula<float, EwOp::exp> {
  static REPMODE_HD float apply(float a, float, float) { return cr_expf(a); }
};
template <> struct EwFormula<double, EwOp::exp> {
  static REPMODE_HD double apply(double a, double, double) { return repmode_exp(a); }
};
template <> struct EwFormula<float, EwOp::log> {
  static REPMODE_HD float apply(float a, float, float) { return cr_logf(a); }
};
template <> struct EwFormula<double, EwOp::log> {
  static REPMODE_HD double apply(double a, double, double) { return repmode_log(a); }
};

}  // namespace repmode
