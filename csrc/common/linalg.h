// Linear algebra: the fixed-order algorithms of docs/semantics.md, "Linear algebra", for one
// matrix (a batch runs the same sequence on every matrix). Everything here computes in float64:
// float32 inputs are widened exactly to float64 by the caller, run through these routines and
// rounded once per output entry (see the semantics). float64 inputs of QR, eigh, SVD and LDLᵀ
// run the same templates with T = Wide (double-double, below) and are rounded once. Only IEEE
// basic operations, explicit fma and sqrt; every inner product is the matrix-product order of
// csrc/common/matmul.h (GemmTree, terms fed in increasing index; T is double or double-double here,
// so the short float32 rule of GemmSum never applies), so each double dot here equals repmode's `dot`
// of the same vectors.
//
// Layouts (chosen so that the inner products walk contiguous memory; the bits do not depend on
// them): Cholesky, the triangular solves, LU and Jacobi take row-major matrices, QR and LDLᵀ take
// column-major ones (`a[j * lda + i]` is row i of column j).
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"
#include "matmul.h"

namespace repmode {

// ---- Wide: double-double numbers for the float64 QR, eigh and SVD ------------------------------
// A Wide is the unevaluated sum hi + lo of two doubles with |lo| <= ulp(hi)/2 (normalized by a
// final fast_two_sum, so hi is the nearest double to the value). The float64 routines run the same
// templates below with T = Wide (about 106 bits): every +, -, *, /, sqrt, fma and dot of the
// algorithm is one of the operations here, each a fixed sequence of IEEE operations and explicit
// fmas (Dekker/Knuth two-sum, fma two-product; QD's accurate addition and division), so a Wide
// result is as reproducible as a double one. Outputs are rounded once: the output is `hi`.
struct Wide {
  double hi, lo;
  REPMODE_HD Wide() : hi(0.0), lo(0.0) {}
  REPMODE_HD Wide(double x) : hi(x), lo(0.0) {}  // NOLINT: implicit, so T(0), T(1) read as in double
  REPMODE_HD Wide(double h, double l) : hi(h), lo(l) {}
};

namespace wide_detail {
REPMODE_HD Wide of(math_detail::DD d) { return Wide(d.hi, d.lo); }
REPMODE_HD math_detail::DD dd(Wide w) { return {w.hi, w.lo}; }
}  // namespace wide_detail

// a + b: two two-sums, renormalized twice (error <= 2^-104 |a + b| up to cancellation of lo parts).
REPMODE_HD Wide operator+(Wide a, Wide b) {
  return wide_detail::of(math_detail::dd_add(wide_detail::dd(a), wide_detail::dd(b)));
}
REPMODE_HD Wide operator-(Wide a) { return Wide(-a.hi, -a.lo); }
REPMODE_HD Wide operator-(Wide a, Wide b) { return a + (-b); }
// a * b: the exact two-product of the high parts, the cross terms added, renormalized.
REPMODE_HD Wide operator*(Wide a, Wide b) {
  return wide_detail::of(math_detail::dd_mul(wide_detail::dd(a), wide_detail::dd(b)));
}
// a / b: three quotient digits q1 + q2 + q3, each remainder computed in Wide.
REPMODE_HD Wide operator/(Wide a, Wide b) {
  const double q1 = a.hi / b.hi;
  Wide r = a - b * Wide(q1);
  const double q2 = r.hi / b.hi;
  r = r - b * Wide(q2);
  const double q3 = r.hi / b.hi;
  return wide_detail::of(math_detail::fast_two_sum(q1, q2)) + Wide(q3);
}
REPMODE_HD bool operator<(Wide a, Wide b) { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }
REPMODE_HD bool operator>(Wide a, Wide b) { return b < a; }
REPMODE_HD bool operator==(Wide a, Wide b);
// As IEEE comparisons: false when either side is NaN.
REPMODE_HD bool operator<=(Wide a, Wide b) { return a < b || a == b; }
REPMODE_HD bool operator>=(Wide a, Wide b) { return b < a || a == b; }
REPMODE_HD bool operator==(Wide a, Wide b) { return a.hi == b.hi && a.lo == b.lo; }
REPMODE_HD bool operator!=(Wide a, Wide b) { return !(a == b); }
// fma in Wide: a * b + c with the rounding of one Wide multiplication and one addition.
REPMODE_HD Wide repmode_fma(Wide a, Wide b, Wide c) { return a * b + c; }
// sqrt: s = sqrt(hi), one Newton correction with the exact remainder a - s*s.
REPMODE_HD Wide sqrt_of(Wide a) {
  if (!(a.hi > 0.0)) return Wide(sqrt_of(a.hi));
  const double s = sqrt_of(a.hi);
  const Wide r = a - wide_detail::of(math_detail::two_prod(s, s));
  return wide_detail::of(math_detail::fast_two_sum(s, r.hi / (2.0 * s)));
}
// The inputs of the Wide routines are finite (non-finite matrices are masked by the callers).
REPMODE_HD Wide canon(Wide x) { return x; }
// The double nearest to x (hi, normalized), with the canonical NaN.
REPMODE_HD double round_wide(Wide x) { return canon(x.hi); }

// sum_{t < len} x[t * xs] * y[t * ys] in the matrix-product order (terms in increasing t).
template <typename T>
REPMODE_HD T linalg_dot(int64_t len, const T* x, int64_t xs, const T* y, int64_t ys) {
  GemmTree<T> s;
  for (int64_t t = 0; t < len; ++t) s.step(x[t * xs], y[t * ys]);
  return s.finish();
}

// K such sums in one pass: out[k] = linalg_dot(len, x[k], xs, y[k], ys) (each its own GemmTree fed
// in increasing t, so the bits are those of K separate calls; the independent fma chains overlap
// in the pipeline instead of waiting on one another).
template <typename T, int K>
REPMODE_HD void linalg_dots(int64_t len, const T* const* x, int64_t xs, const T* const* y, int64_t ys, T* out) {
  GemmTree<T> s[K];
  for (int64_t t = 0; t < len; ++t)
    for (int k = 0; k < K; ++k) s[k].step(x[k][t * xs], y[k][t * ys]);
  for (int k = 0; k < K; ++k) out[k] = s[k].finish();
}

// ---- Cholesky (lower, left-looking), row-major n x n, in place --------------------------------
// For j = 0 .. n-1:  d = a[j,j] - dot(L[j,0:j], L[j,0:j]);  if !(d > 0): return j + 1 (columns
// j.. keep the input); L[j,j] = sqrt(d);  for i > j:  L[i,j] = (a[i,j] - dot(L[i,0:j], L[j,0:j])) / L[j,j].
// The strict upper triangle is set to +0. Returns 0 on success (torch's `info`).
template <typename T>
REPMODE_HD int32_t cholesky_lower(int64_t n, T* a) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) a[i * n + j] = T(0);
  for (int64_t j = 0; j < n; ++j) {
    T* rj = a + j * n;
    const T d = rj[j] - linalg_dot(j, rj, 1, rj, 1);
    if (!(d > T(0))) return int32_t(j + 1);
    const T ljj = sqrt_of(d);
    rj[j] = ljj;
    int64_t i = j + 1;
    for (; i + 4 <= n; i += 4) {  // four rows' dots at once (each row's own sequence)
      const T* xs[4] = {a + i * n, a + (i + 1) * n, a + (i + 2) * n, a + (i + 3) * n};
      const T* ys[4] = {rj, rj, rj, rj};
      T d4[4];
      linalg_dots<T, 4>(j, xs, 1, ys, 1, d4);
      for (int k = 0; k < 4; ++k) a[(i + k) * n + j] = canon((a[(i + k) * n + j] - d4[k]) / ljj);
    }
    for (; i < n; ++i) {
      T* ri = a + i * n;
      ri[j] = canon((ri[j] - linalg_dot(j, ri, 1, rj, 1)) / ljj);
    }
  }
  return 0;
}

