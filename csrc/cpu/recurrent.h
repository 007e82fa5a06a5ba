// LSTM cell steps on the CPU (formulas: csrc/common/recurrent.h). Threads split the batch
// rows; each output element is computed by the same per-element sequence.
#pragma once

#include <cstdint>

namespace repmode::cpu {

// One forward step over B rows: a (row stride a_rs) and r (row stride r_rs) hold the 4H gate
// pre-activations, c_prev (row stride c_rs) the previous cell. Writes ws (B x 6H, rows
// [i|f|g|o|c|tanh c]) and h (B x H, contiguous).
template <typename T>
void lstm_forward_step(int64_t B, int64_t H, const T* a, int64_t a_rs, const T* r, int64_t r_rs, const T* c_prev,
                       int64_t c_rs, T* ws, T* h, int nthreads);

// One backward step: go (grad_output[t], strides go_rs/go_cs; null: none), dh (B x H
// contiguous; null: none), dc (B x H contiguous; null: none), ws as written by the forward,
// c_prev (row stride c_rs). Writes dgates (B x 4H contiguous) and dc_out (B x H contiguous).
template <typename T>
void lstm_backward_step(int64_t B, int64_t H, const T* go, int64_t go_rs, int64_t go_cs, const T* dh, const T* dc,
                        const T* ws, const T* c_prev, int64_t c_rs, T* dgates, T* dc_out, int nthreads);

}  // namespace repmode::cpu
