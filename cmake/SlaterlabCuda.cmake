# SLATERLAB_CUDA = AUTO (default) | ON | OFF: whether the CUDA strategies and
# orbital sets are built. AUTO builds them when check_language(CUDA) finds
# nvcc (also at /usr/local/cuda/bin when it is not on PATH); ON fails here
# when it does not; OFF builds the CPU code only. Sets SLATERLAB_HAVE_CUDA.
include(SlaterlabOptions)
slaterlab_auto_option(SLATERLAB_CUDA "Build the CUDA code")
set(_slaterlab_cuda ${SLATERLAB_CUDA_MODE})

set(SLATERLAB_HAVE_CUDA OFF)
if(NOT _slaterlab_cuda STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # sm_90 (H100, H200) as machine code, plus compute_90 PTX so that a later
    # GPU JIT-compiles it: one architecture keeps the compile short.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CMAKE_CUDA_STANDARD 17)  # the kernels need no more (CMake 3.25 knows no CUDA20 for nvcc 13)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(SLATERLAB_HAVE_CUDA ON)
    message(STATUS "slaterlab: CUDA ${CMAKE_CUDA_COMPILER_VERSION} found, building the CUDA code "
                   "for architectures ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(_slaterlab_cuda STREQUAL "ON")
    message(FATAL_ERROR "SLATERLAB_CUDA=ON, but no CUDA compiler (nvcc) was found: install the "
                        "CUDA Toolkit, put nvcc on PATH or set CUDACXX, or configure with "
                        "-DSLATERLAB_CUDA=OFF (or AUTO)")
  else()
    message(STATUS "slaterlab: no CUDA compiler found, building without CUDA")
  endif()
endif()
