#include "isa.h"
#include "dispatch.h"
#include "entry_points.h"

#include <atomic>
#include <string>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace repmode::cpu {

namespace {
std::atomic<int> g_active{-1};
}

Isa best_isa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return Isa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
#endif
  return Isa::scalar;
}

Isa active_isa() {
  int v = g_active.load(std::memory_order_relaxed);
  if (v < 0) {
    v = static_cast<int>(best_isa());
    g_active.store(v, std::memory_order_relaxed);
  }
  return static_cast<Isa>(v);
}

bool set_active_isa(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(best_isa())) return false;
  g_active.store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar:
      return "scalar";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "unknown";
}

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

bool flush_denormal_active() {
#if defined(__x86_64__)
  const unsigned csr = _mm_getcsr();
  return (csr & 0x8000u) || (csr & 0x0040u);  // FTZ or DAZ
#else
  return false;
#endif
}

bool set_cpu_isa(const std::string& name) {
  if (name == "auto") return set_active_isa(best_isa());
  if (name == "scalar") return set_active_isa(Isa::scalar);
  if (name == "avx2") return set_active_isa(Isa::avx2);
  if (name == "avx512") return set_active_isa(Isa::avx512);
  return false;
}

std::string cpu_isa() { return std::string(isa_name(active_isa())); }

std::string best_cpu_isa() { return std::string(isa_name(best_isa())); }

}  // namespace repmode::cpu
