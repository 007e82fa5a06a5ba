// The canonical discrete Fourier transform (docs/semantics.md, "FFT"): its bits are a function of
// the length n and the direction only. Every value is a complex double (Cx); complex64 data is
// widened exactly on load and rounded once on store (csrc/cpu/fft.cpp), so float32 and float64
// transforms share this one sequence.
//
//   twiddle      W_N^k = exp(-2 pi i k / N): cos and sin of 2 pi k / N from repmode's double-double
//                sin (math_trig.h, sin_accurate, relative error < 2^-91.6) rounded to double once
//   cx_mul       (a + bi)(c + di) = (a*c - b*d) + (a*d + b*c) i, four rounded products, then one
//                rounded subtraction and one rounded addition (no fma)
//   radices      n = 1: identity. Otherwise, if every prime factor of n is 2, 3, 5 or 7, the radix r
//                of a length is 4 if 4 | n, else 2, 3, 5, 7 (the first that divides); the
//                transform is Cooley-Tukey decimation in time, recursively (fft_recursive). If n
//                has a prime factor above 7: Bluestein with the power-of-two length M >= 2n - 1
//                (fft_bluestein).
//   inverse      the same sequence with every twiddle conjugated (W -> conj W); unscaled
//
// Plain IEEE basic operations and one explicit repmode_fma (the exact remainder in fft_twiddle);
// compiled with -ffp-contract=off / --fmad=false like every csrc/common header.
#pragma once

#include <cstdint>

#include "math.h"
#include "math_trig.h"

