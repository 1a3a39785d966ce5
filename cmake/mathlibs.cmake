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

# oneMKL's DFTI for the FFT kernels (Note [FFT on oneMKL],
# src/kernels/cpu/fft.cpp), from the `mkl` and `mkl-include` wheels that
# `make venv` installs into the project's Python environment (its prefix has
# include/ and lib/). The wheels ship only versioned libraries, so they are
# linked by path, with the environment's lib/ as RPATH. The GNU OpenMP layer
# (libmkl_gnu_thread) runs MKL's threads on libgomp, the pool our kernels use;
# Intel's libiomp is never loaded. MKL's interface library also exports
# BLAS/LAPACK symbols: it is linked after OpenBLAS, which therefore keeps
# serving matmul and the LAPACK kernels.
set(OAR_MKL_PREFIX "" CACHE PATH "Prefix holding oneMKL's include/mkl_dfti.h and lib/libmkl_core.so.*")
set(_oar_mkl_hints ${OAR_MKL_PREFIX})
if(Python_EXECUTABLE)
  execute_process(COMMAND "${Python_EXECUTABLE}" -c "import sys; print(sys.prefix)"
                  OUTPUT_VARIABLE _oar_py_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  list(APPEND _oar_mkl_hints ${_oar_py_prefix})
endif()
list(APPEND _oar_mkl_hints ${CMAKE_CURRENT_SOURCE_DIR}/.venv)
find_path(OAR_MKL_INCLUDE mkl_dfti.h HINTS ${_oar_mkl_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
set(OAR_MKL_LIBS "")
if(OAR_MKL_INCLUDE)
  get_filename_component(_oar_mkl_root ${OAR_MKL_INCLUDE} DIRECTORY)
  set(OAR_MKL_LIBDIR ${_oar_mkl_root}/lib)
  foreach(_lib mkl_intel_lp64 mkl_gnu_thread mkl_core)
    file(GLOB _found ${OAR_MKL_LIBDIR}/lib${_lib}.so.[0-9]*)
    if(NOT _found)
      set(OAR_MKL_LIBS "")
      break()
    endif()
    list(SORT _found)
    list(GET _found 0 _first)
    list(APPEND OAR_MKL_LIBS ${_first})
  endforeach()
endif()
if(NOT OAR_MKL_LIBS)
  message(FATAL_ERROR "oar: oneMKL not found (the FFT kernels need it). Install it with `make venv` "
                      "(pip install mkl mkl-include into .venv) or set OAR_MKL_PREFIX to a prefix with "
                      "include/mkl_dfti.h and lib/libmkl_core.so.*")
endif()
message(STATUS "oar: oneMKL ${OAR_MKL_LIBS}")
add_library(oar_mkl INTERFACE)
target_include_directories(oar_mkl SYSTEM INTERFACE ${OAR_MKL_INCLUDE})
# (after OpenBLAS: see above)
target_link_libraries(oar_mkl INTERFACE ${OAR_OPENBLAS} ${OAR_MKL_LIBS} OpenMP::OpenMP_CXX)
target_link_libraries(oar_mathlibs INTERFACE oar_mkl)
