// Compile-only check that repmode's math routines and every elementwise formula build as
// device code:
//   nvcc -c -x cu --fmad=false -std=c++17 csrc/cuda/checks/math_compile_check.cu -o /tmp/m.o
// It is not linked into the extension; the kernels also serve as templates for comparing
// device results with the host functions bit for bit.
#include "../../common/elementwise.h"

// Every float32 and float64 math routine on one input array.
__global__ void repmode_math_compile_check(const float* xf, float* outf, const double* xd, double* outd, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = xf[i];
  const double y = xd[i];
  int k = 0;
  // clang-format off
#define REPMODE_CHECK(name)                \
  outf[k * n + i] = repmode::name##_of(x); \
  outd[k * n + i] = repmode::name##_of(y); \
  ++k;
  REPMODE_CHECK(exp)
  REPMODE_CHECK(log)
  REPMODE_CHECK(exp2)
  REPMODE_CHECK(expm1)
  REPMODE_CHECK(log2)
  REPMODE_CHECK(log1p)
  REPMODE_CHECK(sin)
  REPMODE_CHECK(cos)
  REPMODE_CHECK(tanh)
  REPMODE_CHECK(sigmoid)
  REPMODE_CHECK(erf)
  REPMODE_CHECK(erfc)
  REPMODE_CHECK(rsqrt)
  REPMODE_CHECK(sqrt)
  REPMODE_CHECK(reciprocal)
#undef REPMODE_CHECK
  // clang-format on
  outf[k * n + i] = repmode::pow_of(x, xf[(i + 1) % n]);
  outd[k * n + i] = repmode::pow_of(y, xd[(i + 1) % n]);
}

// Every elementwise formula, for both dtypes.
template <typename T>
__global__ void repmode_elementwise_compile_check(const T* a, const T* b, const T* c, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const repmode::EwParams<T> p{0.5, 20.0, 1.0};
  int k = 0;
#define REPMODE_CHECK(name, code) \
  out[(k++) * n + i] = repmode::EwFormula<T, repmode::EwOp::name>::apply(a[i], b[i], c[i], p);
  REPMODE_EW_OPS(REPMODE_CHECK)
#undef REPMODE_CHECK
}

template __global__ void repmode_elementwise_compile_check<float>(const float*, const float*, const float*, float*,
                                                                  int);
template __global__ void repmode_elementwise_compile_check<double>(const double*, const double*, const double*, double*,
                                                                   int);
