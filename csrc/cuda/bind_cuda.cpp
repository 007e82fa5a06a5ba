// repmode._C_cuda: the Python binding of the CUDA kernels. Every function has the signature of
// its CPU twin in repmode._C with the CPU's thread count replaced by the CUDA stream (an
// integer handle), so a kernel family calls either module the same way (repmode/_ext.py,
// repmode/kernels/_common.py: `kernels_for`, `launch_arg`). Built only by the CUDA build switch
// (setup.py, REPMODE_CUDA); plain C++, compiled by the host compiler.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "launchers.h"

namespace py = pybind11;
namespace rc = repmode::cuda;

PYBIND11_MODULE(_C_cuda, m) {
  m.doc() = "repmode's reproducible CUDA kernels (same bits as repmode._C; docs/cuda.md)";
  const auto nogil = py::call_guard<py::gil_scoped_release>();

  m.def("device_count", &rc::device_count);
  m.def("device_name", &rc::device_name);
  m.def("synchronize", &rc::synchronize, nogil);

  m.def("elementwise", &rc::elementwise, nogil);
  m.def("elementwise_flat", &rc::elementwise_flat, nogil);
  m.def("random_fill", &rc::random_fill, nogil);
  m.def("random_ints", &rc::random_ints, nogil);
  m.def("cumulative", &rc::cumulative, nogil);

  m.def("sum_rows", &rc::sum_rows, nogil);
  m.def("var_mean_rows", &rc::var_mean_rows, nogil);
  m.def("prod_rows", &rc::prod_rows, nogil);
  m.def("extreme_rows", &rc::extreme_rows, nogil);
  m.def("logsumexp_rows", &rc::logsumexp_rows, nogil);
  m.def("norm_rows", &rc::norm_rows, nogil);
  m.def("softmax", &rc::softmax, nogil);
  m.def("softmax_backward", &rc::softmax_backward, nogil);
  m.def("log_softmax", &rc::log_softmax, nogil);
  m.def("log_softmax_backward", &rc::log_softmax_backward, nogil);
  m.def("nll_loss_forward", &rc::nll_loss_forward, nogil);
  m.def("nll_loss_backward", &rc::nll_loss_backward, nogil);

  m.def("gemm", &rc::gemm, nogil);

  m.def("conv_forward", &rc::conv_forward, nogil);
  m.def("conv_grad_input", &rc::conv_grad_input, nogil);
  m.def("conv_grad_weight", &rc::conv_grad_weight, nogil);
  m.def("pool_forward", &rc::pool_forward, nogil);
  m.def("pool_backward", &rc::pool_backward, nogil);

  m.def("layer_norm_forward", &rc::layer_norm_forward, nogil);
  m.def("layer_norm_backward", &rc::layer_norm_backward, nogil);
  m.def("batch_norm_forward", &rc::batch_norm_forward, nogil);
  m.def("batch_norm_backward", &rc::batch_norm_backward, nogil);
  m.def("group_norm_forward", &rc::group_norm_forward, nogil);
  m.def("group_norm_backward", &rc::group_norm_backward, nogil);
  m.def("lstm_forward_step", &rc::lstm_forward_step, nogil);
  m.def("lstm_backward_step", &rc::lstm_backward_step, nogil);
}
