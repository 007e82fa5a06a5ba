// The emulator's runtime (cuda_runtime.h): the threads of a block are fibers run by a
// round-robin scheduler on the calling OS thread; a fiber runs until it waits at a barrier
// (__syncthreads, __syncwarp, a shuffle) or ends. Blocks run one after another, in ascending
// thread order for even blocks and descending for odd ones, so a read of another thread's
// shared-memory write without a barrier between them is out of order in one of the two.
// A launch with no runnable thread left but some still waiting (a barrier some threads skip)
// is reported as an error instead of hanging.
#include "cuda_runtime.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#if !defined(__x86_64__)
#error "the CUDA emulator's fiber switch is written for x86-64"
#endif

// switch_stack(&save, next): saves the callee-saved registers and the stack pointer into
// `save` and resumes the fiber whose stack pointer is `next` (a plain function call for the
// compiler, so it saves every other register itself). No signal-mask syscall, unlike swapcontext.
extern "C" void repmode_emu_switch(void** save, void* next);
asm(R"(
  .text
  .globl repmode_emu_switch
  .type repmode_emu_switch, @function
repmode_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size repmode_emu_switch, .-repmode_emu_switch
)");

namespace repmode_emu {
namespace {

constexpr unsigned kWarp = 32, kMaxThreads = 1024;
constexpr size_t kStack = 256 * 1024, kGuard = 4096;

struct Barrier {
  unsigned expected = 0, arrived = 0;
  const char* file = nullptr;  // the __syncthreads all arrivals of a round must share
  int line = 0;
  std::vector<unsigned> waiting;
};

enum class State { ready, waiting, done };

struct Fiber {
  void* sp = nullptr;     // saved stack pointer while suspended
  char* stack = nullptr;  // kGuard bytes of PROT_NONE below kStack usable bytes
  State state = State::ready;
  uint3 tid{};
};

struct Block {
  std::vector<Fiber> fibers;  // stacks kept across launches
  unsigned count = 0;         // threads of the current block
  unsigned current = 0;
  Barrier block_bar;
  std::vector<Barrier> warp_bar;
  std::vector<unsigned char> slots;  // 16 bytes per thread for warp exchange
  void* scheduler = nullptr;         // the scheduler's saved stack pointer
  void (*body)(void*) = nullptr;
  void* ctx = nullptr;
  std::string error;  // first error seen inside the launch
};

Block B;
std::mutex launch_mutex;  // one launch at a time: __shared__ arrays are one copy per kernel
cudaError_t last_error = cudaSuccess;
std::unordered_map<void*, size_t> live_allocations;
std::mutex alloc_mutex;

void note(const std::string& what) {
  if (B.error.empty()) B.error = what;
}

unsigned grid_cap() {
  const char* s = std::getenv("REPMODE_EMU_GRID_CAP");
  const long v = s ? std::strtol(s, nullptr, 10) : 3;
  return v > 0 ? unsigned(v) : 3u;
}

Fiber& me() { return B.fibers[B.current]; }

void release(Barrier& bar) {
  for (unsigned t : bar.waiting) B.fibers[t].state = State::ready;
  bar.waiting.clear();
  bar.arrived = 0;
  bar.file = nullptr;
}

void wait_at(Barrier& bar) {
  if (++bar.arrived == bar.expected) {
    release(bar);
    return;
  }
  bar.waiting.push_back(B.current);
  me().state = State::waiting;
  repmode_emu_switch(&me().sp, B.scheduler);
}

[[noreturn]] void fiber_main() {
  B.body(B.ctx);
  me().state = State::done;
  // An exited thread no longer holds back __syncthreads (as on sm_70+); a warp barrier keeps
  // expecting every lane, so a shuffle some lanes skip by exiting is reported as a deadlock.
  Barrier& bar = B.block_bar;
  --bar.expected;
  if (bar.arrived > 0 && bar.arrived == bar.expected) release(bar);
  repmode_emu_switch(&me().sp, B.scheduler);
  __builtin_unreachable();
}

// A fresh stack whose first switch "returns" into fiber_main with the ABI's alignment.
void* initial_stack(char* top) {
  auto* slot = reinterpret_cast<void**>(reinterpret_cast<uintptr_t>(top) & ~uintptr_t(15)) - 2;
  slot[0] = reinterpret_cast<void*>(&fiber_main);   // popped by ret
  slot[1] = nullptr;                                // fiber_main's (unused) return address
  for (int k = 1; k <= 7; ++k) slot[-k] = nullptr;  // padding and six callee-saved registers
  return slot - 7;
}

void prepare_fibers(unsigned count) {
  while (B.fibers.size() < count) {
    Fiber f;
    void* mem =
        mmap(nullptr, kStack + kGuard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) throw std::runtime_error("emulator: cannot map a fiber stack");
    mprotect(mem, kGuard, PROT_NONE);
    f.stack = static_cast<char*>(mem);
    B.fibers.push_back(f);
  }
}

std::string deadlock_report() {
  unsigned at_block = unsigned(B.block_bar.waiting.size()), at_warp = 0, done = 0;
  for (const Barrier& w : B.warp_bar) at_warp += unsigned(w.waiting.size());
  for (unsigned t = 0; t < B.count; ++t) done += B.fibers[t].state == State::done;
  return "emulator: deadlock in block (" + std::to_string(blockIdx.x) + "," + std::to_string(blockIdx.y) + "," +
         std::to_string(blockIdx.z) + "): " + std::to_string(at_block) + " threads wait at __syncthreads, " +
         std::to_string(at_warp) + " at a warp barrier or shuffle, " + std::to_string(done) + " have exited";
}

void run_block(dim3 block) {
  B.count = block.x * block.y * block.z;
  B.block_bar = Barrier{};
  B.block_bar.expected = B.count;
  B.warp_bar.assign((B.count + kWarp - 1) / kWarp, Barrier{});
  for (unsigned w = 0; w < B.warp_bar.size(); ++w) B.warp_bar[w].expected = std::min(kWarp, B.count - w * kWarp);
  B.slots.assign(size_t(B.count) * 16, 0);
  for (unsigned t = 0; t < B.count; ++t) {
    Fiber& f = B.fibers[t];
    f.state = State::ready;
    f.tid = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
    f.sp = initial_stack(f.stack + kGuard + kStack);
  }
  const bool descending = (blockIdx.x + blockIdx.y + blockIdx.z) % 2 == 1;
  for (;;) {
    bool ran = false, all_done = true;
    for (unsigned k = 0; k < B.count; ++k) {
      const unsigned t = descending ? B.count - 1 - k : k;
      Fiber& f = B.fibers[t];
      if (f.state != State::done) all_done = false;
      if (f.state != State::ready) continue;
      B.current = t;
      threadIdx = f.tid;
      repmode_emu_switch(&B.scheduler, f.sp);
      ran = true;
    }
    if (all_done) return;
    if (!ran) throw std::runtime_error(deadlock_report());
  }
}

}  // namespace

void run_grid(dim3 grid, dim3 block, size_t shared_bytes, void (*body)(void*), void* ctx) {
  const unsigned threads = block.x * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > kMaxThreads || grid.y > 65535 ||
      grid.z > 65535 || shared_bytes > 48 * 1024) {
    last_error = cudaErrorInvalidConfiguration;
    return;
  }
  std::lock_guard<std::mutex> lock(launch_mutex);
  prepare_fibers(threads);
  B.body = body;
  B.ctx = ctx;
  B.error.clear();
  gridDim = dim3(std::min(grid.x, grid_cap()), grid.y, grid.z);  // grid-stride loops cover the rest
  blockDim = block;
  for (unsigned z = 0; z < gridDim.z; ++z)
    for (unsigned y = 0; y < gridDim.y; ++y)
      for (unsigned x = 0; x < gridDim.x; ++x) {
        blockIdx = {x, y, z};
        run_block(block);
        if (!B.error.empty()) throw std::runtime_error(B.error);
      }
}

