// Convolution: the canonical order of every output, written as plain per-element functions
// (docs/semantics.md "## Convolution"). The CPU fast path (csrc/cpu/convolution.cpp, convolution_lowering.h) lowers
// the same chains onto the canonical GEMM; tests check it against these bit for bit.
//
// Tensors are contiguous here: x (N, Ci, I0, I1, I2), w (Co, Ci/G, K0, K1, K2),
// y (N, Co, O0, O1, O2). 1-d and 2-d convolutions are the 3-d case with leading spatial
// sizes 1 (size-1 kernel, stride 1, padding 0, dilation 1 there), which adds no term.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "defs.h"
#include "math.h"
#include "matmul.h"  // GemmSum: the GEMM order over k the CPU and CUDA lowerings run on

namespace repmode {

struct ConvGeom {
  int64_t N, Ci, Co, G;
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];

  REPMODE_HD int64_t cig() const { return Ci / G; }
  REPMODE_HD int64_t cog() const { return Co / G; }
  REPMODE_HD int64_t kvol() const { return k[0] * k[1] * k[2]; }
  REPMODE_HD int64_t in_len() const { return in[0] * in[1] * in[2]; }
  REPMODE_HD int64_t out_len() const { return out[0] * out[1] * out[2]; }
  // Columns of the lowered product: (ci, k0, k1, k2) row-major within a group.
  REPMODE_HD int64_t kdim() const { return cig() * kvol(); }
};

// The geometry's integer layout, defined here once: X(field, member) in the order Python passes
// them (exported as _C.codes()["ConvGeom"], the field names in order; repmode/kernels/
// convolution.py builds the list by name). 1-d and 2-d convolutions are padded to 3-d with
// leading size-1 dims.
// clang-format off
#define REPMODE_CONV_GEOM_FIELDS(X)                                                        \
  X(N, N) X(Ci, Ci) X(Co, Co) X(G, G)                                                      \
  X(in0, in[0])         X(in1, in[1])         X(in2, in[2])                                \
  X(out0, out[0])       X(out1, out[1])       X(out2, out[2])                              \
  X(k0, k[0])           X(k1, k[1])           X(k2, k[2])                                  \
  X(stride0, stride[0]) X(stride1, stride[1]) X(stride2, stride[2])                        \
  X(pad0, pad[0])       X(pad1, pad[1])       X(pad2, pad[2])                              \
  X(dil0, dil[0])       X(dil1, dil[1])       X(dil2, dil[2])
// clang-format on

#define REPMODE_X(field, member) +1
constexpr int kConvGeomFields = 0 REPMODE_CONV_GEOM_FIELDS(REPMODE_X);
#undef REPMODE_X

// The geometry from the kConvGeomFields (22) integers of REPMODE_CONV_GEOM_FIELDS (host only;
// `who` prefixes the errors).
inline ConvGeom conv_geom_of(const std::vector<int64_t>& v, const char* who) {
  if (v.size() != size_t(kConvGeomFields))
    throw std::invalid_argument(std::string(who) + ": convolution geometry needs 22 integers");
  ConvGeom g{};
  size_t i = 0;
#define REPMODE_X(field, member) g.member = v[i++];
  REPMODE_CONV_GEOM_FIELDS(REPMODE_X)
#undef REPMODE_X
  for (int d = 0; d < 3; ++d) {
    if (g.stride[d] < 1 || g.dil[d] < 1 || g.k[d] < 1)
      throw std::invalid_argument(std::string(who) + ": convolution stride, dilation and kernel must be >= 1");
  }
  if (g.G < 1 || g.Ci % g.G != 0 || g.Co % g.G != 0)
    throw std::invalid_argument(std::string(who) + ": convolution channels must be divisible by groups");
  return g;
}

