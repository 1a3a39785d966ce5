// OAR_HD marks a function callable from host and device code: the scalar
// functions of the elementwise ops are written once and compiled both into
// the CPU loops and, by nvcc, into the CUDA kernels.
#pragma once
#ifdef __CUDACC__
#define OAR_HD __host__ __device__
#else
#define OAR_HD
#endif
