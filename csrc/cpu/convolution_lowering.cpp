// The non-template half of the convolution lowering (csrc/cpu/convolution_lowering.h): the chunk
// size and its setter, the segments of a chunk and the gather table of small images.
#include "convolution_lowering.h"

#include "entry_points.h"

namespace repmode::cpu {
namespace lowering {

// Elements of im2col columns a chunk may use (per thread): about half an L2. Changeable
// for tests (set_conv_chunk_elems): chunking never changes results.
int64_t kChunkElems = 96 * 1024;

// The output-row segments covering flat positions [p0, p1), in order.
void chunk_segments(const ConvGeom& g, int64_t p0, int64_t p1, std::vector<Segment>& segs) {
  segs.clear();
  const int64_t W = g.out[2];
  if (p1 <= p0) return;
  int64_t a = p0 % W, r = p0 / W;
  int64_t o1 = r % g.out[1], o0 = r / g.out[1];
  for (int64_t p = p0; p < p1;) {
    const int64_t b = std::min<int64_t>(W, a + (p1 - p));
    segs.push_back(Segment{o0, o1, a, b, p - p0});
    p += b - a;
    a = 0;
    if (++o1 == g.out[1]) {
      o1 = 0;
      ++o0;
    }
  }
}

// Small images: the input offset (within one channel) that kernel offset f reads at output
// position p, or -1 in the padding: a kvol × L table, built once per call, so lowering an
// image is a plain gather instead of the segment walk (whose bookkeeping dominates tiny rows).
std::vector<int64_t> lowering_table(const ConvGeom& g) {
  const int64_t kvol = g.kvol(), L = g.out_len();
  std::vector<int64_t> idx(size_t(kvol * L));
  for (int64_t f = 0; f < kvol; ++f) {
    int64_t kk[3], o[3];
    conv_unflatten(g.k, f, kk);
    for (int64_t p = 0; p < L; ++p) {
      conv_unflatten(g.out, p, o);
      idx[f * L + p] = conv_input_pos(g, o, kk);
    }
  }
  return idx;
}

}  // namespace lowering

int64_t set_conv_chunk_elems(int64_t elems) {
  const int64_t old = lowering::kChunkElems;
  if (elems > 0) lowering::kChunkElems = elems;
  return old;
}

}  // namespace repmode::cpu
