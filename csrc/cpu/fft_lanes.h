// The lane walk of csrc/cpu/fft.cpp, included three times there (portable, AVX2 and AVX-512
// intrinsics): kLanes sequences transformed together, each lane running the scalar sequence of
// fft_recursive / fft_bluestein (csrc/common/fft.h) on its own data, with the same twiddle for every
// lane. Only + - * on doubles, lane by lane (V: kLanes doubles; vadd, vsub, vmul are the IEEE
// operations of each lane, -ffp-contract=off), so the vectorized loops give the scalar bits.
// The includer defines C (kLanes complex numbers) with cld, cst, cadd, csub, cmulw (times a broadcast
// twiddle: cx_mul lane by lane), cmi (a1 - i a3), cpi (a1 + i a3), czero; and, for the AVX2 and
// AVX-512 copies, V = one 256-bit vector (vld, vst, vadd, vsub, vmul, vset) and REPMODE_FFT_AVX2
// (the top level of long lines and the load/store transposes, written with shuffles).
// No include guard and no includes: fft.cpp includes it inside a namespace after fft.h, Plan and CxL.
// clang-format off

#if !defined(REPMODE_FFT_AVX512)
// C as a pair of V (the real parts of the kLanes numbers, then the imaginary parts).
struct C {
  V r, i;
};
REPMODE_INLINE C cld(const CxL& a) { return C{vld(a.re), vld(a.im)}; }
REPMODE_INLINE void cst(CxL& a, C v) {
  vst(a.re, v.r);
  vst(a.im, v.i);
}
REPMODE_INLINE C cadd(C a, C b) { return C{vadd(a.r, b.r), vadd(a.i, b.i)}; }
REPMODE_INLINE C csub(C a, C b) { return C{vsub(a.r, b.r), vsub(a.i, b.i)}; }
REPMODE_INLINE C cmulw(C a, double wr, double wi) {
  const V r = vset(wr), i = vset(wi);
  return C{vsub(vmul(a.r, r), vmul(a.i, i)), vadd(vmul(a.r, i), vmul(a.i, r))};
}
REPMODE_INLINE C cmi(C a1, C a3) { return C{vadd(a1.r, a3.i), vsub(a1.i, a3.r)}; }  // a1 - i a3
REPMODE_INLINE C cpi(C a1, C a3) { return C{vsub(a1.r, a3.i), vadd(a1.i, a3.r)}; }  // a1 + i a3
REPMODE_INLINE C czero() { return C{vset(0.0), vset(0.0)}; }
#endif

// o = a * w (cx_mul lane by lane): (a.re w.re - a.im w.im, a.re w.im + a.im w.re).
REPMODE_INLINE void lane_mul(CxL& o, const CxL& a, Cx w) { cst(o, cmulw(cld(a), w.re, w.im)); }

// fft_butterfly, lane by lane, for r = 2, 3, 5, 7 (r = 4: lane_radix4_level). lt: this level's twiddles
// W^{jk} (lt[k (r-1) + j-1] = tw[j k tstep], the same values laid out in the order they are used).
REPMODE_INLINE void lane_butterfly(CxL* out, int64_t k, int64_t m, int r, const Cx* tw, int64_t tstep, const Cx* lt,
                                   bool forward) {
  C t[7];
  t[0] = cld(out[k]);
  for (int j = 1; j < r; ++j) {
    if (k == 0) {  // j k == 0: no multiplication
      t[j] = cld(out[j * m + k]);
    } else {
      const Cx w = fft_tw(lt, k * (r - 1) + (j - 1), forward);
      t[j] = cmulw(cld(out[j * m + k]), w.re, w.im);
    }
  }
  if (r == 2) {
    cst(out[k], cadd(t[0], t[1]));
    cst(out[k + m], csub(t[0], t[1]));
    return;
  }
  const int64_t wstep = tstep * m;
  for (int q = 0; q < r; ++q) {
    C acc = t[0];
    for (int j = 1; j < r; ++j) {
      const int e = (q * j) % r;
      if (e == 0) {
        acc = cadd(acc, t[j]);
      } else {
        const Cx w = fft_tw(tw, e * wstep, forward);
        acc = cadd(acc, cmulw(t[j], w.re, w.im));
      }
    }
    cst(out[k + q * m], acc);
  }
}