// The input position read by output position (o0, o1, o2) at kernel offset (k0, k1, k2),
// or -1 where it falls into the zero padding.
REPMODE_HD int64_t conv_input_pos(const ConvGeom& g, const int64_t* o, const int64_t* kk) {
  int64_t p = 0;
  for (int d = 0; d < 3; ++d) {
    const int64_t i = o[d] * g.stride[d] - g.pad[d] + kk[d] * g.dil[d];
    if (i < 0 || i >= g.in[d]) return -1;
    p = p * g.in[d] + i;
  }
  return p;
}

REPMODE_HD void conv_unflatten(const int64_t* size, int64_t flat, int64_t* idx) {
  idx[2] = flat % size[2];
  flat /= size[2];
  idx[1] = flat % size[1];
  idx[0] = flat / size[1];
}

// A bias term: added once to a finished (canonical) output, NaN made canonical.
template <typename T>
REPMODE_HD T conv_add_bias(T v, T b) {
  return canon(T(v + b));
}

// fn(kk, f) for every kernel offset kk in row-major order, f its flat index (the order of the
// lowered rows and of the input gradient's gather): counted, not unflattened from f, so no
// index divisions.
template <class Fn>
REPMODE_HD void conv_each_offset(const ConvGeom& g, const Fn& fn) {
  int64_t kk[3], f = 0;
  for (kk[0] = 0; kk[0] < g.k[0]; ++kk[0])
    for (kk[1] = 0; kk[1] < g.k[1]; ++kk[1])
      for (kk[2] = 0; kk[2] < g.k[2]; ++kk[2], ++f) fn(static_cast<const int64_t*>(kk), f);
}

// An entry of the lowered matrix of one input channel xc: the input that kernel offset kk reads at
// output position o (coordinates, as conv_unflatten gives them), +0.0 in the padding (the zero
// term of the chain).
template <typename T>
REPMODE_HD T conv_lowered_at(const ConvGeom& g, const T* xc, const int64_t* o, const int64_t* kk) {
  const int64_t ip = conv_input_pos(g, o, kk);
  return ip < 0 ? T(0) : xc[ip];
}

// Forward: y[n, co, pos] = the GEMM order (GemmSum: chains of 16 summed by chunk, group and total)
// over k = the group's input channels ci, then the kernel offsets in row-major order, of
// x_padded · w (a padding position is a zero term); then one addition of bias[co] when there
// is a bias.
template <typename T>
REPMODE_HD T conv_forward_at(const ConvGeom& g, const T* x, const T* w, const T* bias, int64_t n, int64_t co,
                             int64_t pos) {
  int64_t o[3];
  conv_unflatten(g.out, pos, o);
  const int64_t grp = co / g.cog(), kvol = g.kvol();
  GemmSum<T> sum(g.cig() * kvol);
  for (int64_t c = 0; c < g.cig(); ++c) {
    const T* xc = x + (n * g.Ci + grp * g.cig() + c) * g.in_len();
    const T* wc = w + (co * g.cig() + c) * kvol;
    conv_each_offset(g, [&](const int64_t* kk, int64_t f) { sum.step(wc[f], conv_lowered_at<T>(g, xc, o, kk)); });
  }
  const T acc = sum.finish();
  return bias ? conv_add_bias(acc, bias[co]) : acc;
}

// The output position that reads input position i at kernel offset kk, or -1 if none.
REPMODE_HD int64_t conv_output_pos(const ConvGeom& g, const int64_t* i, const int64_t* kk) {
  int64_t p = 0;
  for (int d = 0; d < 3; ++d) {
    const int64_t t = i[d] + g.pad[d] - kk[d] * g.dil[d];
    if (t < 0) return -1;
    int64_t o = t;
    if (g.stride[d] != 1) {  // (the 64-bit division is a GPU's slowest integer operation)
      if (t % g.stride[d] != 0) return -1;
      o = t / g.stride[d];
    }
    if (o >= g.out[d]) return -1;
    p = p * g.out[d] + o;
  }
  return p;
}

