//===- CudaDriver.cpp - the CUDA driver API, loaded at run time -----------===//

#include "devices/cuda/CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>

namespace lcc::runtime::cuda {
namespace {

constexpr const char *kDefaultLibrary = "libcuda.so.1";

template <typename... Parts> Status unavailable(const Parts &...parts) {
  return Status::error(StatusCode::Unavailable,
                       "cuda device unavailable: ", parts...);
}

/// The status code of a failed driver call, for callers that branch on it.
StatusCode codeFor(CUresult result) {
  switch (result) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    return StatusCode::ResourceExhausted;
  case CUDA_ERROR_STUB_LIBRARY:
  case CUDA_ERROR_INSUFFICIENT_DRIVER:
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
  case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    return StatusCode::Unavailable;
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_NOT_FOUND:
    return StatusCode::InvalidModule;
  default:
    return StatusCode::Internal;
  }
}

} // namespace

StatusOr<std::shared_ptr<const CudaDriver>> CudaDriver::load() {
  const char *chosen = std::getenv("LCC_CUDA_DRIVER");
  bool overridden = chosen && *chosen;
  std::shared_ptr<CudaDriver> driver(new CudaDriver());
  driver->path = overridden ? chosen : kDefaultLibrary;

  ::dlerror();
  void *handle = ::dlopen(driver->path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = ::dlerror();
    std::string why = reason ? reason : "unknown dlopen error";
    if (overridden)
      return unavailable("cannot load ", driver->path,
                         ", named by LCC_CUDA_DRIVER (", why, ")");
    return unavailable("cannot load ", kDefaultLibrary, " (", why,
                       "): is the NVIDIA driver installed?");
  }
  // The handle is never closed: see the class comment.
  auto resolve = [&](const char *symbol, const char *fallback) -> void * {
    void *address = ::dlsym(handle, symbol);
    if (!address && fallback)
      address = ::dlsym(handle, fallback);
    return address;
  };
#define LCC_CUDA_RESOLVE(name, symbol, fallback, parameters)                   \
  driver->name =                                                               \
      reinterpret_cast<decltype(driver->name)>(resolve(symbol, fallback));     \
  if (!driver->name)                                                           \
    return unavailable(driver->path, " has no function ", symbol,              \
                       ": not an NVIDIA driver, or one too old");
  LCC_CUDA_DRIVER_FUNCTIONS(LCC_CUDA_RESOLVE)
#undef LCC_CUDA_RESOLVE
  return std::shared_ptr<const CudaDriver>(std::move(driver));
}

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr;
  const char *text = nullptr;
  // The driver answers CUDA_ERROR_INVALID_VALUE for codes it does not know.
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    return "CUresult " + std::to_string(result) + " (unknown to the driver)";
  if (cuGetErrorString(result, &text) != CUDA_SUCCESS || !text)
    return name;
  return std::string(name) + " (" + text + ")";
}

Status CudaDriver::check(CUresult result, const std::string &what,
                         const char *prefix) const {
  if (result == CUDA_SUCCESS)
    return Status();
  return Status::error(codeFor(result), prefix, ": ", what,
                       " failed: ", describe(result));
}

} // namespace lcc::runtime::cuda