// ---- triangular solve A X = B, A n x n row-major, B n x k row-major (solved in place) ----------
// lower:  for i = 0 .. n-1:   x[i,c] = (b[i,c] - dot(A[i,0:i], x[0:i,c])) / A[i,i]
// upper:  for i = n-1 .. 0:   x[i,c] = (b[i,c] - dot(A[i,i+1:n], x[i+1:n,c])) / A[i,i]
// (the dot's terms in increasing index; unitriangular: no division, the diagonal is not read).
template <typename T>
REPMODE_HD void triangular_solve(int64_t n, int64_t k, const T* A, T* B, bool upper, bool unit) {
  for (int64_t s = 0; s < n; ++s) {
    const int64_t i = upper ? n - 1 - s : s;
    const int64_t lo = upper ? i + 1 : 0;
    const int64_t len = upper ? n - 1 - i : i;
    const T* ai = A + i * n + lo;
    for (int64_t c = 0; c < k; ++c) {
      T v = B[i * k + c] - linalg_dot(len, ai, 1, B + lo * k + c, k);
      if (!unit) v = v / A[i * n + i];
      B[i * k + c] = canon(v);
    }
  }
}

// ---- LU with partial pivoting (left-looking Crout), row-major m x n, in place ------------------
// For column j (r = min(m, n)):
//   u[i] = a[i,j] - dot(L[i,0:min(i,j)], U[0:min(i,j), j])   for i = 0 .. m-1 in increasing i
//   (rows i < j give U[i,j] = u[i]; the dot for row i uses the U[.,j] just computed);
//   if j < r: the pivot p is the first i >= j with the largest |u[i]|, a NaN counting as larger
//   than any number (so the first NaN wins); rows p and j are swapped whole; piv[j] = p + 1;
//   U[j,j] = u[p]; if U[j,j] != 0: L[i,j] = u[i] / U[j,j] for i > j, else L[i,j] = u[i] (all
//   zero) and info = j + 1 if no earlier zero pivot. Without pivoting p = j.
template <typename T>
REPMODE_HD int32_t lu_factor(int64_t m, int64_t n, T* a, int32_t* piv, bool pivot) {
  const int64_t r = m < n ? m : n;
  int32_t info = 0;
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      const int64_t len = i < j ? i : j;
      if (len == 0) continue;
      a[i * n + j] = canon(a[i * n + j] - linalg_dot(len, a + i * n, 1, a + j, n));
    }
    if (j >= r) continue;
    int64_t p = j;
    if (pivot) {
      T best = a[j * n + j] < T(0) ? -a[j * n + j] : a[j * n + j];
      bool best_nan = best != best;
      for (int64_t i = j + 1; i < m && !best_nan; ++i) {
        const T v = a[i * n + j] < T(0) ? -a[i * n + j] : a[i * n + j];
        if (v != v) {
          best_nan = true;
          p = i;
        } else if (v > best) {
          best = v;
          p = i;
        }
      }
    }
    piv[j] = int32_t(p + 1);
    if (p != j)
      for (int64_t c = 0; c < n; ++c) {
        const T t = a[j * n + c];
        a[j * n + c] = a[p * n + c];
        a[p * n + c] = t;
      }
    const T ujj = a[j * n + j];
    if (ujj != T(0)) {
      for (int64_t i = j + 1; i < m; ++i) a[i * n + j] = canon(a[i * n + j] / ujj);
    } else if (info == 0) {
      info = int32_t(j + 1);
    }
  }
  return info;
}

