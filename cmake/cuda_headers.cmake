# KERNC_CUDA_INCLUDE_DIRS: where cuda.h and nvrtc.h are, the only part of the CUDA toolkit
# the library needs to build (NOTE [ vendor libraries ] in the top CMakeLists.txt). No
# toolkit library, nvcc or CUDA language support: a subproject build must work with the
# two headers alone (tests/consumer/run.sh builds one that way).
# Searched in KERNC_CUDA_INCLUDE_DIR (a cache variable naming the directory), CUDAToolkit_ROOT,
# $CUDA_HOME, $CUDA_PATH, a toolkit found by find_package(CUDAToolkit) before this file,
# /usr/local/cuda, then the system's include directories (and <prefix>/include of each
# directory on PATH, so nvcc on the PATH finds its toolkit).
set(kernc_cuda_hints ${CUDAToolkit_ROOT} $ENV{CUDAToolkit_ROOT} $ENV{CUDA_HOME} $ENV{CUDA_PATH})
list(TRANSFORM kernc_cuda_hints APPEND /include)
find_path(KERNC_CUDA_H_DIR cuda.h
  HINTS ${KERNC_CUDA_INCLUDE_DIR} ${kernc_cuda_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATHS /usr/local/cuda/include
  DOC "The directory holding the CUDA driver API header cuda.h")
find_path(KERNC_NVRTC_H_DIR nvrtc.h
  HINTS ${KERNC_CUDA_INCLUDE_DIR} ${KERNC_CUDA_H_DIR} ${kernc_cuda_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATHS /usr/local/cuda/include
  DOC "The directory holding NVRTC's header nvrtc.h")
if(NOT KERNC_CUDA_H_DIR OR NOT KERNC_NVRTC_H_DIR)
  set(kernc_cuda_missing "")
  if(NOT KERNC_CUDA_H_DIR)
    list(APPEND kernc_cuda_missing cuda.h)
  endif()
  if(NOT KERNC_NVRTC_H_DIR)
    list(APPEND kernc_cuda_missing nvrtc.h)
  endif()
  string(REPLACE ";" " and " kernc_cuda_missing "${kernc_cuda_missing}")
  message(FATAL_ERROR "kernc: ${kernc_cuda_missing} not found. kernc needs two headers of the CUDA toolkit to "
    "build, cuda.h and nvrtc.h, and nothing else from it: NVRTC and the driver are loaded at run time. "
    "Point KERNC_CUDA_INCLUDE_DIR (or CUDAToolkit_ROOT, or the environment's CUDA_HOME) at a directory holding "
    "them, or install them: NVIDIA's cuda-driver-dev-X-Y and cuda-nvrtc-dev-X-Y packages, or a whole toolkit.")
endif()
set(KERNC_CUDA_INCLUDE_DIRS ${KERNC_CUDA_H_DIR} ${KERNC_NVRTC_H_DIR})
list(REMOVE_DUPLICATES KERNC_CUDA_INCLUDE_DIRS)
message(STATUS "kernc: CUDA headers (cuda.h, nvrtc.h) in ${KERNC_CUDA_INCLUDE_DIRS}")
