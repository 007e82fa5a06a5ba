// Linear algebra on the CPU: the one-matrix routines of csrc/common/linalg.h run over a batch of
// contiguous float64 matrices; threads take whole matrices (the batch only), so the bits of a
// matrix never depend on the thread count or on the other matrices of the batch. rows_parallel
// compiles the walk for AVX2+FMA when available (repmode_fma inlines to one instruction; the same
// exactly rounded fma, so the bits equal the portable path's).
#include "../common/linalg.h"

#include "dispatch.h"
#include "entry_points.h"
#include "parallel.h"

#include <vector>

namespace repmode::cpu {

namespace {

void need_float64(int dtype) {
  if (dtype != int(Dtype::float64)) bad_dtype(dtype);  // float32 is widened to float64 by the caller
}

int64_t cube(int64_t n) { return n * n * n + 1; }

}  // namespace

void linalg_cholesky(int dtype, int64_t batch, int64_t n, uintptr_t a, uintptr_t info, int nthreads) {
  need_float64(dtype);
  double* A = ptr<double>(a);
  int32_t* I = ptr<int32_t>(info);
  rows_parallel(batch, nthreads, cube(n), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) I[b] = cholesky_lower<double>(n, A + b * n * n);
  });
}

void linalg_triangular_solve(int dtype, int64_t batch, int64_t n, int64_t k, uintptr_t a, uintptr_t b, bool upper,
                             bool unit, int nthreads) {
  need_float64(dtype);
  const double* A = ptr<double>(a);
  double* B = ptr<double>(b);
  rows_parallel(batch, nthreads, n * n * k + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) triangular_solve<double>(n, k, A + i * n * n, B + i * n * k, upper, unit);
  });
}

void linalg_lu_factor(int dtype, int64_t batch, int64_t m, int64_t n, uintptr_t a, uintptr_t piv, uintptr_t info,
                      bool pivot, int nthreads) {
  need_float64(dtype);
  double* A = ptr<double>(a);
  int32_t* P = ptr<int32_t>(piv);
  int32_t* I = ptr<int32_t>(info);
  const int64_t r = m < n ? m : n;
  rows_parallel(batch, nthreads, m * n * r + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) I[b] = lu_factor<double>(m, n, A + b * m * n, P + b * r, pivot);
  });
}

void linalg_geqrf(int dtype, int64_t batch, int64_t m, int64_t n, uintptr_t a, uintptr_t tau, int nthreads) {
  need_float64(dtype);
  double* A = ptr<double>(a);
  double* T = ptr<double>(tau);
  const int64_t r = m < n ? m : n;
  rows_parallel(batch, nthreads, m * n * r + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) geqrf<double>(m, n, A + b * m * n, m, T + b * r);
  });
}

void linalg_apply_q(int dtype, int64_t batch, int64_t m, int64_t k, uintptr_t a, uintptr_t tau, int64_t ncols,
                    uintptr_t c, bool transpose, int nthreads) {
  need_float64(dtype);
  const double* A = ptr<double>(a);
  const double* T = ptr<double>(tau);
  double* C = ptr<double>(c);
  rows_parallel(batch, nthreads, m * k * ncols + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      apply_q_left<double>(m, k, A + b * m * k, m, T + b * k, ncols, C + b * m * ncols, m, transpose);
  });
}

void linalg_eigh_jacobi(int dtype, int64_t batch, int64_t n, uintptr_t s, uintptr_t vt, bool compute_v,
                        uintptr_t sweeps, int nthreads) {
  need_float64(dtype);
  double* S = ptr<double>(s);
  double* V = ptr<double>(vt);
  int32_t* W = ptr<int32_t>(sweeps);
  // The rotations write two columns of s: with a row stride of 4 KiB (n = 512) every element of a
  // column falls into the same cache sets, so each matrix is worked on in a copy whose rows are
  // padded by 8 elements (memory layout only: the same operations on the same values).
  const int64_t lds = n + 8;
  rows_parallel(batch, nthreads, 10 * cube(n), [&](int64_t b0, int64_t b1) {
    std::vector<double> work(size_t(n * lds));
    for (int64_t b = b0; b < b1; ++b) {
      double* Sb = S + b * n * n;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) work[size_t(i * lds + j)] = Sb[i * n + j];
      W[b] = jacobi_eigh<double>(n, work.data(), lds, compute_v ? V + b * n * n : nullptr, compute_v);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) Sb[i * n + j] = work[size_t(i * lds + j)];
    }
  });
}