// ---- Householder QR (LAPACK's reflector convention), column-major m x n, in place --------------
// For j = 0 .. min(m,n)-1, x = a[j:m, j], alpha = x[0]:
//   s = dot(x[1:], x[1:]);  if s == 0: tau_j = 0 (H_j = I, R[j,j] = alpha)
//   else  beta = -sgn(alpha) sqrt(fma(alpha, alpha, s)) (sgn(+-0) = +1);  tau_j = (beta - alpha) / beta;
//         v[i] = x[i] / (alpha - beta) below the diagonal (v[0] = 1, not stored);  R[j,j] = beta;
//   then H_j = I - tau_j v vᵀ is applied to columns c = j+1 .. n-1:
//         w = dot(v, a[j:m, c]);  t = tau_j * w;  a[i, c] = fma(-t, v[i], a[i, c]) for i = j .. m-1.
template <typename T>
REPMODE_HD void householder_apply(int64_t len, const T* v_below, T tau, T* col) {
  // v = [1, v_below...]; dot(v, col) with the terms in increasing row: the first term is col[0]·1.
  GemmTree<T> s;
  s.step(T(1), col[0]);
  for (int64_t i = 1; i < len; ++i) s.step(v_below[i - 1], col[i]);
  const T t = tau * s.finish();
  col[0] = canon(repmode_fma(-t, T(1), col[0]));
  for (int64_t i = 1; i < len; ++i) col[i] = canon(repmode_fma(-t, v_below[i - 1], col[i]));
}

