// The lane walk of csrc/cpu/fft.cpp, included twice there (portable, and compiled for AVX2): kLanes
// sequences transformed together, each lane running the scalar sequence of fft_recursive /
// fft_bluestein (csrc/common/fft.h) on its own data, with the same twiddle for every lane. Only
// + - * on doubles, lane by lane (-ffp-contract=off), so the vectorized loops give the scalar bits.
// No include guard and no includes: fft.cpp includes it inside a namespace after fft.h, Plan and CxL.
// clang-format off

REPMODE_INLINE void lane_mul(CxL& o, const CxL& a, Cx w) {
  for (int l = 0; l < kLanes; ++l) {
    const double ac = a.re[l] * w.re, bd = a.im[l] * w.im, ad = a.re[l] * w.im, bc = a.im[l] * w.re;
    o.re[l] = ac - bd;
    o.im[l] = ad + bc;
  }
}

// fft_butterfly, lane by lane. lt: this level's twiddles W^{jk} (lt[k (r-1) + j-1] = tw[j k tstep],
// the same values laid out in the order they are used).
REPMODE_INLINE void lane_butterfly(CxL* out, int64_t k, int64_t m, int r, const Cx* tw, int64_t tstep, const Cx* lt,
                                   bool forward) {
  CxL t[7];
  t[0] = out[k];
  for (int j = 1; j < r; ++j) {
    if (k == 0)  // j k == 0: no multiplication
      t[j] = out[j * m + k];
    else
      lane_mul(t[j], out[j * m + k], fft_tw(lt, k * (r - 1) + (j - 1), forward));
  }
  if (r == 2) {
    CxL& o0 = out[k];
    CxL& o1 = out[k + m];
    for (int l = 0; l < kLanes; ++l) {
      o0.re[l] = t[0].re[l] + t[1].re[l];
      o0.im[l] = t[0].im[l] + t[1].im[l];
      o1.re[l] = t[0].re[l] - t[1].re[l];
      o1.im[l] = t[0].im[l] - t[1].im[l];
    }
  } else if (r == 4) {
    CxL& o0 = out[k];
    CxL& o1 = out[k + m];
    CxL& o2 = out[k + 2 * m];
    CxL& o3 = out[k + 3 * m];
    for (int l = 0; l < kLanes; ++l) {
      const double a0r = t[0].re[l] + t[2].re[l], a0i = t[0].im[l] + t[2].im[l];
      const double a1r = t[0].re[l] - t[2].re[l], a1i = t[0].im[l] - t[2].im[l];
      const double a2r = t[1].re[l] + t[3].re[l], a2i = t[1].im[l] + t[3].im[l];
      const double a3r = t[1].re[l] - t[3].re[l], a3i = t[1].im[l] - t[3].im[l];
      const double mr = a1r + a3i, mi = a1i - a3r;  // a1 - i a3
      const double pr = a1r - a3i, pi = a1i + a3r;  // a1 + i a3
      o0.re[l] = a0r + a2r;
      o0.im[l] = a0i + a2i;
      o2.re[l] = a0r - a2r;
      o2.im[l] = a0i - a2i;
      o1.re[l] = forward ? mr : pr;
      o1.im[l] = forward ? mi : pi;
      o3.re[l] = forward ? pr : mr;
      o3.im[l] = forward ? pi : mi;
    }
  } else {
    const int64_t wstep = tstep * m;
    for (int q = 0; q < r; ++q) {
      CxL acc = t[0];
      for (int j = 1; j < r; ++j) {
        const int e = (q * j) % r;
        CxL v;
        if (e == 0)
          v = t[j];
        else
          lane_mul(v, t[j], fft_tw(tw, e * wstep, forward));
        for (int l = 0; l < kLanes; ++l) {
          acc.re[l] = acc.re[l] + v.re[l];
          acc.im[l] = acc.im[l] + v.im[l];
        }
      }
      out[k + q * m] = acc;
    }
  }
}