void linalg_svd_jacobi(int dtype, int64_t batch, int64_t m, int64_t n, uintptr_t g, uintptr_t vt, uintptr_t s,
                       bool compute_v, uintptr_t sweeps, int nthreads) {
  need_float64(dtype);
  double* G = ptr<double>(g);
  double* S = ptr<double>(s);
  double* V = ptr<double>(vt);
  int32_t* W = ptr<int32_t>(sweeps);
  rows_parallel(batch, nthreads, 10 * m * n * n + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      W[b] = jacobi_svd<double>(m, n, G + b * m * n, compute_v ? V + b * n * n : nullptr, S + b * n, compute_v);
  });
}

// ---- float64: the same routines in Wide (double-double), each output rounded once -------------

namespace {

std::vector<Wide> widen(const double* x, int64_t count) { return std::vector<Wide>(x, x + count); }

void narrow(const std::vector<Wide>& w, double* out) {
  for (size_t i = 0; i < w.size(); ++i) out[i] = round_wide(w[i]);
}

}  // namespace

void linalg_geqrf_wide(int dtype, int64_t batch, int64_t m, int64_t n, uintptr_t a, uintptr_t tau, int64_t qcols,
                       uintptr_t q, int nthreads) {
  need_float64(dtype);
  double* A = ptr<double>(a);
  double* T = ptr<double>(tau);
  double* Q = ptr<double>(q);
  const int64_t r = m < n ? m : n;
  rows_parallel(batch, nthreads, 20 * (m * n * r + m * qcols * r) + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      std::vector<Wide> w = widen(A + b * m * n, m * n);
      std::vector<Wide> tw(static_cast<size_t>(r));
      geqrf<Wide>(m, n, w.data(), m, tw.data());
      narrow(w, A + b * m * n);
      narrow(tw, T + b * r);
      if (qcols > 0) {  // Q's first qcols columns from the unrounded reflectors
        std::vector<Wide> c(size_t(qcols * m));
        for (int64_t j = 0; j < qcols; ++j) c[size_t(j * m + j)] = Wide(1.0);
        apply_q_left<Wide>(m, r, w.data(), m, tw.data(), qcols, c.data(), m, false);
        narrow(c, Q + b * qcols * m);
      }
    }
  });
}

void linalg_apply_q_wide(int dtype, int64_t batch, int64_t m, int64_t k, uintptr_t a, uintptr_t tau, int64_t ncols,
                         uintptr_t c, bool transpose, int nthreads) {
  need_float64(dtype);
  const double* A = ptr<double>(a);
  const double* T = ptr<double>(tau);
  double* Cm = ptr<double>(c);
  rows_parallel(batch, nthreads, 20 * m * k * ncols + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const std::vector<Wide> w = widen(A + b * m * k, m * k);
      const std::vector<Wide> tw = widen(T + b * k, k);
      std::vector<Wide> cw = widen(Cm + b * m * ncols, m * ncols);
      apply_q_left<Wide>(m, k, w.data(), m, tw.data(), ncols, cw.data(), m, transpose);
      narrow(cw, Cm + b * m * ncols);
    }
  });
}