// householder_apply on ncols columns (column c at col0 + c * ld), four at a time: each column's dot,
// t and updates are exactly householder_apply's (the four dots run as independent chains).
template <typename T>
REPMODE_HD void householder_apply_columns(int64_t len, const T* v_below, T tau, T* col0, int64_t ld, int64_t ncols) {
  int64_t c = 0;
  for (; c + 4 <= ncols; c += 4) {
    T* col[4] = {col0 + c * ld, col0 + (c + 1) * ld, col0 + (c + 2) * ld, col0 + (c + 3) * ld};
    GemmTree<T> s[4];
    for (int k = 0; k < 4; ++k) s[k].step(T(1), col[k][0]);
    for (int64_t i = 1; i < len; ++i) {
      const T v = v_below[i - 1];
      for (int k = 0; k < 4; ++k) s[k].step(v, col[k][i]);
    }
    for (int k = 0; k < 4; ++k) {
      const T t = tau * s[k].finish();
      col[k][0] = canon(repmode_fma(-t, T(1), col[k][0]));
      for (int64_t i = 1; i < len; ++i) col[k][i] = canon(repmode_fma(-t, v_below[i - 1], col[k][i]));
    }
  }
  for (; c < ncols; ++c) householder_apply(len, v_below, tau, col0 + c * ld);
}

template <typename T>
REPMODE_HD void geqrf(int64_t m, int64_t n, T* a, int64_t lda, T* tau) {
  const int64_t r = m < n ? m : n;
  for (int64_t j = 0; j < r; ++j) {
    T* x = a + j * lda + j;
    const int64_t len = m - j;
    const T alpha = x[0];
    const T s = linalg_dot(len - 1, x + 1, 1, x + 1, 1);
    if (s == T(0)) {
      tau[j] = T(0);
      continue;
    }
    const T norm = sqrt_of(repmode_fma(alpha, alpha, s));
    const T beta = alpha < T(0) ? norm : -norm;  // -0.0 counts as positive
    tau[j] = canon((beta - alpha) / beta);
    const T scale = alpha - beta;
    for (int64_t i = 1; i < len; ++i) x[i] = canon(x[i] / scale);
    x[0] = canon(beta);
    householder_apply_columns(len, x + 1, tau[j], a + (j + 1) * lda + j, lda, n - j - 1);
  }
}

// Q C or Qᵀ C for Q = H_0 H_1 ... H_{k-1} (reflectors in the columns of a, m x k column-major)
// and C m x ncols column-major, in place: Q C applies H_{k-1} first, Qᵀ C applies H_0 first;
// each H_j acts on rows j .. m-1 of every column of C as in householder_apply.
template <typename T>
REPMODE_HD void apply_q_left(int64_t m, int64_t k, const T* a, int64_t lda, const T* tau, int64_t ncols, T* c,
                             int64_t ldc, bool transpose) {
  for (int64_t s = 0; s < k; ++s) {
    const int64_t j = transpose ? s : k - 1 - s;
    householder_apply_columns(m - j, a + j * lda + j + 1, tau[j], c + j, ldc, ncols);
  }
}

