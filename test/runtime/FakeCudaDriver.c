/*===- FakeCudaDriver.c - a CUDA driver stand-in for the runtime tests ----===*\
 *
 * Exports the driver functions of runtime/src/devices/cuda/CudaDriver.h under their
 * libcuda.so.1 names, so that with LCC_CUDA_DRIVER pointing here the cuda
 * device runs on machines without a GPU: device memory is host memory, a
 * kernel is the function of kernels.c with its name, called once per block
 * with the pointers of its parameters, and events read the host clock.
 *
 * It refuses what a real driver would refuse or leave undefined, so that
 * the tests catch mistakes a GPU would show: calls without a current
 * context, device pointers outside live allocations, overlapping copies,
 * more than 48 KiB of dynamic shared memory without the attribute. Fresh
 * memory is filled with 0xcd, not zeros. The last launch and the objects
 * alive are readable through lccFakeCuda* functions.
 *
 * Environment, read at each call:
 *   LCC_FAKE_CUDA_FAIL=cuInit:100,...   these functions return that CUresult
 *   LCC_FAKE_CUDA_ARCH=86               compute capability 8.6 (default 9.0)
 *   LCC_FAKE_CUDA_MEMORY=N              bytes of device memory (default 1 GiB)
 * A PTX image containing ".error" fails to compile, with an error log.
 *
 * Built twice: as libfake-cuda.so, and without cuLaunchKernel
 * (LCC_FAKE_CUDA_WITHOUT_LAUNCH) to stand for a driver that lacks a symbol.
 *
\*===----------------------------------------------------------------------===*/

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUstream;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
};

/* The kernels of kernels.c, with the host entry ABI of lcm.fbs. */
typedef void (*HostKernel)(void *const *, int64_t, int64_t, int64_t);
void vector_add(void *const *, int64_t, int64_t, int64_t);
void matmul(void *const *, int64_t, int64_t, int64_t);
void scale2(void *const *, int64_t, int64_t, int64_t);
void add_bias(void *const *, int64_t, int64_t, int64_t);
void grid_ids(void *const *, int64_t, int64_t, int64_t);
void count_visits(void *const *, int64_t, int64_t, int64_t);
void mse_loss(void *const *, int64_t, int64_t, int64_t);
void mse_gradients(void *const *, int64_t, int64_t, int64_t);
void mse_train_step(void *const *, int64_t, int64_t, int64_t);

typedef struct Function {
  const char *name;
  HostKernel run;
  int bindingCount;
  int maxDynamicSharedBytes; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE */
} Function;
typedef Function *CUfunction;

static Function functions[] = {
    {"vector_add", vector_add, 3, 0},
    {"matmul", matmul, 3, 0},
    {"scale2", scale2, 2, 0},
    {"add_bias", add_bias, 3, 0},
    {"grid_ids", grid_ids, 1, 0},
    {"count_visits", count_visits, 1, 0},
    {"mse_loss", mse_loss, 4, 0},
    {"mse_train_step", mse_train_step, 5, 0},
    {"mse_gradients", mse_gradients, 5, 0},
};
enum { FUNCTION_COUNT = sizeof(functions) / sizeof(functions[0]) };

typedef struct Event {
  double seconds;
  int recorded;
} Event;
typedef Event *CUevent;

/* What the tests read back; the same layout is declared in
 * CudaDeviceTest.cpp. */
typedef struct LccFakeCudaLaunch {
  char kernel[32];
  unsigned grid[3], block[3], sharedMemoryBytes;
  int parameterCount;
} LccFakeCudaLaunch;

typedef struct LccFakeCudaState {
  size_t allocatedBytes;
  int allocations, modules, events, streams, contextRetains, contextDepth;
  int launches;
  int jitOptionCount; /* of the last cuModuleLoadDataEx */
  char lastImage[8];  /* "ptx" or "cubin" */
} LccFakeCudaState;

static int initialized;
static int contextToken, streamToken;