// One radix-4 level of fft_recursive, lane by lane, for k = 0 .. m-1 (lane_butterfly's r = 4 case
// written out: k = 0 without multiplications, then the loop; conj(W) = (W.re, -W.im) exactly).
REPMODE_INLINE void lane_radix4_level(CxL* out, int64_t m, const Cx* lt, bool forward) {
  const double sg = forward ? 1.0 : -1.0;
  for (int64_t k = 0; k < m; ++k) {
    CxL* p0 = out + k;
    CxL* p1 = out + m + k;
    CxL* p2 = out + 2 * m + k;
    CxL* p3 = out + 3 * m + k;
    double t1r[kLanes], t1i[kLanes], t2r[kLanes], t2i[kLanes], t3r[kLanes], t3i[kLanes];
    if (k == 0) {
      for (int l = 0; l < kLanes; ++l) {
        t1r[l] = p1->re[l];
        t1i[l] = p1->im[l];
        t2r[l] = p2->re[l];
        t2i[l] = p2->im[l];
        t3r[l] = p3->re[l];
        t3i[l] = p3->im[l];
      }
    } else {
      const Cx w1 = lt[3 * k], w2 = lt[3 * k + 1], w3 = lt[3 * k + 2];
      const double w1r = w1.re, w1i = sg * w1.im, w2r = w2.re, w2i = sg * w2.im, w3r = w3.re, w3i = sg * w3.im;
      for (int l = 0; l < kLanes; ++l) {
        t1r[l] = p1->re[l] * w1r - p1->im[l] * w1i;
        t1i[l] = p1->re[l] * w1i + p1->im[l] * w1r;
        t2r[l] = p2->re[l] * w2r - p2->im[l] * w2i;
        t2i[l] = p2->re[l] * w2i + p2->im[l] * w2r;
        t3r[l] = p3->re[l] * w3r - p3->im[l] * w3i;
        t3i[l] = p3->re[l] * w3i + p3->im[l] * w3r;
      }
    }
    for (int l = 0; l < kLanes; ++l) {
      const double a0r = p0->re[l] + t2r[l], a0i = p0->im[l] + t2i[l];
      const double a1r = p0->re[l] - t2r[l], a1i = p0->im[l] - t2i[l];
      const double a2r = t1r[l] + t3r[l], a2i = t1i[l] + t3i[l];
      const double a3r = t1r[l] - t3r[l], a3i = t1i[l] - t3i[l];
      const double mr = a1r + a3i, mi = a1i - a3r;  // a1 - i a3
      const double pr = a1r - a3i, pi = a1i + a3r;  // a1 + i a3
      p0->re[l] = a0r + a2r;
      p0->im[l] = a0i + a2i;
      p2->re[l] = a0r - a2r;
      p2->im[l] = a0i - a2i;
      p1->re[l] = forward ? mr : pr;
      p1->im[l] = forward ? mi : pi;
      p3->re[l] = forward ? pr : mr;
      p3->im[l] = forward ? pi : mi;
    }
  }
}

// fft_recursive, lane by lane; lv: the level tables from this depth on (Levels).
void lane_recursive(const CxL* in, int64_t is, CxL* out, int64_t n, const Cx* tw, int64_t tstep, const Cx* const* lv,
                    bool forward) {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  const int r = fft_radix(n);
  const int64_t m = n / r;
  if (m == 1) {
    for (int j = 0; j < r; ++j) out[j] = in[j * is];
  } else {
    for (int j = 0; j < r; ++j) lane_recursive(in + j * is, is * r, out + j * m, m, tw, tstep * r, lv + 1, forward);
  }
  if (r == 4)
    lane_radix4_level(out, m, lv[0], forward);
  else
    for (int64_t k = 0; k < m; ++k) lane_butterfly(out, k, m, r, tw, tstep, lv[0], forward);
}