// ---- symmetric eigendecomposition by cyclic Jacobi ---------------------------------------------
// s: n x n symmetric, row-major with row stride lds (both triangles), overwritten; vt: n x n
// row-major, row r the
// r-th eigenvector (the rotations' accumulation, from the identity); w: n eigenvalues.
// Sweeps of the row-cyclic order (p, q) = (0,1), (0,2) .. (0,n-1), (1,2) .. (n-2,n-1); a pair is
// rotated unless s[p,q] == 0 or |s[p,q]| <= 2^-53 * sqrt(|s[p,p]|) * sqrt(|s[q,q]|); the sweeps
// stop after the first sweep that rotates no pair, or after kJacobiMaxSweeps sweeps. A rotation:
//   theta = (s[q,q] - s[p,p]) / (2 s[p,q]);  t = sgn(theta) / (|theta| + sqrt(fma(theta, theta, 1)))
//   (t = 1/(2 theta) when |theta| > 2^500; sgn(+-0) = +1);  c = 1 / sqrt(fma(t, t, 1));  s_ = t c;
//   z = s_ / (1 + c);  s[p,p] -= t s[p,q];  s[q,q] += t s[p,q];  s[p,q] = s[q,p] = 0;  and for the
//   other r (rows of s, then of vt):  g = x[p], h = x[q]:
//   x[p] = g - s_ (h + g z),  x[q] = h + s_ (g - h z)   (s is kept symmetric: s[r,p] = s[p,r]).
// Returns the number of sweeps run.
constexpr int kJacobiMaxSweeps = 40;

template <typename T>
REPMODE_HD int jacobi_eigh(int64_t n, T* s, int64_t lds, T* vt, bool compute_v) {
  const T tol = T(1.1102230246251565e-16);  // 2^-53
  int sweep = 0;
  if (compute_v)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) vt[i * n + j] = T(i == j ? 1 : 0);
  while (sweep < kJacobiMaxSweeps) {
    ++sweep;
    bool rotated = false;
    for (int64_t p = 0; p + 1 < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        const T apq = s[p * lds + q];
        if (apq == T(0)) continue;
        const T app = s[p * lds + p], aqq = s[q * lds + q];
        const T aapq = apq < T(0) ? -apq : apq;
        if (aapq <= tol * sqrt_of(app < T(0) ? -app : app) * sqrt_of(aqq < T(0) ? -aqq : aqq)) continue;
        rotated = true;
        const T theta = (aqq - app) / (T(2) * apq);
        const T atheta = theta < T(0) ? -theta : theta;
        T t;
        if (atheta > T(3.273390607896142e150)) {  // 2^500
          t = T(1) / (T(2) * theta);
        } else {
          t = T(1) / (atheta + sqrt_of(repmode_fma(theta, theta, T(1))));
          if (theta < T(0)) t = -t;
        }
        const T c = T(1) / sqrt_of(repmode_fma(t, t, T(1)));
        const T sn = t * c;
        const T z = sn / (T(1) + c);
        const T tapq = t * apq;
        T* rp = s + p * lds;
        T* rq = s + q * lds;
        // every r but p and q, in three branch-free ranges (the same operations per r)
        const int64_t lo[3] = {0, p + 1, q + 1}, hi[3] = {p, q, n};
        for (int part = 0; part < 3; ++part)
          for (int64_t r = lo[part]; r < hi[part]; ++r) {
            const T g = rp[r], h = rq[r];
            rp[r] = g - sn * (h + g * z);
            rq[r] = h + sn * (g - h * z);
          }
        rp[p] = app - tapq;
        rq[q] = aqq + tapq;
        rp[q] = T(0);
        rq[p] = T(0);
        for (int part = 0; part < 3; ++part)
          for (int64_t r = lo[part]; r < hi[part]; ++r) {
            s[r * lds + p] = rp[r];
            s[r * lds + q] = rq[r];
          }
        if (compute_v) {
          T* vp = vt + p * n;
          T* vq = vt + q * n;
          for (int64_t r = 0; r < n; ++r) {
            const T g = vp[r], h = vq[r];
            vp[r] = g - sn * (h + g * z);
            vq[r] = h + sn * (g - h * z);
          }
        }
      }
    }
    if (!rotated) break;
  }
  return sweep;
}