// The input gradient's outer sum for input position ipos: acc = +0.0; for each kernel offset f
// in row-major order whose output position op exists, acc = acc + part(f, op); then canon().
template <typename T, class Part>
REPMODE_HD T conv_grad_input_gather(const ConvGeom& g, int64_t ipos, const Part& part) {
  int64_t i[3];
  conv_unflatten(g.in, ipos, i);
  T acc = T(0);
  conv_each_offset(g, [&](const int64_t* kk, int64_t f) {
    const int64_t op = conv_output_pos(g, i, kk);
    if (op >= 0) acc = acc + part(f, op);
  });
  return canon(acc);
}

// Input gradient: gx[n, ci, ipos] starts at +0.0; for each kernel offset f in row-major
// order whose output position o exists, the partial P_f = the GEMM order (GemmSum) over the
// group's output channels co (increasing) of w[co, ci, f] · gy[n, co, o] (NaN made
// canonical) is added: acc = acc + P_f.
template <typename T>
REPMODE_HD T conv_grad_input_at(const ConvGeom& g, const T* gy, const T* w, int64_t n, int64_t ci, int64_t ipos) {
  const int64_t grp = ci / g.cig(), cl = ci % g.cig(), kvol = g.kvol();
  return conv_grad_input_gather<T>(g, ipos, [&](int64_t f, int64_t op) {
    GemmSum<T> part(g.cog());
    for (int64_t c = 0; c < g.cog(); ++c) {
      const int64_t co = grp * g.cog() + c;
      part.step(w[(co * g.cig() + cl) * kvol + f], gy[(n * g.Co + co) * g.out_len() + op]);
    }
    return part.finish();
  });
}

// The input gradient as the op writes it: conv_grad_input_at, plus bias[ci] once at the end
// when there is a bias (the transposed convolution's forward).
template <typename T>
REPMODE_HD T conv_grad_input_out(const ConvGeom& g, const T* gy, const T* w, const T* bias, int64_t n, int64_t ci,
                                 int64_t ipos) {
  const T v = conv_grad_input_at<T>(g, gy, w, n, ci, ipos);
  return bias ? conv_add_bias(v, bias[ci]) : v;
}

// The weight-gradient partial of image n: the GEMM order (GemmSum) over the output positions in
// row-major order of gy[n, co, pos] · x_padded[n, ci, pos·stride − pad + f·dil] (padding
// positions are zero terms), NaN made canonical.
template <typename T>
REPMODE_HD T conv_grad_weight_partial(const ConvGeom& g, const T* x, const T* gy, int64_t n, int64_t co, int64_t cl,
                                      int64_t f) {
  int64_t o[3], kk[3];
  conv_unflatten(g.k, f, kk);
  const int64_t grp = co / g.cog();
  const T* xc = x + (n * g.Ci + grp * g.cig() + cl) * g.in_len();
  const T* gyc = gy + (n * g.Co + co) * g.out_len();
  GemmSum<T> acc(g.out_len());
  for (int64_t p = 0; p < g.out_len(); ++p) {
    conv_unflatten(g.out, p, o);
    acc.step(gyc[p], conv_lowered_at<T>(g, xc, o, kk));
  }
  return acc.finish();
}

// One step of the weight gradient's sum over images: image 0's partial starts it, the partial
// of image n >= 1 is added. (Devices that keep the running sum between rounds of images store
// it exactly and apply canon() only after the last image.)
template <typename T>
REPMODE_HD T conv_grad_weight_step(T acc, T part, int64_t n) {
  return n == 0 ? part : T(acc + part);
}

// Weight gradient: gw = P_0, then gw = gw + P_n for n = 1 .. N-1 in increasing n
// (N = 0 gives +0.0).
template <typename T>
REPMODE_HD T conv_grad_weight_at(const ConvGeom& g, const T* x, const T* gy, int64_t co, int64_t cl, int64_t f) {
  T acc = T(0);
  for (int64_t n = 0; n < g.N; ++n)
    acc = conv_grad_weight_step(acc, conv_grad_weight_partial(g, x, gy, n, co, cl, f), n);
  return canon(acc);
}

}  // namespace repmode
