// Reproducible convolution on the CPU: im2col / col2im around the canonical GEMM
// (csrc/cpu/matmul.h). Every output is computed in the order of csrc/common/convolution.h;
// threads, chunk sizes and ISA paths only decide who computes which outputs.
#pragma once

#include <cstdint>

#include "../common/convolution.h"

namespace repmode::cpu {

// y = conv(x, w) (+ bias when bias != nullptr). x, w, y contiguous.
template <typename T>
void conv_forward(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, int nthreads);

// gx = the input gradient of conv (x shaped by g.in) for gy; plus bias[ci] once at the end
// when bias != nullptr (the transposed convolution's forward).
template <typename T>
void conv_grad_input(const ConvGeom& g, const T* gy, const T* w, const T* bias, T* gx, int nthreads);

// gw = the weight gradient of conv for input x and output gradient gy.
template <typename T>
void conv_grad_weight(const ConvGeom& g, const T* x, const T* gy, T* gw, int nthreads);

// Depthwise convolutions (groups = Ci = Co, kernel volume <= 256, non-empty) take a direct
// kernel (csrc/cpu/convolution_depthwise.cpp) with the channels as vector lanes: the same chains.
bool conv_depthwise_direct(const ConvGeom& g);
template <typename T>
void conv_depthwise_forward(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, int nthreads);
template <typename T>
void conv_depthwise_grad_input(const ConvGeom& g, const T* gy, const T* w, const T* bias, T* gx, int nthreads);
template <typename T>
void conv_depthwise_grad_weight(const ConvGeom& g, const T* x, const T* gy, T* gw, int nthreads);

// Sets how many elements of lowered columns one chunk may hold (elems > 0; a speed knob
// that never changes results, exposed so tests reach the chunk boundaries with small
// shapes). Returns the previous value; elems <= 0 only reads it.
int64_t set_conv_chunk_elems(int64_t elems);

// The orders of csrc/common/convolution.h as plain loops (what = 0 forward, 1 grad input,
// 2 grad weight). For tests.
template <typename T>
void conv_reference(int what, const ConvGeom& g, const T* a, const T* b, const T* bias, T* out);

}  // namespace repmode::cpu