// ---- singular value decomposition by one-sided Jacobi (Hestenes) -------------------------------
// g: m x n column-major (m >= n), overwritten by G = A V (column j = sigma_j u_j); vt: n x n
// row-major, row j the j-th right singular vector (the rotations' accumulation, from the
// identity). Sweeps of the row-cyclic pair order (0,1) .. (n-2,n-1); for a pair:
//   a = dot(g_p, g_p), b = dot(g_q, g_q), c = dot(g_p, g_q)   (the matrix-product order);
//   skipped when c == 0 or |c| <= (2^-53 sqrt(a)) sqrt(b); else the rotation of jacobi_eigh with
//   theta = (b - a) / (2 c) applied to columns p, q of g (rows i = 0 .. m-1) and rows p, q of vt.
// The sweeps stop after the first that rotates no pair, or after kJacobiMaxSweeps. Then for each
// column j: sigma[j] = sqrt(dot(g_j, g_j)) and, if sigma[j] > 0, g_j = g_j / sigma[j] (u_j; a zero
// column stays zero). Returns the number of sweeps run.
template <typename T>
REPMODE_HD void jacobi_rotation(T theta, T* cs, T* sn, T* zz) {
  const T atheta = theta < T(0) ? -theta : theta;
  T t;
  if (atheta > T(3.273390607896142e150)) {  // 2^500
    t = T(1) / (T(2) * theta);
  } else {
    t = T(1) / (atheta + sqrt_of(repmode_fma(theta, theta, T(1))));
    if (theta < T(0)) t = -t;
  }
  const T c = T(1) / sqrt_of(repmode_fma(t, t, T(1)));
  *cs = c;
  *sn = t * c;
  *zz = *sn / (T(1) + c);
}

template <typename T>
REPMODE_HD int jacobi_svd(int64_t m, int64_t n, T* g, T* vt, T* sigma, bool compute_v) {
  const T tol = T(1.1102230246251565e-16);  // 2^-53
  if (compute_v)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) vt[i * n + j] = T(i == j ? 1 : 0);
  int sweep = 0;
  while (sweep < kJacobiMaxSweeps) {
    ++sweep;
    bool rotated = false;
    for (int64_t p = 0; p + 1 < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        T* gp = g + p * m;
        T* gq = g + q * m;
        const T* xs[3] = {gp, gq, gp};
        const T* ys[3] = {gp, gq, gq};
        T abc[3];
        linalg_dots<T, 3>(m, xs, 1, ys, 1, abc);  // dot(g_p, g_p), dot(g_q, g_q), dot(g_p, g_q)
        const T a = abc[0], b = abc[1], c = abc[2];
        if (c == T(0)) continue;
        const T ac = c < T(0) ? -c : c;
        if (ac <= tol * sqrt_of(a) * sqrt_of(b)) continue;
        rotated = true;
        T cs, sn, z;
        jacobi_rotation((b - a) / (T(2) * c), &cs, &sn, &z);
        for (int64_t i = 0; i < m; ++i) {
          const T x = gp[i], y = gq[i];
          gp[i] = x - sn * (y + x * z);
          gq[i] = y + sn * (x - y * z);
        }
        if (compute_v) {
          T* vp = vt + p * n;
          T* vq = vt + q * n;
          for (int64_t r = 0; r < n; ++r) {
            const T x = vp[r], y = vq[r];
            vp[r] = x - sn * (y + x * z);
            vq[r] = y + sn * (x - y * z);
          }
        }
      }
    }
    if (!rotated) break;
  }
  for (int64_t j = 0; j < n; ++j) {
    T* gj = g + j * m;
    const T sj = sqrt_of(linalg_dot(m, gj, 1, gj, 1));
    sigma[j] = sj;
    if (sj > T(0))
      for (int64_t i = 0; i < m; ++i) gj[i] = canon(gj[i] / sj);
  }
  return sweep;
}

