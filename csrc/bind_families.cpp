// The kernel families whose bindings live in their own csrc/bind_<family>.cpp file. Each such
// file defines one `void bind_<family>(pybind11::module_&)`; add it here.
#include "bind_util.h"

namespace repmode::bind {

void bind_batch_norm(pybind11::module_& m);
void bind_convolution(pybind11::module_& m);
void bind_layer_norm(pybind11::module_& m);
void bind_pooling(pybind11::module_& m);
void bind_recurrent(pybind11::module_& m);

void bind_families(pybind11::module_& m) {
  bind_batch_norm(m);
  bind_convolution(m);
  bind_layer_norm(m);
  bind_pooling(m);
  bind_recurrent(m);
}

}  // namespace repmode::bind