/* The current context's depth, per thread as CUDA's is: in a pthread key,
 * not __thread, whose dynamic TLS in a library loaded with dlopen
 * LeakSanitizer can misread at exit (a crash of the leak check, not a
 * leak). */
static pthread_key_t contextDepthKey;
static pthread_once_t contextDepthOnce = PTHREAD_ONCE_INIT;

static void makeContextDepthKey(void) {
  pthread_key_create(&contextDepthKey, NULL);
}

static int getContextDepth(void) {
  pthread_once(&contextDepthOnce, makeContextDepthKey);
  return (int)(intptr_t)pthread_getspecific(contextDepthKey);
}

static void setContextDepth(int depth) {
  pthread_once(&contextDepthOnce, makeContextDepthKey);
  pthread_setspecific(contextDepthKey, (void *)(intptr_t)depth);
}
static LccFakeCudaState state;
static LccFakeCudaLaunch lastLaunch;

typedef struct Allocation {
  char *base;
  size_t size;
} Allocation;
static Allocation allocations[4096];

/* The CUresult LCC_FAKE_CUDA_FAIL asks `name` to return, else 0. */
static CUresult injected(const char *name) {
  const char *spec = getenv("LCC_FAKE_CUDA_FAIL");
  size_t length = strlen(name);
  for (const char *at = spec; at && (at = strstr(at, name)); at += length)
    if ((at == spec || at[-1] == ',') && at[length] == ':')
      return atoi(at + length + 1);
  return CUDA_SUCCESS;
}

#define ENTER(name)                                                            \
  do {                                                                         \
    CUresult injected_ = injected(name);                                       \
    if (injected_)                                                             \
      return injected_;                                                        \
    if (!initialized)                                                          \
      return CUDA_ERROR_NOT_INITIALIZED;                                       \
  } while (0)

/* Memory, modules, streams and events need a current context. */
#define ENTER_WITH_CONTEXT(name)                                               \
  do {                                                                         \
    ENTER(name);                                                               \
    if (getContextDepth() == 0)                                                \
      return CUDA_ERROR_INVALID_CONTEXT;                                       \
  } while (0)

static int architecture(void) {
  const char *value = getenv("LCC_FAKE_CUDA_ARCH");
  return value && *value ? atoi(value) : 90;
}

static size_t memoryLimit(void) {
  const char *value = getenv("LCC_FAKE_CUDA_MEMORY");
  return value && *value ? (size_t)strtoull(value, NULL, 10) : (size_t)1 << 30;
}

/* Whether [address, address + size) lies inside one live allocation. */
static int isDeviceRange(CUdeviceptr address, size_t size) {
  char *bytes = (char *)(uintptr_t)address;
  for (int i = 0; i < state.allocations; ++i)
    if (bytes >= allocations[i].base && size <= allocations[i].size &&
        (size_t)(bytes - allocations[i].base) <= allocations[i].size - size)
      return 1;
  return 0;
}