// ---- LDLᵀ with Bunch-Kaufman pivoting (LAPACK's sytf2, lower), column-major n x n, in place ----
// A(i, j) = a[j * lda + i]; only the lower triangle is read. The algorithm, the pivot rule
// (alpha = (1 + sqrt(17)) / 8, the first largest |value| of a column or row, a NaN never larger
// except in first place) and the output format are LAPACK's: D's 1x1 and 2x2 blocks on the
// diagonal (and subdiagonal), L's multipliers below them, ipiv 1-based, a 2x2 block marked by
// -p in both of its entries. Returns info (the first k + 1 with a zero or NaN column; torch's).
template <typename T>
REPMODE_HD T ldl_abs(T x) {
  return x < T(0) ? -x : x;
}

// The first t in [0, len) with the largest |x[t * inc]| (BLAS i_amax: later entries must be
// strictly larger, so a NaN wins only in first place).
template <typename T>
REPMODE_HD int64_t ldl_iamax(int64_t len, const T* x, int64_t inc) {
  int64_t best = 0;
  T big = ldl_abs(x[0]);
  for (int64_t t = 1; t < len; ++t) {
    const T v = ldl_abs(x[t * inc]);
    if (v > big) {
      big = v;
      best = t;
    }
  }
  return best;
}

template <typename T>
REPMODE_HD void ldl_swap(T& x, T& y) {
  const T t = x;
  x = y;
  y = t;
}

template <typename T>
REPMODE_HD int32_t ldl_factor_lower(int64_t n, T* a, int64_t lda, int32_t* ipiv) {
  const T alpha = (T(1) + sqrt_of(T(17))) / T(8);
  int32_t info = 0;
  auto A = [&](int64_t i, int64_t j) -> T& { return a[j * lda + i]; };
  int64_t k = 0;
  while (k < n) {
    int kstep = 1;
    const T absakk = ldl_abs(A(k, k));
    int64_t imax = k;
    T colmax = T(0);
    if (k < n - 1) {
      imax = k + 1 + ldl_iamax(n - k - 1, &A(k + 1, k), 1);
      colmax = ldl_abs(A(imax, k));
    }
    int64_t kp = k;
    if ((absakk == T(0) && colmax == T(0)) || absakk != absakk) {
      if (info == 0) info = int32_t(k + 1);
    } else {
      if (!(absakk >= alpha * colmax)) {
        // the largest off-diagonal |value| in row (and column) imax of the trailing matrix
        int64_t jmax = k + ldl_iamax(imax - k, &A(imax, k), lda);
        T rowmax = ldl_abs(A(imax, jmax));
        if (imax < n - 1) {
          jmax = imax + 1 + ldl_iamax(n - imax - 1, &A(imax + 1, imax), 1);
          const T v = ldl_abs(A(jmax, imax));
          if (v > rowmax) rowmax = v;
        }
        if (absakk >= alpha * colmax * (colmax / rowmax)) {
          kp = k;
        } else if (ldl_abs(A(imax, imax)) >= alpha * rowmax) {
          kp = imax;
        } else {
          kp = imax;
          kstep = 2;
        }
      }
      const int64_t kk = k + kstep - 1;
      if (kp != kk) {  // symmetric interchange of rows and columns kk and kp (lower triangle)
        for (int64_t i = kp + 1; i < n; ++i) ldl_swap(A(i, kk), A(i, kp));
        for (int64_t t = 0; t < kp - kk - 1; ++t) ldl_swap(A(kk + 1 + t, kk), A(kp, kk + 1 + t));
        ldl_swap(A(kk, kk), A(kp, kp));
        if (kstep == 2) ldl_swap(A(k + 1, k), A(kp, k));
      }
      if (kstep == 1) {
        if (k < n - 1) {  // rank-1 update A22 -= d11 x xᵀ (column by column), then x *= d11
          const T d11 = T(1) / A(k, k);
          for (int64_t j = k + 1; j < n; ++j) {
            const T xj = A(j, k);
            if (xj != T(0)) {
              const T temp = -d11 * xj;
              for (int64_t i = j; i < n; ++i) A(i, j) = canon(A(i, j) + A(i, k) * temp);
            }
          }
          for (int64_t i = k + 1; i < n; ++i) A(i, k) = canon(d11 * A(i, k));
        }
      } else if (k < n - 2) {  // rank-2 update with the inverse of the 2x2 block
        T d21 = A(k + 1, k);
        const T d11 = A(k + 1, k + 1) / d21;
        const T d22 = A(k, k) / d21;
        const T t = T(1) / (d11 * d22 - T(1));
        d21 = t / d21;
        for (int64_t j = k + 2; j < n; ++j) {
          const T wk = d21 * (d11 * A(j, k) - A(j, k + 1));
          const T wkp1 = d21 * (d22 * A(j, k + 1) - A(j, k));
          for (int64_t i = j; i < n; ++i) A(i, j) = canon(A(i, j) - A(i, k) * wk - A(i, k + 1) * wkp1);
          A(j, k) = canon(wk);
          A(j, k + 1) = canon(wkp1);
        }
      }
    }
    if (kstep == 1) {
      ipiv[k] = int32_t(kp + 1);
    } else {
      ipiv[k] = -int32_t(kp + 1);
      ipiv[k + 1] = -int32_t(kp + 1);
    }
    k += kstep;
  }
  return info;
}