// fft_bluestein, lane by lane.
void lane_bluestein(const CxL* x, int64_t n, CxL* out, int64_t M, const Cx* chirp, const Cx* bhat, const Cx* twM,
                    const Cx* const* lv, CxL* work) {
  CxL* a = work;
  CxL* A = work + M;
  for (int64_t j = 0; j < n; ++j) lane_mul(a[j], x[j], chirp[j]);
  for (int64_t j = n; j < M; ++j)
    for (int l = 0; l < kLanes; ++l) a[j].re[l] = a[j].im[l] = 0.0;
  lane_recursive(a, 1, A, M, twM, 1, lv, true);
  for (int64_t i = 0; i < M; ++i) lane_mul(A[i], A[i], bhat[i]);
  lane_recursive(A, 1, a, M, twM, 1, lv, false);
  for (int64_t k = 0; k < n; ++k) lane_mul(out[k], a[k], chirp[k]);
}

void lane_transform(const Plan& p, const CxL* x, CxL* y, CxL* work) {
  if (p.smooth)
    lane_recursive(x, 1, y, p.n, p.tw->data(), 1, p.lv->ptrs.data(), p.forward);
  else
    lane_bluestein(x, p.n, y, p.M, p.chirp->data(), p.filter->data(), p.tw->data(), p.lv->ptrs.data(), work);
}

// One sequence of length n (smooth, n % 4 == 0) split into its 4 decimated subsequences x[j::4], which
// run as the 4 lanes of lane_recursive (they are fft_recursive's 4 recursive calls), then
// fft_recursive's top-level radix-4 butterflies: the scalar sequence of fft_recursive, vectorized
// within one line. xl, yl: n / 4 entries each.
inline void split_recursive(const Cx* in, Cx* out, int64_t n, const Cx* tw, const Cx* const* lv, bool forward,
                            CxL* xl, CxL* yl) {
  const int64_t m = n / 4;
  for (int64_t i = 0; i < m; ++i)
    for (int l = 0; l < kLanes; ++l) {
      xl[i].re[l] = in[4 * i + l].re;
      xl[i].im[l] = in[4 * i + l].im;
    }
  lane_recursive(xl, 1, yl, m, tw, 4, lv + 1, forward);
  for (int l = 0; l < kLanes; ++l)
    for (int64_t i = 0; i < m; ++i) out[l * m + i] = Cx{yl[i].re[l], yl[i].im[l]};
  for (int64_t k = 0; k < m; ++k) fft_butterfly(out, k, m, 4, tw, 1, forward);
}

// fft_recursive of a contiguous sequence, split into lanes when it is long enough.
inline void line_recursive(const Cx* in, Cx* out, int64_t n, const Cx* tw, const Cx* const* lv, bool forward,
                           CxL* xl, CxL* yl) {
  if (n >= kSplitMin && n % 4 == 0)
    split_recursive(in, out, n, tw, lv, forward, xl, yl);
  else
    fft_recursive(in, 1, out, n, tw, 1, forward);
}

// transform() of one line: fft_recursive / fft_bluestein step by step, the long power-of-two or
// smooth transforms through line_recursive. work: 2 M entries; xl, yl: max(n, M) / 4 entries.
inline void line_transform(const Plan& p, const Cx* x, Cx* y, Cx* work, CxL* xl, CxL* yl) {
  if (p.smooth) {
    line_recursive(x, y, p.n, p.tw->data(), p.lv->ptrs.data(), p.forward, xl, yl);
    return;
  }
  const int64_t n = p.n, M = p.M;
  const Cx* chirp = p.chirp->data();
  const Cx* bhat = p.filter->data();
  Cx* a = work;
  Cx* A = work + M;
  for (int64_t j = 0; j < n; ++j) a[j] = cx_mul(x[j], chirp[j]);
  for (int64_t j = n; j < M; ++j) a[j] = Cx{0.0, 0.0};
  line_recursive(a, A, M, p.tw->data(), p.lv->ptrs.data(), true, xl, yl);
  for (int64_t i = 0; i < M; ++i) A[i] = cx_mul(A[i], bhat[i]);
  line_recursive(A, a, M, p.tw->data(), p.lv->ptrs.data(), false, xl, yl);
  for (int64_t k = 0; k < n; ++k) y[k] = cx_mul(a[k], chirp[k]);
}
// clang-format on