static double now(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

/*===----------------------------------------------------------------------===*
 * Errors, initialisation, the device
 *===----------------------------------------------------------------------===*/

static const struct {
  CUresult code;
  const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
};

/* As the real driver: unknown codes are an error and leave *text NULL. */
CUresult cuGetErrorName(CUresult error, const char **text) {
  *text = NULL;
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); ++i)
    if (errors[i].code == error) {
      *text = errors[i].name;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  *text = NULL;
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); ++i)
    if (errors[i].code == error) {
      *text = errors[i].text;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuInit(unsigned int flags) {
  CUresult failure = injected("cuInit");
  if (failure)
    return failure;
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  initialized = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  ENTER("cuDeviceGet");
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
  ENTER("cuDeviceGetAttribute");
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
  case 1: /* MAX_THREADS_PER_BLOCK */
  case 2: /* MAX_BLOCK_DIM_X */
  case 3: /* MAX_BLOCK_DIM_Y */
    *value = 1024;
    return CUDA_SUCCESS;
  case 4: /* MAX_BLOCK_DIM_Z */
    *value = 64;
    return CUDA_SUCCESS;
  case 5: /* MAX_GRID_DIM_X */
    *value = 2147483647;
    return CUDA_SUCCESS;
  case 6: /* MAX_GRID_DIM_Y */
  case 7: /* MAX_GRID_DIM_Z */
    *value = 65535;
    return CUDA_SUCCESS;
  case 75: /* COMPUTE_CAPABILITY_MAJOR */
    *value = architecture() / 10;
    return CUDA_SUCCESS;
  case 76: /* COMPUTE_CAPABILITY_MINOR */
    *value = architecture() % 10;
    return CUDA_SUCCESS;
  case 97: /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, an H100's 227 KiB */
    *value = 232448;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  ENTER("cuDeviceGetName");
  if (device != 0 || length <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  snprintf(name, (size_t)length, "%s", "Fake CUDA Device");
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
  ENTER("cuDeviceTotalMem_v2");
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *bytes = memoryLimit();
  return CUDA_SUCCESS;
}

/*===----------------------------------------------------------------------===*
 * Contexts
 *===----------------------------------------------------------------------===*/

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  ENTER("cuDevicePrimaryCtxRetain");
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *context = &contextToken;
  ++state.contextRetains;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  ENTER("cuDevicePrimaryCtxRelease_v2");
  if (device != 0 || state.contextRetains == 0)
    return CUDA_ERROR_INVALID_VALUE;
  --state.contextRetains;
  return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext context) {
  ENTER("cuCtxPushCurrent_v2");
  if (context != &contextToken || state.contextRetains == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  setContextDepth(getContextDepth() + 1);
  return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *context) {
  ENTER("cuCtxPopCurrent_v2");
  if (getContextDepth() == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  setContextDepth(getContextDepth() - 1);
  if (context)
    *context = &contextToken;
  return CUDA_SUCCESS;
}

/*===----------------------------------------------------------------------===*
 * Memory
 *===----------------------------------------------------------------------===*/

CUresult cuMemAlloc_v2(CUdeviceptr *address, size_t size) {
  ENTER_WITH_CONTEXT("cuMemAlloc_v2");
  if (size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (size > memoryLimit() - state.allocatedBytes ||
      state.allocations == (int)(sizeof(allocations) / sizeof(allocations[0])))
    return CUDA_ERROR_OUT_OF_MEMORY;
  size_t rounded = (size + 255) / 256 * 256;
  char *bytes = aligned_alloc(256, rounded);
  if (!bytes)
    return CUDA_ERROR_OUT_OF_MEMORY;
  memset(bytes, 0xcd, rounded);
  allocations[state.allocations].base = bytes;
  allocations[state.allocations].size = size;
  ++state.allocations;
  state.allocatedBytes += size;
  *address = (CUdeviceptr)(uintptr_t)bytes;
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr address) {
  ENTER_WITH_CONTEXT("cuMemFree_v2");
  char *bytes = (char *)(uintptr_t)address;
  for (int i = 0; i < state.allocations; ++i) {
    if (allocations[i].base != bytes)
      continue;
    state.allocatedBytes -= allocations[i].size;
    free(bytes);
    allocations[i] = allocations[--state.allocations];
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemsetD8_v2(CUdeviceptr address, unsigned char value, size_t size) {
  ENTER_WITH_CONTEXT("cuMemsetD8_v2");
  if (!isDeviceRange(address, size))
    return CUDA_ERROR_INVALID_VALUE;
  memset((void *)(uintptr_t)address, value, size);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr target, const void *source, size_t size) {
  ENTER_WITH_CONTEXT("cuMemcpyHtoD_v2");
  if (!isDeviceRange(target, size))
    return CUDA_ERROR_INVALID_VALUE;
  memcpy((void *)(uintptr_t)target, source, size);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *target, CUdeviceptr source, size_t size) {
  ENTER_WITH_CONTEXT("cuMemcpyDtoH_v2");
  if (!isDeviceRange(source, size))
    return CUDA_ERROR_INVALID_VALUE;
  memcpy(target, (const void *)(uintptr_t)source, size);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr target, CUdeviceptr source,
                              size_t size, CUstream stream) {
  ENTER_WITH_CONTEXT("cuMemcpyDtoDAsync_v2");
  if (stream != &streamToken)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!isDeviceRange(target, size) || !isDeviceRange(source, size))
    return CUDA_ERROR_INVALID_VALUE;
  /* Overlapping ranges are undefined on a GPU: refuse them. */
  if (size > 0 && target < source + size && source < target + size)
    return CUDA_ERROR_INVALID_VALUE;
  memcpy((void *)(uintptr_t)target, (const void *)(uintptr_t)source, size);
  return CUDA_SUCCESS;
}

/*===----------------------------------------------------------------------===*
 * Streams and events
 *===----------------------------------------------------------------------===*/

CUresult cuStreamCreate(CUstream *stream, unsigned int flags) {
  ENTER_WITH_CONTEXT("cuStreamCreate");
  (void)flags;
  *stream = &streamToken;
  ++state.streams;
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream stream) {
  ENTER_WITH_CONTEXT("cuStreamDestroy_v2");
  if (stream != &streamToken || state.streams == 0)
    return CUDA_ERROR_INVALID_HANDLE;
  --state.streams;
  return CUDA_SUCCESS;
}

/* Everything ran when it was issued. */
CUresult cuStreamSynchronize(CUstream stream) {
  ENTER_WITH_CONTEXT("cuStreamSynchronize");
  return stream == &streamToken ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuEventCreate(CUevent *event, unsigned int flags) {
  ENTER_WITH_CONTEXT("cuEventCreate");
  (void)flags;
  *event = calloc(1, sizeof(Event));
  if (!*event)
    return CUDA_ERROR_OUT_OF_MEMORY;
  ++state.events;
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent event) {
  ENTER_WITH_CONTEXT("cuEventDestroy_v2");
  free(event);
  --state.events;
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  ENTER_WITH_CONTEXT("cuEventRecord");
  if (stream != &streamToken)
    return CUDA_ERROR_INVALID_HANDLE;
  event->seconds = now();
  event->recorded = 1;
  return CUDA_SUCCESS;
}

/* The name cuda.h 13 binds cuEventElapsedTime to. */
CUresult cuEventElapsedTime_v2(float *milliseconds, CUevent start,
                               CUevent end) {
  ENTER_WITH_CONTEXT("cuEventElapsedTime_v2");
  if (!start->recorded || !end->recorded)
    return CUDA_ERROR_NOT_READY;
  *milliseconds = (float)((end->seconds - start->seconds) * 1e3);
  return CUDA_SUCCESS;
}

/*===----------------------------------------------------------------------===*
 * Modules and kernels
 *===----------------------------------------------------------------------===*/

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned int optionCount, int *options,
                            void **values) {
  ENTER_WITH_CONTEXT("cuModuleLoadDataEx");
  const char *text = image;
  static const char elf[] = {0x7f, 'E', 'L', 'F'};
  int cubin = memcmp(text, elf, sizeof(elf)) == 0;
  snprintf(state.lastImage, sizeof(state.lastImage), "%s",
           cubin ? "cubin" : "ptx");
  state.jitOptionCount = (int)optionCount;
  if (!cubin && strstr(text, ".error")) {
    /* Write the log where CU_JIT_ERROR_LOG_BUFFER (5) says, within
     * CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES (6). */
    char *log = NULL;
    size_t size = 0;
    for (unsigned int i = 0; i < optionCount; ++i) {
      if (options[i] == 5)
        log = values[i];
      if (options[i] == 6)
        size = (size_t)(uintptr_t)values[i];
    }
    if (log && size > 0)
      snprintf(log, size, "%s",
               "fake ptxas: line 2: unknown directive '.error'\n"
               "fake ptxas: 1 error\n");
    return CUDA_ERROR_INVALID_PTX;
  }
  for (int i = 0; i < FUNCTION_COUNT; ++i)
    functions[i].maxDynamicSharedBytes = 0;
  *module = malloc(1);
  ++state.modules;
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  ENTER_WITH_CONTEXT("cuModuleUnload");
  free(module);
  --state.modules;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  ENTER_WITH_CONTEXT("cuModuleGetFunction");
  if (!module)
    return CUDA_ERROR_INVALID_HANDLE;
  for (int i = 0; i < FUNCTION_COUNT; ++i)
    if (strcmp(functions[i].name, name) == 0) {
      *function = &functions[i];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

/* The fake's modules hold no global arrays. */
CUresult cuModuleGetGlobal_v2(CUdeviceptr *address, size_t *size,
                              CUmodule module, const char *name) {
  ENTER_WITH_CONTEXT("cuModuleGetGlobal_v2");
  if (!module)
    return CUDA_ERROR_INVALID_HANDLE;
  (void)address;
  (void)size;
  (void)name;
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuFuncSetAttribute(CUfunction function, int attribute, int value) {
  ENTER_WITH_CONTEXT("cuFuncSetAttribute");
  if (attribute != 8 || value < 0 || value > 232448)
    return CUDA_ERROR_INVALID_VALUE;
  function->maxDynamicSharedBytes = value;
  return CUDA_SUCCESS;
}

#ifndef LCC_FAKE_CUDA_WITHOUT_LAUNCH
CUresult cuLaunchKernel(CUfunction function, unsigned int gridX,
                        unsigned int gridY, unsigned int gridZ,
                        unsigned int blockX, unsigned int blockY,
                        unsigned int blockZ, unsigned int sharedMemoryBytes,
                        CUstream stream, void **parameters, void **extra) {
  ENTER_WITH_CONTEXT("cuLaunchKernel");
  if (stream != &streamToken)
    return CUDA_ERROR_INVALID_HANDLE;
  if (extra || gridX == 0 || gridY == 0 || gridZ == 0 || blockX == 0 ||
      blockY == 0 || blockZ == 0 ||
      (unsigned long long)blockX * blockY * blockZ > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  if (sharedMemoryBytes > 48 * 1024 &&
      sharedMemoryBytes > (unsigned)function->maxDynamicSharedBytes)
    return CUDA_ERROR_INVALID_VALUE;
  void *bindings[8];
  for (int i = 0; i < function->bindingCount; ++i) {
    CUdeviceptr address = *(CUdeviceptr *)parameters[i];
    if (!isDeviceRange(address, 1))
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    bindings[i] = (void *)(uintptr_t)address;
  }
  snprintf(lastLaunch.kernel, sizeof(lastLaunch.kernel), "%s", function->name);
  lastLaunch.grid[0] = gridX;
  lastLaunch.grid[1] = gridY;
  lastLaunch.grid[2] = gridZ;
  lastLaunch.block[0] = blockX;
  lastLaunch.block[1] = blockY;
  lastLaunch.block[2] = blockZ;
  lastLaunch.sharedMemoryBytes = sharedMemoryBytes;
  lastLaunch.parameterCount = function->bindingCount;
  ++state.launches;
  for (unsigned int z = 0; z < gridZ; ++z)
    for (unsigned int y = 0; y < gridY; ++y)
      for (unsigned int x = 0; x < gridX; ++x)
        function->run(bindings, x, y, z);
  return CUDA_SUCCESS;
}
#endif

/*===----------------------------------------------------------------------===*
 * For the tests
 *===----------------------------------------------------------------------===*/

void lccFakeCudaGetLastLaunch(LccFakeCudaLaunch *launch) {
  *launch = lastLaunch;
}

void lccFakeCudaGetState(LccFakeCudaState *out) {
  *out = state;
  out->contextDepth = getContextDepth();
}

/* The dynamic shared memory `kernel` was allowed, 0 if never set. */
int lccFakeCudaGetMaxDynamicShared(const char *kernel) {
  for (int i = 0; i < FUNCTION_COUNT; ++i)
    if (strcmp(functions[i].name, kernel) == 0)
      return functions[i].maxDynamicSharedBytes;
  return -1;
}