unsigned lane() { return B.current % kWarp; }

void sync_block(const char* file, int line) {
  Barrier& bar = B.block_bar;
  if (bar.file == nullptr) {
    bar.file = file;
    bar.line = line;
  } else if (bar.line != line || std::string(bar.file) != file) {
    note("emulator: threads of one block meet at different __syncthreads (" + std::string(bar.file) + ":" +
         std::to_string(bar.line) + " and " + file + ":" + std::to_string(line) + ")");
  }
  wait_at(bar);
}

namespace {
void check_mask(unsigned mask) {
  const unsigned w = B.current / kWarp, lanes = B.warp_bar[w].expected;
  const unsigned need = lanes == kWarp ? 0xffffffffu : (1u << lanes) - 1;
  if ((mask & need) != need)
    note("emulator: a warp operation whose mask leaves out lanes (only whole warps are emulated)");
}
}  // namespace

void sync_warp(unsigned mask) {
  check_mask(mask);
  wait_at(B.warp_bar[B.current / kWarp]);
}

void warp_exchange(const void* mine, void* out, size_t bytes, unsigned src, unsigned mask) {
  check_mask(mask);
  const unsigned w = B.current / kWarp, first = w * kWarp;
  Barrier& bar = B.warp_bar[w];
  std::memcpy(&B.slots[size_t(B.current) * 16], mine, bytes);
  wait_at(bar);  // every lane has written its value
  if (src >= kWarp || first + src >= B.count) {
    note("emulator: a shuffle reads lane " + std::to_string(src) + ", which this warp does not have");
    std::memcpy(out, mine, bytes);
  } else {
    std::memcpy(out, &B.slots[size_t(first + src) * 16], bytes);
  }
  wait_at(bar);  // every lane has read before any lane writes again
}

size_t live_allocation_count() {
  std::lock_guard<std::mutex> lock(alloc_mutex);
  return live_allocations.size();
}

}  // namespace repmode_emu

// ---- runtime API -------------------------------------------------------------------------------
using repmode_emu::last_error;

const char* cudaGetErrorName(cudaError_t err) {
  switch (err) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    default:
      return "cudaErrorLaunchFailure";
  }
}
const char* cudaGetErrorString(cudaError_t err) { return err == cudaSuccess ? "no error" : "emulated error"; }

cudaError_t cudaGetLastError() {
  const cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return last_error; }
cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  std::snprintf(prop->name, sizeof(prop->name), "repmode host emulator (not a GPU)");
  return cudaSuccess;
}
cudaError_t cudaStreamGetDevice(cudaStream_t, int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }  // launches finish before returning
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t) {
  void* q = std::malloc(bytes ? bytes : 1);
  if (q == nullptr) return cudaErrorMemoryAllocation;
  std::memset(q, 0x5a, bytes);  // not zero, not NaN: a read of scratch nobody wrote shows in the bits
  std::lock_guard<std::mutex> lock(repmode_emu::alloc_mutex);
  repmode_emu::live_allocations[q] = bytes;
  *p = q;
  return cudaSuccess;
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t) {
  if (p == nullptr) return cudaSuccess;
  std::lock_guard<std::mutex> lock(repmode_emu::alloc_mutex);
  if (repmode_emu::live_allocations.erase(p) == 0) return cudaErrorInvalidValue;
  std::free(p);
  return cudaSuccess;
}