namespace repmode {

struct Cx {
  double re, im;
};

REPMODE_HD Cx cx_add(Cx a, Cx b) { return {a.re + b.re, a.im + b.im}; }
REPMODE_HD Cx cx_sub(Cx a, Cx b) { return {a.re - b.re, a.im - b.im}; }
// The complex product: each of the four products rounded, then one rounded subtraction (real
// part) and one rounded addition (imaginary part).
REPMODE_HD Cx cx_mul(Cx a, Cx w) {
  double ac = a.re * w.re, bd = a.im * w.im, ad = a.re * w.im, bc = a.im * w.re;
  return {ac - bd, ad + bc};
}
REPMODE_HD Cx cx_conj(Cx a) { return {a.re, -a.im}; }

// W_N^k = exp(-2 pi i k / N) for 0 <= k < N, N < 2^56. In units of pi/32 the angle is
// y = 64 k / N = j + f with j the nearest integer (ties: j = floor) and f = (64 k - j N) / N,
// |f| <= 1/2; the numerator is an exact integer, f is carried as a double-double (hi = the
// rounded quotient, lo = the exact remainder fma(-hi, N, num) divided by N: relative error
// < 2^-104). cos = sin(pi/32 (j + 16 + f)) and sin = sin(pi/32 (j + f)) come from sin_accurate
// (relative error < 2^-91.6) and are rounded to double once (the hi word of the normalized
// double-double). So each component is the correctly rounded value unless the exact value lies
// within 2^-91.6 (relative) of a rounding boundary; the definition is this computation either way.
REPMODE_HD Cx fft_twiddle(int64_t k, int64_t N) {
  using math_detail::DD;
  const int64_t num = 64 * k;
  int64_t j = num / N;
  int64_t r = num - j * N;
  if (2 * r > N) {
    j += 1;
    r -= N;
  }
  const double rn = double(r), nn = double(N);
  const double hi = rn / nn;
  const double lo = repmode_fma(-hi, nn, rn) / nn;
  const DD f = {hi, lo};
  const int jj = int(j & 63);
  const DD s = math_detail::trig::sin_accurate(jj, f);
  const DD c = math_detail::trig::sin_accurate(jj + 16, f);
  return {c.hi, -s.hi};
}

// The radix taken from a length n > 1 whose prime factors are all <= 7: 4, 2, 3, 5, 7 in this
// order of preference (4 only when 4 | n). 0 when n has a prime factor above 7 (not reached by
// fft_recursive, which is only called on such "smooth" lengths).
REPMODE_HD int fft_radix(int64_t n) {
  if (n % 4 == 0) return 4;
  if (n % 2 == 0) return 2;
  if (n % 3 == 0) return 3;
  if (n % 5 == 0) return 5;
  if (n % 7 == 0) return 7;
  return 0;
}

// True when every prime factor of n >= 1 is 2, 3, 5 or 7.
REPMODE_HD bool fft_smooth(int64_t n) {
  const int64_t ps[4] = {2, 3, 5, 7};
  for (int i = 0; i < 4; ++i)
    while (n % ps[i] == 0) n /= ps[i];
  return n == 1;
}

// Bluestein's convolution length for n: the smallest power of two >= 2n - 1.
REPMODE_HD int64_t fft_bluestein_size(int64_t n) {
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  return m;
}

// The twiddle of table index i (tw[i] = W_N^i), conjugated for the inverse direction.
REPMODE_HD Cx fft_tw(const Cx* tw, int64_t i, bool forward) { return forward ? tw[i] : cx_conj(tw[i]); }

// One butterfly of a radix-r level of length n_l = r m: reads out[j m + k] (j = 0..r-1, the
// length-m transforms of the r decimated subsequences), writes X[k + q m] (q = 0..r-1) in place.
//   t_0 = Y_0[k]; t_j = Y_j[k] * W_{n_l}^{j k} for j >= 1 (no multiplication when j k == 0)
//   r = 2: X_k = t0 + t1, X_{k+m} = t0 - t1
//   r = 4: a0 = t0 + t2, a1 = t0 - t2, a2 = t1 + t3, a3 = t1 - t3; X_k = a0 + a2, X_{k+2m} = a0 - a2;
//          forward X_{k+m} = (a1.re + a3.im, a1.im - a3.re), X_{k+3m} = (a1.re - a3.im, a1.im + a3.re)
//          (a1 -+ i a3); the inverse swaps the two
//   r = 3, 5, 7: X_{k+qm} = ((t0 + t1 w^{q}) + t2 w^{2q}) + ... left to right, w^e = W_r^(e mod r),
//          a term with e mod r == 0 added without multiplication
// tw: the table of W_N^i, tstep = N / n_l.
REPMODE_HD void fft_butterfly(Cx* out, int64_t k, int64_t m, int r, const Cx* tw, int64_t tstep, bool forward) {
  Cx t[7];
  t[0] = out[k];
  for (int j = 1; j < r; ++j) {
    const Cx v = out[j * m + k];
    const int64_t e = int64_t(j) * k;
    t[j] = e == 0 ? v : cx_mul(v, fft_tw(tw, e * tstep, forward));
  }
  if (r == 2) {
    out[k] = cx_add(t[0], t[1]);
    out[k + m] = cx_sub(t[0], t[1]);
  } else if (r == 4) {
    const Cx a0 = cx_add(t[0], t[2]), a1 = cx_sub(t[0], t[2]);
    const Cx a2 = cx_add(t[1], t[3]), a3 = cx_sub(t[1], t[3]);
    const Cx minus_i = {a1.re + a3.im, a1.im - a3.re};  // a1 - i a3
    const Cx plus_i = {a1.re - a3.im, a1.im + a3.re};   // a1 + i a3
    out[k] = cx_add(a0, a2);
    out[k + 2 * m] = cx_sub(a0, a2);
    out[k + m] = forward ? minus_i : plus_i;
    out[k + 3 * m] = forward ? plus_i : minus_i;
  } else {
    const int64_t wstep = tstep * m;  // W_r^e = W_N^(e N / r), N / r = tstep m
    for (int q = 0; q < r; ++q) {
      Cx acc = t[0];
      for (int j = 1; j < r; ++j) {
        const int e = (q * j) % r;
        acc = cx_add(acc, e == 0 ? t[j] : cx_mul(t[j], fft_tw(tw, e * wstep, forward)));
      }
      out[k + q * m] = acc;
    }
  }
}

// The canonical transform of a smooth length n (every prime factor <= 7): out[0..n) = DFT of
// in[0], in[is], ..., in[(n-1) is] (out must not overlap in). Decimation in time: with r =
// fft_radix(n), m = n / r, the r subsequences in[j::r] are transformed recursively into
// out[j m .. (j+1) m), then fft_butterfly for k = 0..m-1 (each k independent). tw is the table
// of W_N^i for an N that n divides, tstep = N / n.
REPMODE_HD void fft_recursive(const Cx* in, int64_t is, Cx* out, int64_t n, const Cx* tw, int64_t tstep, bool forward) {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  const int r = fft_radix(n);
  const int64_t m = n / r;
  if (m == 1) {
    for (int j = 0; j < r; ++j) out[j] = in[j * is];
  } else {
    for (int j = 0; j < r; ++j) fft_recursive(in + j * is, is * r, out + j * m, m, tw, tstep * r, forward);
  }
  for (int64_t k = 0; k < m; ++k) fft_butterfly(out, k, m, r, tw, tstep, forward);
}

// Bluestein's chirp of length n: c_k = W_{2n}^(k^2 mod 2n) = exp(-pi i k^2 / n) (forward).
REPMODE_HD Cx fft_chirp(int64_t k, int64_t n) {
  const uint64_t two_n = uint64_t(2 * n);
  const uint64_t kk = uint64_t(k) % two_n;
  return fft_twiddle(int64_t((kk * kk) % two_n), int64_t(two_n));
}

// Bluestein for any n (used when n has a prime factor above 7), M = fft_bluestein_size(n):
//   a_j = x_j * c_j (j < n), a_j = 0 (n <= j < M)        c = the chirp, conjugated for the inverse
//   A = FFT_M(a) (forward, fft_recursive); A_i = A_i * B_i   B = bhat (below)
//   z = inverse FFT_M(A) (unscaled); X_k = z_k * c_k (k < n)
// bhat_i = FFT_M(b)_i * (1/M) (each component times the power of two 1/M), b_j = conj(c_j) for
// 0 <= j < n, b_{M-j} = conj(c_j) for 0 < j < n, 0 elsewhere (direction-adjusted c).
// chirp: c for this direction (n entries), twM: the table of W_M^i, work: 2 M entries.
REPMODE_HD void fft_bluestein(const Cx* x, int64_t xs, int64_t n, Cx* out, int64_t M, const Cx* chirp, const Cx* bhat,
                              const Cx* twM, Cx* work) {
  Cx* a = work;
  Cx* A = work + M;
  for (int64_t j = 0; j < n; ++j) a[j] = cx_mul(x[j * xs], chirp[j]);
  for (int64_t j = n; j < M; ++j) a[j] = Cx{0.0, 0.0};
  fft_recursive(a, 1, A, M, twM, 1, true);
  for (int64_t i = 0; i < M; ++i) A[i] = cx_mul(A[i], bhat[i]);
  fft_recursive(A, 1, a, M, twM, 1, false);
  for (int64_t k = 0; k < n; ++k) out[k] = cx_mul(a[k], chirp[k]);
}

// |x + iy| (complex abs, hypot): the larger part brought into [2^-500, 2^500] by an exact power of
// two (2^-600 above, 2^600 below; the parts are otherwise unscaled), t = x^2 + y^2 as a
// double-double (exact products, dd_add), s = sqrt(t.hi), corrected once:
// s + (fma(-s, s, t.hi) + t.lo) / (2 s), then the scale undone (one multiplication). +inf when
// either part is infinite, else the canonical NaN when either is NaN; +0 for 0.
REPMODE_HD double complex_abs_value(double x, double y) {
  using namespace math_detail;
  double ax = abs_of(x), ay = abs_of(y);
  const double inf = double_from_bits(0x7ff0000000000000ull);
  if (ax == inf || ay == inf) return inf;
  if (ax != ax || ay != ay) return double_from_bits(kCanonicalNanBits64);
  const double m = ax > ay ? ax : ay;
  if (m == 0.0) return 0.0;
  double back = 1.0;
  if (m > 0x1p500) {
    ax *= 0x1p-600;
    ay *= 0x1p-600;
    back = 0x1p600;
  } else if (m < 0x1p-500) {
    ax *= 0x1p600;
    ay *= 0x1p600;
    back = 0x1p-600;
  }
  const DD t = dd_add(two_prod(ax, ax), two_prod(ay, ay));
  const double s = sqrt_of(t.hi);
  const double r = repmode_fma(-s, s, t.hi) + t.lo;
  return (s + r / (2.0 * s)) * back;
}

}  // namespace repmode
