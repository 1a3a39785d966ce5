// Registration of CUDA kernels: the CPU's dtype lists (kernels/cpu/
// dtype_lists.h) are reused, and register_real leaves out the complex dtypes
// that a kernel does not handle on the device yet.
#pragma once
#include <initializer_list>

#include "ops/op.h"

namespace oar::cuda {

// Registers fn for `op` on CUDA for each dtype of the list; returns true so
// that a namespace-scope `const bool` can hold the registration.
bool register_all(const char* op, KernelFn fn, std::initializer_list<DType> dtypes);
// The same for the non-complex dtypes of the list.
bool register_real(const char* op, KernelFn fn, std::initializer_list<DType> dtypes);

}  // namespace oar::cuda
