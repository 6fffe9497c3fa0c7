#pragma once
// SLATERLAB_HOST_DEVICE marks a function that nvcc compiles for both the host
// and the device (__host__ __device__); a plain C++ compiler sees an ordinary
// inline function. The CUDA kernels' per-thread arithmetic is written this
// way so that tests run the same code on the CPU, where there is no GPU.

#if defined(__CUDACC__)
#define SLATERLAB_HOST_DEVICE __host__ __device__
#else
#define SLATERLAB_HOST_DEVICE
#endif