void linalg_eigh_jacobi_wide(int dtype, int64_t batch, int64_t n, uintptr_t s, uintptr_t vt, bool compute_v,
                             uintptr_t sweeps, int nthreads) {
  need_float64(dtype);
  double* S = ptr<double>(s);
  double* V = ptr<double>(vt);
  int32_t* W = ptr<int32_t>(sweeps);
  const int64_t lds = n + 4;  // padded rows, as in linalg_eigh_jacobi (layout only)
  rows_parallel(batch, nthreads, 200 * cube(n), [&](int64_t b0, int64_t b1) {
    std::vector<Wide> work(size_t(n * lds));
    std::vector<Wide> vw(compute_v ? size_t(n * n) : 0);
    for (int64_t b = b0; b < b1; ++b) {
      double* Sb = S + b * n * n;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) work[size_t(i * lds + j)] = Wide(Sb[i * n + j]);
      W[b] = jacobi_eigh<Wide>(n, work.data(), lds, compute_v ? vw.data() : nullptr, compute_v);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) Sb[i * n + j] = round_wide(work[size_t(i * lds + j)]);
      if (compute_v) narrow(vw, V + b * n * n);
    }
  });
}

void linalg_svd_jacobi_wide(int dtype, int64_t batch, int64_t m, int64_t n, uintptr_t g, uintptr_t vt, uintptr_t s,
                            bool compute_v, uintptr_t sweeps, int nthreads) {
  need_float64(dtype);
  double* G = ptr<double>(g);
  double* S = ptr<double>(s);
  double* V = ptr<double>(vt);
  int32_t* W = ptr<int32_t>(sweeps);
  rows_parallel(batch, nthreads, 200 * m * n * n + 1, [&](int64_t b0, int64_t b1) {
    std::vector<Wide> vw(compute_v ? size_t(n * n) : 0);
    std::vector<Wide> sw(static_cast<size_t>(n));
    for (int64_t b = b0; b < b1; ++b) {
      std::vector<Wide> gw = widen(G + b * m * n, m * n);
      W[b] = jacobi_svd<Wide>(m, n, gw.data(), compute_v ? vw.data() : nullptr, sw.data(), compute_v);
      narrow(gw, G + b * m * n);
      narrow(sw, S + b * n);
      if (compute_v) narrow(vw, V + b * n * n);
    }
  });
}

void linalg_ldl_factor(int dtype, int64_t batch, int64_t n, uintptr_t a, uintptr_t piv, uintptr_t info, bool wide,
                       int nthreads) {
  need_float64(dtype);
  double* A = ptr<double>(a);
  int32_t* P = ptr<int32_t>(piv);
  int32_t* I = ptr<int32_t>(info);
  rows_parallel(batch, nthreads, (wide ? 20 : 1) * cube(n), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      if (!wide) {
        I[b] = ldl_factor_lower<double>(n, A + b * n * n, n, P + b * n);
        continue;
      }
      std::vector<Wide> w = widen(A + b * n * n, n * n);
      I[b] = ldl_factor_lower<Wide>(n, w.data(), n, P + b * n);
      narrow(w, A + b * n * n);
    }
  });
}

void linalg_ldl_solve(int dtype, int64_t batch, int64_t n, int64_t k, uintptr_t a, uintptr_t piv, uintptr_t b,
                      bool wide, int nthreads) {
  need_float64(dtype);
  const double* A = ptr<double>(a);
  const int32_t* P = ptr<int32_t>(piv);
  double* B = ptr<double>(b);
  rows_parallel(batch, nthreads, (wide ? 20 : 1) * n * n * k + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) {
      if (!wide) {
        ldl_solve_lower<double>(n, k, A + i * n * n, n, P + i * n, B + i * n * k, n);
        continue;
      }
      const std::vector<Wide> w = widen(A + i * n * n, n * n);
      std::vector<Wide> x = widen(B + i * n * k, n * k);
      ldl_solve_lower<Wide>(n, k, w.data(), n, P + i * n, x.data(), n);
      narrow(x, B + i * n * k);
    }
  });
}

}  // namespace repmode::cpu
