//===- CudaDriver.h - the CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The cuda device calls the few CUDA driver functions listed below. They
// are declared here, not taken from cuda.h, and resolved with dlopen/dlsym
// when a device is created: building needs no CUDA toolkit, nothing links
// against libcuda, and a machine without the driver gets a clear
// "unavailable" error instead of a loader failure.
//
// The library is libcuda.so.1, or the file the environment variable
// LCC_CUDA_DRIVER names (the tests point it at a fake driver). Where the
// driver exports versioned symbols, the table names the version cuda.h
// binds to (cuMemAlloc is cuMemAlloc_v2).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_CUDADRIVER_H
#define LCC_RUNTIME_CUDADRIVER_H

#include "support/Status.h"

#include <cstddef>
#include <memory>
#include <string>

namespace lcc::runtime::cuda {

// The driver's types and constants, with cuda.h's names and values.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

enum : CUresult {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
};

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum CUjit_option : int {
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

/// Each function the cuda device uses: the member name, the symbol (or the
/// first of two to try), the parameters.
#define LCC_CUDA_DRIVER_FUNCTIONS(X)                                           \
  X(cuInit, "cuInit", nullptr, (unsigned int flags))                           \
  X(cuGetErrorName, "cuGetErrorName", nullptr,                                 \
    (CUresult error, const char **name))                                       \
  X(cuGetErrorString, "cuGetErrorString", nullptr,                             \
    (CUresult error, const char **text))                                       \
  X(cuDeviceGet, "cuDeviceGet", nullptr, (CUdevice * device, int ordinal))     \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", nullptr,                     \
    (int *value, CUdevice_attribute attribute, CUdevice device))               \
  X(cuDeviceGetName, "cuDeviceGetName", nullptr,                               \
    (char *name, int length, CUdevice device))                                 \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", nullptr,                          \
    (size_t * bytes, CUdevice device))                                         \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", nullptr,             \
    (CUcontext * context, CUdevice device))                                    \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", nullptr,        \
    (CUdevice device))                                                         \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", nullptr, (CUcontext context))     \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", nullptr, (CUcontext * context))     \
  X(cuMemAlloc, "cuMemAlloc_v2", nullptr,                                      \
    (CUdeviceptr * address, size_t size))                                      \
  X(cuMemFree, "cuMemFree_v2", nullptr, (CUdeviceptr address))                 \
  X(cuMemsetD8, "cuMemsetD8_v2", nullptr,                                      \
    (CUdeviceptr address, unsigned char value, size_t count))                  \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", nullptr,                                  \
    (CUdeviceptr target, const void *source, size_t size))                     \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", nullptr,                                  \
    (void *target, CUdeviceptr source, size_t size))                           \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", nullptr,                        \
    (CUdeviceptr target, CUdeviceptr source, size_t size, CUstream stream))    \
  X(cuStreamCreate, "cuStreamCreate", nullptr,                                 \
    (CUstream * stream, unsigned int flags))                                   \
  X(cuStreamDestroy, "cuStreamDestroy_v2", nullptr, (CUstream stream))         \
  X(cuStreamSynchronize, "cuStreamSynchronize", nullptr, (CUstream stream))    \
  X(cuEventCreate, "cuEventCreate", nullptr,                                   \
    (CUevent * event, unsigned int flags))                                     \
  X(cuEventDestroy, "cuEventDestroy_v2", nullptr, (CUevent event))             \
  X(cuEventRecord, "cuEventRecord", nullptr, (CUevent event, CUstream stream)) \
  X(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime",         \
    (float *milliseconds, CUevent start, CUevent end))                         \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", nullptr,                         \
    (CUmodule * module, const void *image, unsigned int optionCount,           \
     CUjit_option *options, void **optionValues))                              \
  X(cuModuleUnload, "cuModuleUnload", nullptr, (CUmodule module))              \
  X(cuModuleGetFunction, "cuModuleGetFunction", nullptr,                       \
    (CUfunction * function, CUmodule module, const char *name))                \
  X(cuModuleGetGlobal, "cuModuleGetGlobal_v2", nullptr,                        \
    (CUdeviceptr * address, size_t * size, CUmodule module, const char *name)) \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", nullptr,                         \
    (CUfunction function, CUfunction_attribute attribute, int value))          \
  X(cuLaunchKernel, "cuLaunchKernel", nullptr,                                 \
    (CUfunction function, unsigned int gridX, unsigned int gridY,              \
     unsigned int gridZ, unsigned int blockX, unsigned int blockY,             \
     unsigned int blockZ, unsigned int sharedMemoryBytes, CUstream stream,     \
     void **parameters, void **extra))

/// The driver library and its functions. Loaded once per device; never
/// unloaded, since the driver keeps threads of its own running.
class CudaDriver {
public:
  /// Loads the library and resolves every function. Errors start with
  /// "cuda device unavailable: " and say what to do.
  static StatusOr<std::shared_ptr<const CudaDriver>> load();
  /// The CUDA emulator's entry points (CudaEmulator.h): kernels of
  /// CudaEmulator executables run on the CPU.
  static std::shared_ptr<const CudaDriver> emulator();
  bool isEmulator() const { return emulated; }

  /// Where the library came from: "libcuda.so.1", LCC_CUDA_DRIVER or "the
  /// CUDA emulator".
  const std::string &getPath() const { return path; }

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", from the driver's names.
  std::string describe(CUresult result) const;
  /// Success when `result` is, else "`prefix`: `what` failed: describe()"
  /// with a status code that fits the error.
  Status check(CUresult result, const std::string &what,
               const char *prefix = "cuda device") const;

#define LCC_CUDA_DECLARE(name, symbol, fallback, parameters)                   \
  CUresult(*name) parameters = nullptr;
  LCC_CUDA_DRIVER_FUNCTIONS(LCC_CUDA_DECLARE)
#undef LCC_CUDA_DECLARE

private:
  CudaDriver() = default;
  std::string path;
  bool emulated = false;
};

} // namespace lcc::runtime::cuda

#endif // LCC_RUNTIME_CUDADRIVER_H