#if defined(REPMODE_FFT_AVX2)
// The radix-4 butterfly on t0..t3 (fft_butterfly's r = 4 case) as values: x[0] = a0 + a2,
// x[1] = a1 - i a3, x[2] = a0 - a2, x[3] = a1 + i a3.
REPMODE_INLINE void r4_values(V t0r, V t0i, V t1r, V t1i, V t2r, V t2i, V t3r, V t3i, V* xr, V* xi) {
  const V a0r = vadd(t0r, t2r), a0i = vadd(t0i, t2i);
  const V a1r = vsub(t0r, t2r), a1i = vsub(t0i, t2i);
  const V a2r = vadd(t1r, t3r), a2i = vadd(t1i, t3i);
  const V a3r = vsub(t1r, t3r), a3i = vsub(t1i, t3i);
  xr[0] = vadd(a0r, a2r);
  xi[0] = vadd(a0i, a2i);
  xr[2] = vsub(a0r, a2r);
  xi[2] = vsub(a0i, a2i);
  xr[1] = vadd(a1r, a3i);
  xi[1] = vsub(a1i, a3r);
  xr[3] = vsub(a1r, a3i);
  xi[3] = vadd(a1i, a3r);
}

// out[j][i] = a_i[j]: the 4 x 4 transpose (data movement).
REPMODE_INLINE void transpose4(V a0, V a1, V a2, V a3, V* out) {
  const V t0 = _mm256_unpacklo_pd(a0, a1), t1 = _mm256_unpackhi_pd(a0, a1);
  const V t2 = _mm256_unpacklo_pd(a2, a3), t3 = _mm256_unpackhi_pd(a2, a3);
  out[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  out[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  out[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  out[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
#endif

// The radix-4 butterfly on t0..t3 (fft_butterfly's r = 4 case), written to o0..o3 (o1 and o3 swapped
// by the caller for the inverse: X_{k+m} = a1 - i a3 forward, a1 + i a3 inverse).
REPMODE_INLINE void lane_r4(C t0, C t1, C t2, C t3, CxL* o0, CxL* o1, CxL* o2, CxL* o3) {
  const C a0 = cadd(t0, t2), a1 = csub(t0, t2), a2 = cadd(t1, t3), a3 = csub(t1, t3);
  cst(*o0, cadd(a0, a2));
  cst(*o2, csub(a0, a2));
  cst(*o1, cmi(a1, a3));
  cst(*o3, cpi(a1, a3));
}

// Butterflies k = kb .. ke-1 of one radix-4 level of fft_recursive, lane by lane (k = 0 without
// multiplications; conj(W) = (W.re, -W.im) exactly).
REPMODE_INLINE void lane_radix4_level(CxL* out, int64_t kb, int64_t ke, int64_t m, const Cx* lt, bool forward) {
  const double sg = forward ? 1.0 : -1.0;
  const int s1 = forward ? 1 : 3, s3 = forward ? 3 : 1;
  for (int64_t k = kb; k < ke; ++k) {
    C t1 = cld(out[m + k]), t2 = cld(out[2 * m + k]), t3 = cld(out[3 * m + k]);
    if (k != 0) {
      const Cx* w = lt + 3 * k;
      t1 = cmulw(t1, w[0].re, sg * w[0].im);
      t2 = cmulw(t2, w[1].re, sg * w[1].im);
      t3 = cmulw(t3, w[2].re, sg * w[2].im);
    }
    lane_r4(cld(out[k]), t1, t2, t3, out + k, out + s1 * m + k, out + 2 * m + k, out + s3 * m + k);
  }
}

// A length-16 transform of fft_recursive, lane by lane, in registers: its 4 length-4 transforms
// (inputs in[(j + 4 i) is], results y[j][.] = what they write to out[4 j + .]), then its radix-4 level
// (twiddles lt[3 k + j - 1], none at k = 0), written to out once. The same butterflies as
// lane_recursive's two passes, without the round trip through out between them.
REPMODE_INLINE void lane_sixteen(const CxL* in, int64_t is, CxL* out, const Cx* lt, bool forward) {
  const int s1 = forward ? 1 : 3, s3 = forward ? 3 : 1;
  C y[4][4];
  for (int j = 0; j < 4; ++j) {
    const C t0 = cld(in[j * is]), t1 = cld(in[(j + 4) * is]), t2 = cld(in[(j + 8) * is]), t3 = cld(in[(j + 12) * is]);
    const C a0 = cadd(t0, t2), a1 = csub(t0, t2), a2 = cadd(t1, t3), a3 = csub(t1, t3);
    y[j][0] = cadd(a0, a2);
    y[j][2] = csub(a0, a2);
    y[j][s1] = cmi(a1, a3);
    y[j][s3] = cpi(a1, a3);
  }
  const double sg = forward ? 1.0 : -1.0;
  for (int k = 0; k < 4; ++k) {
    C t1 = y[1][k], t2 = y[2][k], t3 = y[3][k];
    if (k != 0) {
      const Cx* w = lt + 3 * k;
      t1 = cmulw(t1, w[0].re, sg * w[0].im);
      t2 = cmulw(t2, w[1].re, sg * w[1].im);
      t3 = cmulw(t3, w[2].re, sg * w[2].im);
    }
    lane_r4(y[0][k], t1, t2, t3, out + k, out + 4 * s1 + k, out + 8 + k, out + 4 * s3 + k);
  }
}

// A length-8 transform of fft_recursive (radix 4 over 4 length-2 transforms), lane by lane, in
// registers like lane_sixteen: the length-2 transforms of in[j is], in[(j + 4) is], then the radix-4
// level (k = 0 without twiddles, k = 1 with lt[3 + j - 1] for j = 1, 2, 3).
REPMODE_INLINE void lane_eight(const CxL* in, int64_t is, CxL* out, const Cx* lt, bool forward) {
  const int s1 = forward ? 1 : 3, s3 = forward ? 3 : 1;
  C y[4][2];
  for (int j = 0; j < 4; ++j) {
    const C t0 = cld(in[j * is]), t1 = cld(in[(j + 4) * is]);
    y[j][0] = cadd(t0, t1);
    y[j][1] = csub(t0, t1);
  }
  lane_r4(y[0][0], y[1][0], y[2][0], y[3][0], out, out + 2 * s1, out + 4, out + 2 * s3);
  const double sg = forward ? 1.0 : -1.0;
  const Cx* w = lt + 3;
  lane_r4(y[0][1], cmulw(y[1][1], w[0].re, sg * w[0].im), cmulw(y[2][1], w[1].re, sg * w[1].im),
          cmulw(y[3][1], w[2].re, sg * w[2].im), out + 1, out + 2 * s1 + 1, out + 5, out + 2 * s3 + 1);
}

// fft_recursive, lane by lane; lv: the level tables from this depth on (Levels). A length-4
// transform (m = 1) reads its inputs directly (the copy and the butterfly in one step); length-8
// and length-16 ones run in registers (lane_eight, lane_sixteen).
void lane_recursive(const CxL* in, int64_t is, CxL* out, int64_t n, const Cx* tw, int64_t tstep, const Cx* const* lv,
                    bool forward) {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  if (n == 16) {
    lane_sixteen(in, is, out, lv[0], forward);
    return;
  }
  if (n == 8) {
    lane_eight(in, is, out, lv[0], forward);
    return;
  }
  const int r = fft_radix(n);
  const int64_t m = n / r;
  if (m == 1) {
    if (r == 4) {
      lane_r4(cld(in[0]), cld(in[is]), cld(in[2 * is]), cld(in[3 * is]), out, out + (forward ? 1 : 3), out + 2,
              out + (forward ? 3 : 1));
      return;
    }
    for (int j = 0; j < r; ++j) out[j] = in[j * is];
  } else {
    for (int j = 0; j < r; ++j) lane_recursive(in + j * is, is * r, out + j * m, m, tw, tstep * r, lv + 1, forward);
  }
  if (r == 4)
    lane_radix4_level(out, 0, m, m, lv[0], forward);
  else
    for (int64_t k = 0; k < m; ++k) lane_butterfly(out, k, m, r, tw, tstep, lv[0], forward);
}

// fft_bluestein, lane by lane.
void lane_bluestein(const CxL* x, int64_t n, CxL* out, int64_t M, const Cx* chirp, const Cx* bhat, const Cx* twM,
                    const Cx* const* lv, CxL* work) {
  CxL* a = work;
  CxL* A = work + M;
  for (int64_t j = 0; j < n; ++j) lane_mul(a[j], x[j], chirp[j]);
  for (int64_t j = n; j < M; ++j) cst(a[j], czero());
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

// top_radix4, one butterfly at a time.
REPMODE_INLINE void top_radix4_scalar(const CxL* z, Cx* out, int64_t kb, int64_t ke, int64_t m, const Cx* lt,
                                      bool forward) {
  for (int64_t k = kb; k < ke; ++k) {
    Cx t[4];
    t[0] = Cx{z[k].re[0], z[k].im[0]};
    for (int j = 1; j < 4; ++j) {
      const Cx v = Cx{z[k].re[j], z[k].im[j]};
      t[j] = k == 0 ? v : cx_mul(v, fft_tw(lt, 3 * k + (j - 1), forward));
    }
    const Cx a0 = cx_add(t[0], t[2]), a1 = cx_sub(t[0], t[2]);
    const Cx a2 = cx_add(t[1], t[3]), a3 = cx_sub(t[1], t[3]);
    const Cx minus_i = {a1.re + a3.im, a1.im - a3.re};  // a1 - i a3
    const Cx plus_i = {a1.re - a3.im, a1.im + a3.re};   // a1 + i a3
    out[k] = cx_add(a0, a2);
    out[k + 2 * m] = cx_sub(a0, a2);
    out[k + m] = forward ? minus_i : plus_i;
    out[k + 3 * m] = forward ? plus_i : minus_i;
  }
}

// fft_recursive's top-level radix-4 butterflies k = kb .. ke-1 of a length n = 4 m, reading the 4
// recursive results Y_j[k] from lane j of z[k] (k < m) and writing out[k + q m].
REPMODE_INLINE void top_radix4(const CxL* z, Cx* out, int64_t kb, int64_t ke, int64_t m, const Cx* lt, bool forward) {
  int64_t k = kb;
#if defined(REPMODE_FFT_AVX2)
  // blocks of 4 butterflies k .. k+3 (k >= 1): lane j of z[k .. k+3] transposed into one vector of
  // Y_j[k .. k+3], the twiddles gathered per k, the results interleaved back into out
  if (k == 0) {
    top_radix4_scalar(z, out, 0, ke < 4 ? ke : 4, m, lt, forward);
    k = ke < 4 ? ke : 4;
  }
  const V sg = vset(forward ? 1.0 : -1.0);
  const int s1 = forward ? 1 : 3, s3 = forward ? 3 : 1;
  for (; k + 4 <= ke; k += 4) {
    V yr[4], yi[4];
    transpose4(vld(z[k].re), vld(z[k + 1].re), vld(z[k + 2].re), vld(z[k + 3].re), yr);
    transpose4(vld(z[k].im), vld(z[k + 1].im), vld(z[k + 2].im), vld(z[k + 3].im), yi);
    for (int j = 1; j < 4; ++j) {
      const Cx* w = lt + 3 * k + (j - 1);
      const V wr = _mm256_set_pd(w[9].re, w[6].re, w[3].re, w[0].re);
      const V wi = vmul(sg, _mm256_set_pd(w[9].im, w[6].im, w[3].im, w[0].im));  // conj: exact
      const V ur = vsub(vmul(yr[j], wr), vmul(yi[j], wi)), ui = vadd(vmul(yr[j], wi), vmul(yi[j], wr));
      yr[j] = ur;
      yi[j] = ui;
    }
    V xr[4], xi[4];
    r4_values(yr[0], yi[0], yr[1], yi[1], yr[2], yi[2], yr[3], yi[3], xr, xi);
    const int at[4] = {0, s1, 2, s3};  // X_{k+m} = a1 - i a3 forward, a1 + i a3 inverse
    for (int q = 0; q < 4; ++q) {
      const V lo = _mm256_unpacklo_pd(xr[q], xi[q]), hi = _mm256_unpackhi_pd(xr[q], xi[q]);
      double* o = &out[k + at[q] * m].re;
      _mm256_storeu_pd(o, _mm256_permute2f128_pd(lo, hi, 0x20));
      _mm256_storeu_pd(o + 4, _mm256_permute2f128_pd(lo, hi, 0x31));
    }
  }
#endif
  top_radix4_scalar(z, out, k, ke, m, lt, forward);
}

// One long sequence (n % 16 == 0) as fft_recursive's two top levels (both radix 4) around 16
// independent transforms of length n / 16: group i (i < 4) holds in lane j the subsequence
// x[j + 4i :: 16] (the i-th recursive call of the j-th recursive call); the groups run
// lane_recursive; then the level of length n / 4 runs lane by lane (lane j = the j-th call) over
// z = the groups' results one after another, and the top level reads lane j of z as Y_j. Every
// butterfly and twiddle of fft_recursive, in an order that changes no result. The phases below are
// separate so that threads can share each one (split16_line in fft.cpp); g, z: n / 4 entries.

// g[i m2 + t] lane l = in[16 t + 4 i + l] for t = tb .. te-1 (m2 = n / 16).
void split16_gather(const Cx* in, CxL* g, int64_t m2, int64_t tb, int64_t te) {
  for (int64_t t = tb; t < te; ++t)
    for (int i = 0; i < 4; ++i) {
      const Cx* src = in + 16 * t + 4 * i;
      CxL& d = g[i * m2 + t];
      for (int l = 0; l < kLanes; ++l) {
        d.re[l] = src[l].re;
        d.im[l] = src[l].im;
      }
    }
}
// Groups ib .. ie-1: the transforms of length m2 = n / 16.
void split16_groups(const CxL* g, CxL* z, int64_t n, const Cx* tw, const Cx* const* lv, bool forward, int64_t ib,
                    int64_t ie) {
  const int64_t m2 = n / 16;
  for (int64_t i = ib; i < ie; ++i) lane_recursive(g + i * m2, 1, z + i * m2, m2, tw, 16, lv + 2, forward);
}
// Butterflies kb .. ke-1 of the level of length n / 4 (k < n / 16).
void split16_middle(CxL* z, int64_t n, const Cx* const* lv, bool forward, int64_t kb, int64_t ke) {
  lane_radix4_level(z, kb, ke, n / 16, lv[1], forward);
}
// Butterflies kb .. ke-1 of the top level (k < n / 4), into out[k + q n / 4].
void split16_top(const CxL* z, Cx* out, int64_t n, const Cx* const* lv, bool forward, int64_t kb, int64_t ke) {
  top_radix4(z, out, kb, ke, n / 4, lv[0], forward);
}

inline void split16_recursive(const Cx* in, Cx* out, int64_t n, const Cx* tw, const Cx* const* lv, bool forward,
                              CxL* g, CxL* z, int nthreads) {
  const int64_t m1 = n / 4, m2 = n / 16;
  parallel_for(m2, nthreads, 64, [&](int64_t b, int64_t e) { split16_gather(in, g, m2, b, e); });
  parallel_for(4, nthreads, m1 * 64, [&](int64_t b, int64_t e) { split16_groups(g, z, n, tw, lv, forward, b, e); });
  parallel_for(m2, nthreads, 64, [&](int64_t b, int64_t e) { split16_middle(z, n, lv, forward, b, e); });
  parallel_for(m1, nthreads, 64, [&](int64_t b, int64_t e) { split16_top(z, out, n, lv, forward, b, e); });
}

// fft_recursive of a contiguous sequence, split into lanes when it is long enough.
inline void line_recursive(const Cx* in, Cx* out, int64_t n, const Cx* tw, const Cx* const* lv, bool forward,
                           CxL* xl, CxL* yl, int nthreads) {
  if (n >= kSplit16Min && n % 16 == 0)
    split16_recursive(in, out, n, tw, lv, forward, xl, yl, nthreads);
  else if (n >= kSplitMin && n % 4 == 0)
    split_recursive(in, out, n, tw, lv, forward, xl, yl);
  else
    fft_recursive(in, 1, out, n, tw, 1, forward);
}

// transform() of one line: fft_recursive / fft_bluestein step by step, the long power-of-two or
// smooth transforms through line_recursive. work: 2 M entries; xl, yl: max(n, M) / 4 entries.
inline void line_transform(const Plan& p, const Cx* x, Cx* y, Cx* work, CxL* xl, CxL* yl, int nthreads) {
  if (p.smooth) {
    line_recursive(x, y, p.n, p.tw->data(), p.lv->ptrs.data(), p.forward, xl, yl, nthreads);
    return;
  }
  const int64_t n = p.n, M = p.M;
  const Cx* chirp = p.chirp->data();
  const Cx* bhat = p.filter->data();
  Cx* a = work;
  Cx* A = work + M;
  for (int64_t j = 0; j < n; ++j) a[j] = cx_mul(x[j], chirp[j]);
  for (int64_t j = n; j < M; ++j) a[j] = Cx{0.0, 0.0};
  line_recursive(a, A, M, p.tw->data(), p.lv->ptrs.data(), true, xl, yl, nthreads);
  for (int64_t i = 0; i < M; ++i) A[i] = cx_mul(A[i], bhat[i]);
  line_recursive(A, a, M, p.tw->data(), p.lv->ptrs.data(), false, xl, yl, nthreads);
  for (int64_t k = 0; k < n; ++k) y[k] = cx_mul(a[k], chirp[k]);
}

// ---- Loading kLanes lines into lanes and storing them back (data movement, the one rounding to the
// output dtype and the canonical NaN): the layouts a batch of contiguous lines takes, with 4 x 4
// transposes (AVX2 copy only). false: not such a layout (fft.cpp's load_lanes / store_lanes do it).
#if defined(REPMODE_FFT_AVX2)
REPMODE_INLINE __m256d load_four(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
REPMODE_INLINE __m256d load_four(const double* p) { return _mm256_loadu_pd(p); }
// v rounded to float / kept double, NaNs replaced by the canonical NaN, stored to p[0..4).
REPMODE_INLINE void store_four(float* p, __m256d v) {
  const __m128 f = _mm256_cvtpd_ps(v);
  const __m128 nan = _mm_castsi128_ps(_mm_set1_epi32(int(kCanonicalNanBits32)));
  _mm_storeu_ps(p, _mm_blendv_ps(f, nan, _mm_cmpunord_ps(f, f)));
}
REPMODE_INLINE void store_four(double* p, __m256d v) {
  const __m256d nan = _mm256_castsi256_pd(_mm256_set1_epi64x(int64_t(kCanonicalNanBits64)));
  _mm256_storeu_pd(p, _mm256_blendv_pd(v, nan, _mm256_cmp_pd(v, v, _CMP_UNORD_Q)));
}

// p[0..4) divided by d (one IEEE division each) when scale.
REPMODE_INLINE __m256d scaled(bool scale, __m256d d, const double* p) {
  return scale ? _mm256_div_pd(vld(p), d) : vld(p);
}

// Lines line0 .. line0 + 3 as lanes: lines with unit step along the transform (4 x 4 transposes), or
// four adjacent lines (inner index step 1) read as one vector per k.
template <typename S>
bool load_lanes_fast(int mode, const S* src, const Ints& ss, int64_t inner, int64_t line0, int64_t n, CxL* xl) {
  if (mode == 2) return false;  // c2r: the Hermitian extension, in load_lanes
  int64_t base[kLanes];
  for (int l = 0; l < kLanes; ++l) base[l] = (line0 + l) / inner * ss[0] + (line0 + l) % inner * ss[2];
  const bool c2c = mode == 0;
  if (ss[1] == 1) {
    int64_t k = 0;
    if (c2c) {
      for (; k + 2 <= n; k += 2) {
        const __m256d a0 = load_four(src + 2 * (base[0] + k)), a1 = load_four(src + 2 * (base[1] + k));
        const __m256d a2 = load_four(src + 2 * (base[2] + k)), a3 = load_four(src + 2 * (base[3] + k));
        const __m256d lo01 = _mm256_unpacklo_pd(a0, a1), hi01 = _mm256_unpackhi_pd(a0, a1);
        const __m256d lo23 = _mm256_unpacklo_pd(a2, a3), hi23 = _mm256_unpackhi_pd(a2, a3);
        vst(xl[k].re, _mm256_permute2f128_pd(lo01, lo23, 0x20));
        vst(xl[k + 1].re, _mm256_permute2f128_pd(lo01, lo23, 0x31));
        vst(xl[k].im, _mm256_permute2f128_pd(hi01, hi23, 0x20));
        vst(xl[k + 1].im, _mm256_permute2f128_pd(hi01, hi23, 0x31));
      }
    } else {
      for (; k + 4 <= n; k += 4) {
        const __m256d a0 = load_four(src + base[0] + k), a1 = load_four(src + base[1] + k);
        const __m256d a2 = load_four(src + base[2] + k), a3 = load_four(src + base[3] + k);
        const __m256d t0 = _mm256_unpacklo_pd(a0, a1), t1 = _mm256_unpackhi_pd(a0, a1);
        const __m256d t2 = _mm256_unpacklo_pd(a2, a3), t3 = _mm256_unpackhi_pd(a2, a3);
        vst(xl[k].re, _mm256_permute2f128_pd(t0, t2, 0x20));
        vst(xl[k + 1].re, _mm256_permute2f128_pd(t1, t3, 0x20));
        vst(xl[k + 2].re, _mm256_permute2f128_pd(t0, t2, 0x31));
        vst(xl[k + 3].re, _mm256_permute2f128_pd(t1, t3, 0x31));
        for (int j = 0; j < 4; ++j) vst(xl[k + j].im, vset(0.0));
      }
    }
    for (; k < n; ++k)
      for (int l = 0; l < kLanes; ++l) {
        xl[k].re[l] = double(src[c2c ? 2 * (base[l] + k) : base[l] + k]);
        xl[k].im[l] = c2c ? double(src[2 * (base[l] + k) + 1]) : 0.0;
      }
    return true;
  }
  if (ss[2] == 1 && line0 % inner + kLanes <= inner) {
    for (int64_t k = 0; k < n; ++k) {
      const int64_t off = base[0] + k * ss[1];
      if (c2c) {
        const __m256d v0 = load_four(src + 2 * off), v1 = load_four(src + 2 * off + 4);  // r0 i0 r1 i1, r2 i2 r3 i3
        vst(xl[k].re, _mm256_permute4x64_pd(_mm256_unpacklo_pd(v0, v1), 0xD8));
        vst(xl[k].im, _mm256_permute4x64_pd(_mm256_unpackhi_pd(v0, v1), 0xD8));
      } else {
        vst(xl[k].re, load_four(src + off));
        vst(xl[k].im, vset(0.0));
      }
    }
    return true;
  }
  return false;
}

// store_lanes for c2c and r2c results: lines with unit step along the transform (inner == 1) or four
// adjacent lines; each component divided by divisor (when != 1), rounded once, NaN made canonical.
template <typename D>
bool store_lanes_fast(int mode, CxL* yl, int64_t n, int64_t n_dst, double divisor, D* dst, int64_t inner,
                      int64_t line0) {
  if (mode == 2) return false;
  const bool adjacent = line0 % inner + kLanes <= inner;
  if (inner != 1 && !adjacent) return false;
  if (mode == 1) {  // the exact values of a real signal's X_0 and X_{n/2}: real
    vst(yl[0].im, vset(0.0));
    if (n % 2 == 0) vst(yl[n / 2].im, vset(0.0));
  }
  const bool scale = divisor != 1.0;
  const V dv = vset(divisor);
  if (inner == 1) {
    D* out[kLanes];
    for (int l = 0; l < kLanes; ++l) out[l] = dst + 2 * (line0 + l) * n_dst;
    int64_t k = 0;
    for (; k + 2 <= n_dst; k += 2) {
      const __m256d r0 = scaled(scale, dv, yl[k].re), i0 = scaled(scale, dv, yl[k].im), r1 = scaled(scale, dv, yl[k + 1].re), i1 = scaled(scale, dv, yl[k + 1].im);
      const __m256d lo0 = _mm256_unpacklo_pd(r0, i0), hi0 = _mm256_unpackhi_pd(r0, i0);  // lanes 0, 2 / 1, 3
      const __m256d lo1 = _mm256_unpacklo_pd(r1, i1), hi1 = _mm256_unpackhi_pd(r1, i1);
      store_four(out[0] + 2 * k, _mm256_permute2f128_pd(lo0, lo1, 0x20));
      store_four(out[1] + 2 * k, _mm256_permute2f128_pd(hi0, hi1, 0x20));
      store_four(out[2] + 2 * k, _mm256_permute2f128_pd(lo0, lo1, 0x31));
      store_four(out[3] + 2 * k, _mm256_permute2f128_pd(hi0, hi1, 0x31));
    }
    for (; k < n_dst; ++k)
      for (int l = 0; l < kLanes; ++l) {
        const double re = scale ? yl[k].re[l] / divisor : yl[k].re[l];
        const double im = scale ? yl[k].im[l] / divisor : yl[k].im[l];
        out[l][2 * k] = canon(D(re));
        out[l][2 * k + 1] = canon(D(im));
      }
    return true;
  }
  D* out = dst + 2 * (line0 / inner * n_dst * inner + line0 % inner);
  for (int64_t k = 0; k < n_dst; ++k) {
    const __m256d re = scaled(scale, dv, yl[k].re), im = scaled(scale, dv, yl[k].im);
    const __m256d lo = _mm256_unpacklo_pd(re, im), hi = _mm256_unpackhi_pd(re, im);  // r0 i0 r2 i2, r1 i1 r3 i3
    store_four(out + 2 * k * inner, _mm256_permute2f128_pd(lo, hi, 0x20));
    store_four(out + 2 * k * inner + 4, _mm256_permute2f128_pd(lo, hi, 0x31));
  }
  return true;
}

// split16_line's gather for complex lines with unit step: g[q m2 + t] lane l = x[16 t + 4 q + l].
template <typename S>
void gather16_c2c(const S* x, CxL* g, int64_t m2, int64_t tb, int64_t te) {
  for (int64_t t = tb; t < te; ++t)
    for (int q = 0; q < 4; ++q) {
      const S* p = x + 2 * (16 * t + 4 * q);
      const __m256d v0 = load_four(p), v1 = load_four(p + 4);  // r0 i0 r1 i1, r2 i2 r3 i3
      vst(g[q * m2 + t].re, _mm256_permute4x64_pd(_mm256_unpacklo_pd(v0, v1), 0xD8));
      vst(g[q * m2 + t].im, _mm256_permute4x64_pd(_mm256_unpackhi_pd(v0, v1), 0xD8));
    }
}

// y[0 .. count) to the interleaved out: each part divided by divisor (when scale), rounded once,
// NaN made canonical.
template <typename D>
void store_cx(const Cx* y, D* out, int64_t count, bool scale, double divisor) {
  const V dv = vset(divisor);
  int64_t k = 0;
  for (; k + 2 <= count; k += 2) store_four(out + 2 * k, scaled(scale, dv, &y[k].re));
  for (; k < count; ++k) {
    out[2 * k] = canon(D(scale ? y[k].re / divisor : y[k].re));
    out[2 * k + 1] = canon(D(scale ? y[k].im / divisor : y[k].im));
  }
}
#else
template <typename S>
void gather16_c2c(const S* x, CxL* g, int64_t m2, int64_t tb, int64_t te) {
  for (int64_t t = tb; t < te; ++t)
    for (int q = 0; q < 4; ++q)
      for (int l = 0; l < kLanes; ++l) {
        g[q * m2 + t].re[l] = double(x[2 * (16 * t + 4 * q + l)]);
        g[q * m2 + t].im[l] = double(x[2 * (16 * t + 4 * q + l) + 1]);
      }
}
template <typename D>
void store_cx(const Cx* y, D* out, int64_t count, bool scale, double divisor) {
  for (int64_t k = 0; k < count; ++k) {
    out[2 * k] = canon(D(scale ? y[k].re / divisor : y[k].re));
    out[2 * k + 1] = canon(D(scale ? y[k].im / divisor : y[k].im));
  }
}
template <typename S>
bool load_lanes_fast(int, const S*, const Ints&, int64_t, int64_t, int64_t, CxL*) {
  return false;
}
template <typename D>
bool store_lanes_fast(int, CxL*, int64_t, int64_t, double, D*, int64_t, int64_t) {
  return false;
}
#endif
// clang-format on