// A X = B from ldl_factor_lower's output (LAPACK's sytrs, lower), B n x nrhs column-major
// (B(i, j) = b[j * ldb + i]) solved in place: L D Y = P B forward, then Lᵀ X = Y backward; each
// column of B independently. The backward step's sums are dot (the matrix-product order, terms in
// increasing row).
template <typename T>
REPMODE_HD void ldl_solve_lower(int64_t n, int64_t nrhs, const T* a, int64_t lda, const int32_t* ipiv, T* b,
                                int64_t ldb) {
  auto A = [&](int64_t i, int64_t j) -> T { return a[j * lda + i]; };
  for (int64_t c = 0; c < nrhs; ++c) {
    T* x = b + c * ldb;
    int64_t k = 0;
    while (k < n) {
      if (ipiv[k] > 0) {
        const int64_t kp = ipiv[k] - 1;
        if (kp != k) ldl_swap(x[k], x[kp]);
        const T xk = -x[k];
        for (int64_t i = k + 1; i < n; ++i) x[i] = x[i] + A(i, k) * xk;
        x[k] = canon(x[k] * (T(1) / A(k, k)));
        k += 1;
      } else {
        const int64_t kp = -ipiv[k] - 1;
        if (kp != k + 1) ldl_swap(x[k + 1], x[kp]);
        const T xk = -x[k], xk1 = -x[k + 1];
        for (int64_t i = k + 2; i < n; ++i) x[i] = x[i] + A(i, k) * xk;
        for (int64_t i = k + 2; i < n; ++i) x[i] = x[i] + A(i, k + 1) * xk1;
        const T akm1k = A(k + 1, k);
        const T akm1 = A(k, k) / akm1k;
        const T ak = A(k + 1, k + 1) / akm1k;
        const T denom = akm1 * ak - T(1);
        const T bkm1 = x[k] / akm1k;
        const T bk = x[k + 1] / akm1k;
        x[k] = canon((ak * bkm1 - bk) / denom);
        x[k + 1] = canon((akm1 * bk - bkm1) / denom);
        k += 2;
      }
    }
    k = n - 1;
    while (k >= 0) {
      if (ipiv[k] > 0) {
        if (k < n - 1) x[k] = canon(x[k] - linalg_dot(n - 1 - k, x + k + 1, 1, a + k * lda + k + 1, 1));
        const int64_t kp = ipiv[k] - 1;
        if (kp != k) ldl_swap(x[k], x[kp]);
        k -= 1;
      } else {
        if (k < n - 1) {
          x[k] = canon(x[k] - linalg_dot(n - 1 - k, x + k + 1, 1, a + k * lda + k + 1, 1));
          x[k - 1] = canon(x[k - 1] - linalg_dot(n - 1 - k, x + k + 1, 1, a + (k - 1) * lda + k + 1, 1));
        }
        const int64_t kp = -ipiv[k] - 1;
        if (kp != k) ldl_swap(x[k], x[kp]);
        k -= 2;
      }
    }
  }
}

}  // namespace repmode
