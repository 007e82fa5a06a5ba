// The lowering of the CPU convolution onto the canonical GEMM (csrc/cpu/convolution.cpp): chunk
// sizes, the output-row segments of a chunk, im2col / col2im over them, the gather tables of
// small images, per-thread buffers and the task runner. Only memory walks live here: which
// lowered entries exist and where they go; every output's arithmetic is the GEMM's chain
// (csrc/common/matmul.h) and the col2im order documented in convolution.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <omp.h>

#include "../common/convolution.h"
#include "parallel.h"

namespace repmode::cpu::lowering {

// Elements of im2col columns a chunk may use (per thread): about half an L2. Changeable
// for tests (set_conv_chunk_elems): chunking never changes results.
// (Defined in convolution_lowering.cpp; set_conv_chunk_elems sets it.)
extern int64_t kChunkElems;

// Small images: when one image's lowered columns (K × L) hold at most small_image_elems()
// elements, a round of images is lowered at once and one batched GEMM call serves them all
// (per-image GEMM calls and parallel regions would cost more than the arithmetic, and a
// per-image GEMM of a few positions packs the whole weight for a handful of columns); a
// round's buffers hold about 8·kChunkElems elements (3 MB of float32). Each output's chain is
// unchanged. Both follow kChunkElems, so tests that shrink it reach the general path and the
// round boundaries.
inline int64_t small_image_elems() { return 2 * kChunkElems; }

inline int64_t images_per_round(int64_t N, int64_t per_image) {
  return std::min<int64_t>(N, std::max<int64_t>(1, 8 * kChunkElems / std::max<int64_t>(per_image, 1)));
}

inline int64_t ceil_pos(int64_t a, int64_t s) { return a <= 0 ? 0 : (a + s - 1) / s; }

// One output-row piece of a chunk: row (o0, o1), last-dim indices [a, b), chunk column j of a.
struct Segment {
  int64_t o0, o1, a, b, j;
};

// The output-row segments covering flat positions [p0, p1), in order.
void chunk_segments(const ConvGeom& g, int64_t p0, int64_t p1, std::vector<Segment>& segs);

// Visits each (ci, f) row of the lowered matrix for input channels [0, nc) of one image (xc
// points at its first channel) and the chunk's segments. For every segment: op(dst, src,
// count, step) on the valid part (src = first input element, step = its stride), and
// zero(dst, count) on the padding part. dst is the row's entry for the segment's column.
template <typename T, class Op, class Zero>
inline void walk_lowered(const ConvGeom& g, int64_t nc, T* xc, const std::vector<Segment>& segs, T* col, int64_t ldc,
                         const Op& op, const Zero& zero) {
  const int64_t kvol = g.kvol(), lin = g.in_len();
  const int64_t s2 = g.stride[2];
  for (int64_t c = 0; c < nc; ++c) {
    T* xch = xc + c * lin;
    for (int64_t f = 0; f < kvol; ++f) {
      const int64_t k2 = f % g.k[2], k1 = (f / g.k[2]) % g.k[1], k0 = f / (g.k[2] * g.k[1]);
      T* row = col + (c * kvol + f) * ldc;
      const int64_t off0 = k0 * g.dil[0] - g.pad[0], off1 = k1 * g.dil[1] - g.pad[1];
      const int64_t off2 = k2 * g.dil[2] - g.pad[2];
      const int64_t lo0 = ceil_pos(-off2, s2);
      const int64_t hi0 = ceil_pos(g.in[2] - off2, s2);
      for (const Segment& sg : segs) {
        T* dst = row + sg.j;
        const int64_t a = sg.a, b = sg.b;
        const int64_t i0 = sg.o0 * g.stride[0] + off0, i1 = sg.o1 * g.stride[1] + off1;
        if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1]) {
          zero(dst, b - a);
          continue;
        }
        const int64_t lo = std::min(std::max(a, lo0), b), hi = std::max(std::min(b, hi0), lo);
        zero(dst, lo - a);
        if (hi > lo) op(dst + (lo - a), xch + (i0 * g.in[1] + i1) * g.in[2] + lo * s2 + off2, hi - lo, s2);
        zero(dst + (hi - a), b - hi);
      }
    }
  }
}

