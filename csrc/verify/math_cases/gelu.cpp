// The AVX2 array path of float32 gelu (csrc/cpu/vec_math_gelu_avx2.h) against its
// definition, the scalar formula EwFormula<float, EwOp::gelu>::apply
// (csrc/common/elementwise.h). Bit for bit; there is no reference to a correctly
// rounded value here (gelu is a multi-step formula, defined by its double evaluation).
//
//   gelu-simd      every stride-th float32 bit pattern, in blocks of 4096: the array
//                  function out of place at a block-dependent offset (0..15) with a
//                  block-dependent shortened length (every alignment and tail length),
//                  and in place over the whole block, against the scalar formula.
//   gelu-simd-ftz  the same with FTZ and DAZ set in MXCSR while the array function runs:
//                  its result must equal the scalar formula run under the same MXCSR, and
//                  must equal the scalar formula under the default MXCSR wherever that
//                  formula's own result does not depend on FTZ/DAZ (the inputs where it
//                  does -- subnormal inputs, subnormal results -- are counted and
//                  printed; the array path calls the scalar formula there). Meant as a
//                  sampled check (--stride).
//
// Rows: inputs checked, mismatches in the simd-mismatch column.
#include <immintrin.h>
#include <omp.h>

#include <cstdio>
#include <vector>

#include "../../common/elementwise.h"
#include "../../cpu/vec_math_gelu_avx2.h"
#include "../math_verify.h"

namespace {

using verify::Options;
using verify::Row;
using repmode::bits_of;
using repmode::float_from_bits;

constexpr int64_t kBlock = 4096;

float gelu_def(float x) {
  return repmode::EwFormula<float, repmode::EwOp::gelu>::apply(x, 0.0f, 0.0f, repmode::EwParams<float>{0.0, 0.0, 0.0});
}

bool have_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

constexpr unsigned kFtzDaz = 0x8040;  // MXCSR FTZ (bit 15) | DAZ (bit 6)

template <bool kFtz>
Row run_gelu_simd(const Options& opt) {
  Row row;
  row.name = kFtz ? "gelu-simd-ftz" : "gelu-simd";
  row.simd = have_avx2();
  if (!row.simd) {
    std::printf("  %s: no AVX2/FMA on this CPU, nothing checked\n", row.name);
    return row;
  }
  const int64_t n = ((int64_t(1) << 32) + opt.stride - 1) / opt.stride;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  uint64_t simd_bad = 0, ftz_dependent = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel reduction(+ : simd_bad, ftz_dependent)
  {
    std::vector<float> in(kBlock + 16), want(kBlock + 16), want_ftz(kBlock + 16), arr(kBlock + 16),
        inplace(kBlock + 16);
    const unsigned csr = _mm_getcsr();
#pragma omp for schedule(dynamic, 16)
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t first = b * kBlock, len = n - first < kBlock ? n - first : kBlock;
      for (int64_t k = 0; k < len; ++k) {
        float x = float_from_bits(uint32_t((first + k) * opt.stride));
        in[k] = x;
        want[k] = gelu_def(x);
      }
      if (kFtz) {
        _mm_setcsr(csr | kFtzDaz);
        for (int64_t k = 0; k < len; ++k) want_ftz[k] = gelu_def(in[k]);
      }
      int64_t off = b % 16, m = len - (b / 16) % 9;  // shifted start, shortened tail
      if (m < 0) m = 0;
      repmode::cpu::gelu_array_avx2(in.data(), arr.data() + off, m);
      for (int64_t k = 0; k < len; ++k) inplace[k] = in[k];
      repmode::cpu::gelu_array_avx2(inplace.data(), inplace.data(), len);  // in place
      if (kFtz) _mm_setcsr(csr);
      auto check = [&](int64_t k, float got) {
        bool ok = bits_of(got) == bits_of(want[k]);
        if (kFtz) {
          bool dep = bits_of(want_ftz[k]) != bits_of(want[k]);
          // Under FTZ/DAZ: equal to the formula under the same MXCSR, and to the default
          // result wherever the formula itself does not change.
          ok = bits_of(got) == bits_of(want_ftz[k]) && (dep || bits_of(got) == bits_of(want[k]));
        }
        if (!ok) {
          ++simd_bad;
#pragma omp critical
          if (simd_bad <= 20)
            std::printf("  SIMD MISMATCH %s(%a [0x%08x]) = %a, scalar %a\n", row.name, in[k], bits_of(in[k]), got,
                        kFtz ? want_ftz[k] : want[k]);
        }
      };
      for (int64_t k = 0; k < m; ++k) check(k, arr[off + k]);
      for (int64_t k = 0; k < len; ++k) check(k, inplace[k]);
      if (kFtz)
        for (int64_t k = 0; k < len; ++k) ftz_dependent += bits_of(want_ftz[k]) != bits_of(want[k]);
    }
  }
  row.seconds = omp_get_wtime() - t0;
  row.checked = uint64_t(n);
  row.simd_bad = simd_bad;
  if (kFtz)
    std::printf("  %s: %llu inputs where the scalar formula itself changes under FTZ/DAZ\n", row.name,
                (unsigned long long)ftz_dependent);
  return row;
}

verify::RegisterCustom gelu_simd({"gelu-simd", run_gelu_simd<false>});
verify::RegisterCustom gelu_simd_ftz({"gelu-simd-ftz", run_gelu_simd<true>});

}  // namespace
