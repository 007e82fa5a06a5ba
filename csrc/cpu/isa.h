// Which SIMD path the CPU kernels take. Paths differ in speed only: each computes the
// same arithmetic sequence per output as the scalar reference, and the tests force every
// available path and compare bits. Chosen from REPMODE_CPU_ISA (scalar|avx2|avx512|auto)
// at import, changeable at run time through the binding.
#pragma once

namespace repmode::cpu {

enum class Isa : int { scalar = 0, avx2 = 1, avx512 = 2 };

// The best path this CPU supports.
Isa best_isa();
// The path kernels use now (never above best_isa()).
Isa active_isa();
// Select a path; returns false (and changes nothing) if the CPU lacks it.
bool set_active_isa(Isa isa);
const char* isa_name(Isa isa);

}  // namespace repmode::cpu
