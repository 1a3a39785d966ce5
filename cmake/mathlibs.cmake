# Math libraries. BLAS for matmul. Prefer the OpenMP build of OpenBLAS so that it shares one
# thread pool (libgomp) with our own kernels.
add_library(oar_mathlibs INTERFACE)
find_path(OAR_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas REQUIRED)
find_library(OAR_OPENBLAS NAMES openblas.so.0 libopenblas.so.0 openblas
  PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp /usr/lib/aarch64-linux-gnu/openblas-openmp
  NO_DEFAULT_PATH)
if(NOT OAR_OPENBLAS)
  find_library(OAR_OPENBLAS NAMES openblas REQUIRED)
endif()
message(STATUS "oar: BLAS ${OAR_OPENBLAS}")
target_include_directories(oar_mathlibs INTERFACE ${OAR_CBLAS_INCLUDE})
target_link_libraries(oar_mathlibs INTERFACE ${OAR_OPENBLAS})

# oneDNN: matmul (bf16/f16 natively, AMX where present), convolution, pooling,
# normalisation. SLEEF: vectorised transcendental functions for the
# elementwise kernels.
find_path(OAR_DNNL_INCLUDE dnnl.hpp REQUIRED)
find_library(OAR_DNNL NAMES dnnl REQUIRED)
find_path(OAR_SLEEF_INCLUDE sleef.h REQUIRED)
find_library(OAR_SLEEF NAMES sleef REQUIRED)
target_include_directories(oar_mathlibs INTERFACE ${OAR_DNNL_INCLUDE} ${OAR_SLEEF_INCLUDE})
target_link_libraries(oar_mathlibs INTERFACE ${OAR_DNNL} ${OAR_SLEEF})
