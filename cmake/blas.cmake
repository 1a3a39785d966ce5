# BLAS for matmul. Prefer the OpenMP build of OpenBLAS so that it shares one
# thread pool (libgomp) with our own kernels.
add_library(oar_blas INTERFACE)
find_path(OAR_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas REQUIRED)
find_library(OAR_OPENBLAS NAMES openblas.so.0 libopenblas.so.0 openblas
  PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp /usr/lib/aarch64-linux-gnu/openblas-openmp
  NO_DEFAULT_PATH)
if(NOT OAR_OPENBLAS)
  find_library(OAR_OPENBLAS NAMES openblas REQUIRED)
endif()
message(STATUS "oar: BLAS ${OAR_OPENBLAS}")
target_include_directories(oar_blas INTERFACE ${OAR_CBLAS_INCLUDE})
target_link_libraries(oar_blas INTERFACE ${OAR_OPENBLAS})