template <typename T>
void im2col(const ConvGeom& g, int64_t nc, const T* xc, const std::vector<Segment>& segs, T* col, int64_t ldc) {
  walk_lowered<T>(
      g, nc, const_cast<T*>(xc), segs, col, ldc,
      [](T* dst, const T* src, int64_t n, int64_t s) {
        if (s == 1) {
          if (n >= 64)
            std::memcpy(dst, src, size_t(n) * sizeof(T));
          else
            for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
        } else {
          for (int64_t i = 0; i < n; ++i) dst[i] = src[i * s];
        }
      },
      [](T* dst, int64_t n) {
        if (n > 0) std::memset(dst, 0, size_t(n) * sizeof(T));  // +0.0
      });
}

// gx[...] += col[...] for every valid (row, position); padding entries are dropped.
template <typename T>
void col2im_add(const ConvGeom& g, int64_t nc, T* gxc, const std::vector<Segment>& segs, T* col, int64_t ldc) {
  walk_lowered<T>(
      g, nc, gxc, segs, col, ldc,
      [](T* src_col, T* dst, int64_t n, int64_t s) {
        // (walk_lowered's dst is the column entry, its src the input element)
        for (int64_t i = 0; i < n; ++i) dst[i * s] = dst[i * s] + src_col[i];
      },
      [](T*, int64_t) {});
}

inline std::vector<Segment>& thread_segments() {
  thread_local std::vector<Segment> segs;
  return segs;
}

template <typename T>
T* thread_buffer(size_t n, int slot) {
  thread_local std::vector<T> buf[3];
  if (buf[slot].size() < n) buf[slot].resize(n);
  return buf[slot].data();
}

// Runs task(t, inner_threads) for t in [0, ntasks): in parallel, one thread per task, when
// there are enough tasks; else one after another, each with all threads inside.
template <class Fn>
void run_tasks(int64_t ntasks, int nthreads, double work, const Fn& task) {
  if (work < double(1 << 18)) nthreads = 1;
  if (nthreads <= 1 || ntasks < nthreads) {
    for (int64_t t = 0; t < ntasks; ++t) task(t, nthreads);
    return;
  }
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
  for (int64_t t = 0; t < ntasks; ++t) task(t, 1);
}

// Small images: the input offset (within one channel) that kernel offset f reads at output
// position p, or -1 in the padding: a kvol × L table, built once per call, so lowering an
// image is a plain gather instead of the segment walk (whose bookkeeping dominates tiny rows).
std::vector<int64_t> lowering_table(const ConvGeom& g);

// col[(c, f), p] (row stride ldc) = x[c, idx[f, p]], +0.0 in the padding.
template <typename T>
void im2col_table(const ConvGeom& g, int64_t nc, const T* xc, const int64_t* idx, T* col, int64_t ldc) {
  const int64_t kvol = g.kvol(), L = g.out_len(), lin = g.in_len();
  for (int64_t c = 0; c < nc; ++c)
    for (int64_t f = 0; f < kvol; ++f) {
      const T* xch = xc + c * lin;
      const int64_t* t = idx + f * L;
      T* row = col + (c * kvol + f) * ldc;
      for (int64_t p = 0; p < L; ++p) row[p] = t[p] < 0 ? T(0) : xch[t[p]];
    }
}

// gx[c, idx[f, p]] += col[(c, f), p], f increasing: for one input element the offsets arrive in
// increasing order (for a fixed f, distinct positions read distinct input elements).
template <typename T>
void col2im_table_add(const ConvGeom& g, int64_t nc, T* gxc, const int64_t* idx, const T* col, int64_t ldc) {
  const int64_t kvol = g.kvol(), L = g.out_len(), lin = g.in_len();
  for (int64_t c = 0; c < nc; ++c)
    for (int64_t f = 0; f < kvol; ++f) {
      T* gch = gxc + c * lin;
      const int64_t* t = idx + f * L;
      const T* row = col + (c * kvol + f) * ldc;
      for (int64_t p = 0; p < L; ++p)
        if (t[p] >= 0) gch[t[p]] = gch[t[p]] + row[p];
    }
}

}  // namespace repmode::cpu::lowering
