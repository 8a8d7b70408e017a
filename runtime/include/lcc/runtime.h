/*===- lcc/runtime.h - the lcc runtime C API ----------------------*- C -*-===*\
 *
 * Loads compiled modules (.lcm files written by `lcc`) and runs their
 * functions. The whole API in one example:
 *
 *   LccModule module; LccDevice device; LccSession session;
 *   LccFunction function;
 *   LccStatus status = lccModuleLoadFile("model.lcm", &module);
 *   if (!status) status = lccDeviceCreate("cpu", 0, &device);
 *   if (!status) status = lccSessionCreate(device, module, &session);
 *   if (!status) status = lccSessionBindParametersFile(session, "w.st");
 *   if (!status) status = lccSessionLookupFunction(session, "fwd", &function);
 *   if (!status) status = lccFunctionCall(function, inputs, inputCount);
 *   if (status) {
 *     fprintf(stderr, "error: %s\n", lccStatusGetMessage(status));
 *     lccStatusDestroy(status);
 *   }
 *   ... lccFunctionGetResult(function, 0, &result) ...
 *   lccSessionDestroy(session); lccDeviceDestroy(device);
 *   lccModuleDestroy(module);
 *
 * Conventions:
 *  - Every call that can fail returns an LccStatus: NULL on success, else an
 *    error the caller reads and must free with lccStatusDestroy. Nothing in
 *    the runtime aborts or exits, whatever the input files hold.
 *  - Handles are opaque. Modules, devices and sessions may be destroyed in
 *    any order (a session keeps what it uses alive). An LccFunction belongs
 *    to its session.
 *  - Strings and shapes returned by the API stay valid while the handle
 *    they came from lives. Index arguments of getters must be in range.
 *  - Threads: modules and devices may be used from any thread. Calls of one
 *    function (lccFunctionCall) from any number of threads are serialised,
 *    and each thread reads its own results: lccFunctionGetResult gives the
 *    result of the calling thread's last call, whatever other threads call
 *    in between, valid until that thread's next call of the function. The
 *    statistics sum every thread's calls. Different functions of a session
 *    may run at once, except while one of them updates the parameters (a
 *    train_step): run training alone, or give each thread its own session.
 *    A function with carried results (lccFunctionCarryResult) is one
 *    sequence whichever thread calls it: run independent sequences in
 *    separate sessions. Binding, reading or writing a session's parameters
 *    (lccSessionBind..., lccSessionGetParameter, lccSessionWriteParameters
 *    File) must not overlap any call of the session.
 *
\*===----------------------------------------------------------------------===*/

#ifndef LCC_RUNTIME_H
#define LCC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

typedef enum LccStatusCode {
  LCC_STATUS_OK = 0,
  LCC_STATUS_INVALID_ARGUMENT = 1,   /* the caller passed something wrong */
  LCC_STATUS_NOT_FOUND = 2,          /* file, function, tensor or symbol */
  LCC_STATUS_INVALID_MODULE = 3,     /* corrupted or malformed .lcm */
  LCC_STATUS_INVALID_DATA = 4,       /* malformed .npy or .safetensors */
  LCC_STATUS_UNAVAILABLE = 5,        /* no such device, or no code for it */
  LCC_STATUS_RESOURCE_EXHAUSTED = 6, /* an allocation failed */
  LCC_STATUS_INTERNAL = 7,           /* an operating system call failed */
} LccStatusCode;

/* NULL means success. */
typedef struct LccStatusImpl *LccStatus;

/* LCC_STATUS_OK for NULL. */
LccStatusCode lccStatusGetCode(LccStatus status);
/* One line, no trailing period; "" for NULL. */
const char *lccStatusGetMessage(LccStatus status);
void lccStatusDestroy(LccStatus status);

/*===----------------------------------------------------------------------===*
 * Tensors
 *===----------------------------------------------------------------------===*/

/* Same values as the schema's lcc.lcm.DType. */
typedef enum LccDType {
  LCC_DTYPE_F32 = 0,
  LCC_DTYPE_F16 = 1,
  LCC_DTYPE_BF16 = 2,
  LCC_DTYPE_I32 = 3,
  LCC_DTYPE_I64 = 4,
} LccDType;

/* "f32", "f16", "bf16", "i32", "i64". */
const char *lccDTypeGetName(LccDType dtype);
/* Bytes per element; 0 for an unknown value. */
size_t lccDTypeGetSize(LccDType dtype);

/* A dense, C-order, little-endian tensor. As a signature, `data` is NULL. */
typedef struct LccTensorView {
  const char *name; /* signature name; in call inputs NULL, or the input's
                       own name (checked) */
  LccDType dtype;
  size_t rank;
  const int64_t *shape; /* `rank` dimensions */
  const void *data;
  uint64_t size; /* bytes at `data` */
} LccTensorView;

/* Element `index` of `tensor` (which must have data) as a double; f16 and
 * bf16 are widened exactly. */
double lccTensorGetElement(const LccTensorView *tensor, uint64_t index);

/*===----------------------------------------------------------------------===*
 * Modules
 *===----------------------------------------------------------------------===*/

typedef struct LccModuleImpl *LccModule;

/* The .lcm version this runtime reads (it reads no other). */
uint32_t lccGetModuleVersion(void);

/* Reads and checks a module; a truncated, corrupted or hostile file is an
 * error naming the first problem, e.g. "model.lcm: functions[0].commands[3]
 * .bindings[1] binds buffer 9, only 7 exist". Code and embedded constants
 * are checked against their checksums before anything is mapped. */
LccStatus lccModuleLoadFile(const char *path, LccModule *module);
/* The same from memory; the bytes are copied. */
LccStatus lccModuleLoadMemory(const void *data, size_t size, LccModule *module);
void lccModuleDestroy(LccModule module);

size_t lccModuleGetFunctionCount(LccModule module);
const char *lccModuleGetFunctionName(LccModule module, size_t index);
size_t lccModuleGetParameterCount(LccModule module);
/* CRC-64/XZ of the module's bytes: ranks of one job compare theirs. */
uint64_t lccModuleGetChecksum(LccModule module);
/* The ranks each sequence is split over (lcc --context-parallel=P), which
 * its job must have; 1 when nothing is split. */
uint32_t lccModuleGetContextParallel(LccModule module);
/* Bytes of the module's weights, the parameters it neither embeds nor
 * keeps as optimizer state: what a weights file for it holds. */
uint64_t lccModuleGetParameterBytes(LccModule module);
/* 1 when parameter `index` is optimizer state (Adam's moments and step
 * count, and the hyper-parameters optimizer.lr, ..., in a module compiled
 * with `lcc --train`), else 0. State starts at zero when a session is
 * created, or at the value its init gives ("constant(0.001)": a
 * hyper-parameter's, which lccSessionBindParameter changes between calls),
 * and stays on the device across calls; a fresh weights file does not hold
 * it, a checkpoint does. */
int lccModuleIsStateParameter(LccModule module, size_t index);
/* 1 if parameter `index` is a decode step's key or value cache (lcc
 * --decode, named "decode.cache.*"): state that checkpoints neither hold
 * nor need, which prefill fills. */
int lccModuleIsDecodeCache(LccModule module, size_t index);

/* What a module holds, without a device: each function's input and result
 * signatures (name, dtype, shape; `data` NULL) and command count, each
 * parameter's signature (`data` points at embedded values, else NULL) and
 * how fresh weights fill it ("normal(0, 0.02)", "zeros", "ones",
 * "constant(0.001)"), and each
 * executable ("HostSharedObject for x86_64, 52336 bytes, 44 entry points").
 * lccModuleGetFunctionInputRange gives the [low, high] every element of an
 * integer input must lie in and returns 1, or returns 0 when any value is
 * valid. Indices must be in range. */
size_t lccModuleGetFunctionInputCount(LccModule module, size_t function);
size_t lccModuleGetFunctionOutputCount(LccModule module, size_t function);
void lccModuleGetFunctionInput(LccModule module, size_t function, size_t index,
                               LccTensorView *signature);
void lccModuleGetFunctionOutput(LccModule module, size_t function, size_t index,
                                LccTensorView *signature);
/* Under context parallelism: the dimension of input (output) `index` that
 * holds this rank's share of the positions (rank r of P =
 * lccModuleGetContextParallel holds chunks r and 2P - 1 - r of 2P equal
 * chunks, in order; the signature is the share's); -1 when every rank
 * holds the whole tensor. */
int lccModuleGetFunctionInputSplitDim(LccModule module, size_t function,
                                      size_t index);
int lccModuleGetFunctionOutputSplitDim(LccModule module, size_t function,
                                       size_t index);
int lccModuleGetFunctionInputRange(LccModule module, size_t function,
                                   size_t index, int64_t *low, int64_t *high);
size_t lccModuleGetFunctionCommandCount(LccModule module, size_t function);
uint64_t lccModuleGetFunctionArenaBytes(LccModule module, size_t function);
void lccModuleGetParameter(LccModule module, size_t index,
                           LccTensorView *signature);
const char *lccModuleGetParameterInit(LccModule module, size_t index);
size_t lccModuleGetExecutableCount(LccModule module);
const char *lccModuleGetExecutableDescription(LccModule module, size_t index);

/* Writes a .safetensors file holding every weight of the module (neither
 * embedded nor state), filled as its `init` says; the values depend only on
 * `seed` and the parameter (see docs/runtime.md). */
LccStatus lccModuleWriteInitialParameters(LccModule module, uint64_t seed,
                                          const char *path);

/*===----------------------------------------------------------------------===*
 * Devices
 *===----------------------------------------------------------------------===*/

typedef struct LccDeviceImpl *LccDevice;

/* `kind` is "cpu" or "cuda". The cpu device runs `threadCount` threads (0:
 * one per hardware thread; at most 4096). The cuda device runs on GPU 0
 * through the NVIDIA driver, loaded when the device is created (libcuda.so.1,
 * or the library the environment variable LCC_CUDA_DRIVER names); it ignores
 * `threadCount`. Without a driver or a GPU it is an LCC_STATUS_UNAVAILABLE
 * error that says why, e.g. "cuda device unavailable: cannot load
 * libcuda.so.1 (...): is the NVIDIA driver installed?". "cuda-emulator" is
 * the cuda device over the CUDA emulator: the GPU kernels of a module
 * compiled for cuda, run on this CPU (docs/gpu.md); it ignores
 * `threadCount` and checks nothing until lccDeviceSetEmulatorChecks. */
LccStatus lccDeviceCreate(const char *kind, unsigned threadCount,
                          LccDevice *device);
void lccDeviceDestroy(LccDevice device);
/* For a cuda-emulator device: what every launch from now on checks, as
 * `--check` takes it ("memcheck", "racecheck", "memcheck,racecheck" or
 * "none"), and the order a block's threads run in between barriers
 * ("forward", "reversed", "shuffled" or "shuffled:SEED"; NULL: forward). A
 * launch with findings fails with LCC_STATUS_INTERNAL and one line per
 * finding class. LCC_STATUS_INVALID_ARGUMENT for another device or an
 * unknown value. */
LccStatus lccDeviceSetEmulatorChecks(LccDevice device, const char *checks,
                                     const char *threadOrder);
/* "cpu", "cuda" or "cuda-emulator". */
const char *lccDeviceGetKind(LccDevice device);
/* What runs the code: the GPU's name ("NVIDIA H200"); "host" for the cpu. */
const char *lccDeviceGetName(LccDevice device);
/* The code it runs: "sm_90" for a GPU of compute capability 9.0; the
 * host's architecture ("x86_64") for the cpu. */
const char *lccDeviceGetArchitecture(LccDevice device);
/* The cpu device's threads; 0 for a GPU. */
unsigned lccDeviceGetThreadCount(LccDevice device);
/* Bytes of device memory now allocated, and the most ever at once. */
/* The most bytes the device may hold at once (parameters, inputs, outputs,
 * arenas); an allocation beyond it fails with LCC_STATUS_RESOURCE_EXHAUSTED
 * naming its size, before any memory is touched. Default: the machine's
 * physical memory for cpu, no limit but the GPU's own for cuda. Applies to
 * sessions created afterwards. */
void lccDeviceSetMemoryLimit(LccDevice device, uint64_t bytes);
/* The machine's physical memory in bytes: the cpu device's default limit. */
uint64_t lccGetPhysicalMemoryBytes(void);
uint64_t lccDeviceGetMemoryLimit(LccDevice device);
uint64_t lccDeviceGetCurrentBytes(LccDevice device);
uint64_t lccDeviceGetPeakBytes(LccDevice device);

/*===----------------------------------------------------------------------===*
 * Sessions and functions
 *===----------------------------------------------------------------------===*/

typedef struct LccSessionImpl *LccSession;
typedef struct LccFunctionImpl *LccFunction;

/* Puts `module` on `device`: picks the module's code for the device (an
 * LCC_STATUS_UNAVAILABLE error naming what the module holds if it has none)
 * and copies the embedded parameters to it; optimizer state starts at
 * zero (hyper-parameters at their starting values), and weights wait to be
 * bound. */
LccStatus lccSessionCreate(LccDevice device, LccModule module,
                           LccSession *session);
void lccSessionDestroy(LccSession session);

/* Binds every weight (a parameter neither embedded nor state) from a
 * .safetensors file, by name; a missing name, dtype or shape is an error
 * naming it. Optimizer state is bound when the file holds it (a checkpoint
 * that lccSessionWriteParametersFile wrote; then it must hold all of it)
 * and left as it is otherwise (zero in a fresh session). */
LccStatus lccSessionBindParametersFile(LccSession session, const char *path);
/* Binds one parameter, a weight or state, from memory (copied). */
LccStatus lccSessionBindParameter(LccSession session, const char *name,
                                  const LccTensorView *value);
/* Binds every weight with the values lccModuleWriteInitialParameters
 * writes for `seed`, without a file. */
LccStatus lccSessionInitializeParameters(LccSession session, uint64_t seed);

/* Parameters live on the device as long as the session, shared by all its
 * functions; a training function (`train_step` of `lcc --train`) updates
 * weights and state in place. lccSessionGetParameter copies the current
 * value of parameter `index` (module order) to host memory and points
 * `value` at it (name, dtype, shape, data, size), valid until the next
 * lccSessionGetParameter on the session or its destruction; an unbound
 * weight is an error. Neither call may run while a function of the session
 * runs, nor two of them at once. */
size_t lccSessionGetParameterCount(LccSession session);
LccStatus lccSessionGetParameter(LccSession session, size_t index,
                                 LccTensorView *value);
/* Writes every parameter the module does not embed, optimizer state
 * included, as a .safetensors file by name: a checkpoint that
 * lccSessionBindParametersFile resumes from. Every weight must be bound.
 * The file is written beside `path`, synced and renamed into place, so
 * `path` holds the old file or the whole new one, never part of one; on an
 * error it is left as it was. */
LccStatus lccSessionWriteParametersFile(LccSession session, const char *path);
/* The same checkpoint with `count` metadata entries of the caller's (a
 * trainer's place in its data: lcc-train writes "lcc-train.position" and
 * the like), each key once; "producer" and "lcc.checkpoint" are the
 * runtime's own. Every checkpoint is marked "lcc.checkpoint", and
 * lccSessionBindParametersFile refuses one that lacks any optimizer state
 * tensor (resuming with zeros in its place would not continue the run). */
LccStatus lccSessionWriteCheckpoint(LccSession session, const char *path,
                                    const char *const *keys,
                                    const char *const *values, size_t count);

/* The function named `name` (NULL or "" for the module's first). The first
 * lookup loads its kernels and allocates everything its calls need. */
LccStatus lccSessionLookupFunction(LccSession session, const char *name,
                                   LccFunction *function);

const char *lccFunctionGetName(LccFunction function);
size_t lccFunctionGetInputCount(LccFunction function);
size_t lccFunctionGetOutputCount(LccFunction function);
/* Signatures: `data` NULL, `size` the bytes a value needs. */
void lccFunctionGetInput(LccFunction function, size_t index,
                         LccTensorView *signature);
void lccFunctionGetOutput(LccFunction function, size_t index,
                          LccTensorView *signature);

/* Runs the function and returns when it has finished. Inputs must match the
 * signatures exactly (count, dtype, shape, size), in order; an input that
 * gives a `name` must be the input of that name (a mismatch is an error
 * naming both). They need no alignment: they are copied to the device,
 * except on the cpu device an input whose data is 64-byte aligned, which
 * the kernels read where it is during the call (zero-copy; a compiled
 * module never writes its inputs, and no pointer to them is kept after
 * the call returns).
 * An input that a carried result has filled (below) may have `data` NULL:
 * it keeps that value. Safe to call from several threads (see the threads
 * convention above). */
LccStatus lccFunctionCall(LccFunction function, const LccTensorView *inputs,
                          size_t inputCount);
/* From now on, result `result` of every call is copied into input `input`
 * on the device (no host copy) for the next call: a model's new memories
 * feeding its next segment (Transformer-XL). Same dtype and shape; an input
 * takes one result at most. A call that gives that input data still uses
 * it (the first memory of a new sequence). */
LccStatus lccFunctionCarryResult(LccFunction function, size_t result,
                                 size_t input);
/* Result `index` of the calling thread's last call (zeros before its
 * first), in host memory that is that thread's own: valid until the same
 * thread calls the function again; other threads' calls leave it as it
 * is. Every call copies its results there (from a GPU, or from the CPU's
 * output buffers, which the next call overwrites). */
void lccFunctionGetResult(LccFunction function, size_t index,
                          LccTensorView *result);

/* Statistics since creation or the last lccFunctionResetStats. */
typedef struct LccCommandStats {
  const char *name;          /* the command's name in the module */
  const char *location;      /* the model op's "file:line:col", or "" */
  const char *kind;          /* "dispatch", "copy", "all_reduce", "exchange" */
  uint64_t totalNanoseconds; /* summed over calls */
} LccCommandStats;

uint64_t lccFunctionGetCallCount(LccFunction function);
/* Whole calls (input copies, commands, result copies), summed. Command
 * times are measured on the device: host clock on the cpu, CUDA events on a
 * GPU. */
uint64_t lccFunctionGetTotalNanoseconds(LccFunction function);
/* Bytes of inputs the calls copied to the device, summed; an input read in
 * place (lccFunctionCall) counts nothing. */
uint64_t lccFunctionGetCopiedInputBytes(LccFunction function);
/* Bytes of the transient arena, allocated once when the function is made. */
uint64_t lccFunctionGetArenaBytes(LccFunction function);
size_t lccFunctionGetCommandCount(LccFunction function);
void lccFunctionGetCommandStats(LccFunction function, size_t index,
                                LccCommandStats *stats);
/* Command `index`'s floating-point operations per run, as the compiler
 * counted them from its ops (a bound where a loop's trip count is
 * unknown); 0 for a copy, or where the module does not say (modules
 * before 2026-12-05). Over its time: the command's FLOP rate. */
double lccFunctionGetCommandFlops(LccFunction function, size_t index);
void lccFunctionResetStats(LccFunction function);

/*===----------------------------------------------------------------------===*
 * Ranks: the processes of one job
 *===----------------------------------------------------------------------===*/

/* A job beyond one process (docs/runtime.md, "Ranks"). Launched by mpirun
 * (Open MPI's environment), the communicator is MPI's world, Open MPI's
 * libmpi.so.40 loaded at run time (LCC_MPI_LIBRARY names another); its
 * absence is an error naming it. Otherwise it is one process alone: rank
 * 0 of 1, whose collectives copy. Create one per process, from the thread
 * that calls its collectives; destroying it finalises MPI. */
typedef struct LccCommunicatorImpl *LccCommunicator;
LccStatus lccCommunicatorCreate(LccCommunicator *communicator);
void lccCommunicatorDestroy(LccCommunicator communicator);
int lccCommunicatorGetRank(LccCommunicator communicator);
int lccCommunicatorGetSize(LccCommunicator communicator);
/* "one process", "MPI (libmpi.so.40)". */
const char *lccCommunicatorDescribe(LccCommunicator communicator);
/* Sums `count` floats over the ranks, in place on every rank. */
LccStatus lccCommunicatorAllReduceSum(LccCommunicator communicator, float *data,
                                      size_t count);
/* Every rank's `bytes` bytes in rank order into `out` (size * bytes). */
LccStatus lccCommunicatorAllGather(LccCommunicator communicator,
                                   const void *data, size_t bytes, void *out);
/* Bytes this rank has given to collectives so far: each all-reduce's
 * tensor (a train step's gradients), each all-gather's share. */
uint64_t lccCommunicatorGetSentBytes(LccCommunicator communicator);
/* Ends every rank of the job with `code` (a rank that failed). */
void lccCommunicatorAbort(LccCommunicator communicator, int code);
/* The ranks the session's collectives run among (a train step averages its
 * loss and gradients over them: data parallelism). `communicator` must
 * outlive the session's calls; NULL is one process alone. In a job mpirun
 * launched, a function with a collective refuses to run without one. */
LccStatus lccSessionSetCommunicator(LccSession session,
                                    LccCommunicator communicator);

/*===----------------------------------------------------------------------===*
 * Tensor files: .npy and .safetensors
 *===----------------------------------------------------------------------===*/

typedef struct LccHostTensorImpl *LccHostTensor;

/* Reads a .npy file (v1.0/2.0, little-endian, C order; <f4 <f2 <i4 <i8). */
LccStatus lccNpyRead(const char *path, LccHostTensor *tensor);
void lccHostTensorGetView(LccHostTensor tensor, LccTensorView *view);
void lccHostTensorDestroy(LccHostTensor tensor);
/* Writes `tensor` as .npy; bf16, which .npy cannot hold, is written as f32. */
LccStatus lccNpyWrite(const char *path, const LccTensorView *tensor);
/* Writes `count` tensors as one .safetensors file, each by its `name` (not
 * NULL; no name twice), atomically as lccSessionWriteParametersFile does:
 * e.g. a function's results (lccFunctionGetResult gives their names). */
LccStatus lccSafetensorsWrite(const char *path, const LccTensorView *tensors,
                              size_t count);

/* The string metadata of a .safetensors file ("__metadata__"): a
 * checkpoint's producer and the entries lccSessionWriteCheckpoint wrote.
 * Keys and values stay valid until lccMetadataDestroy; lccMetadataFind
 * gives NULL for a key the file lacks. */
typedef struct LccMetadataImpl *LccMetadata;
LccStatus lccSafetensorsReadMetadata(const char *path, LccMetadata *metadata);
size_t lccMetadataGetCount(LccMetadata metadata);
const char *lccMetadataGetKey(LccMetadata metadata, size_t index);
const char *lccMetadataGetValue(LccMetadata metadata, size_t index);
const char *lccMetadataFind(LccMetadata metadata, const char *key);
void lccMetadataDestroy(LccMetadata metadata);

/* Every file the runtime writes follows one rule by what `path` names: a
 * regular file (or a new name) is written beside it and renamed over it
 * (its permissions kept; temporaries a killed run left there are removed
 * first); a symbolic link is followed, the link kept; a character device
 * or FIFO (/dev/null, a pipe) is written in place, a FIFO that no process
 * reads being an error; /dev/stdout and /dev/fd/N are written through that
 * descriptor of the process; a directory, block device or socket is
 * refused.
 * lccFileCheckWritable tells, without writing, whether a write to `path`
 * would be possible: the error it would give, or a directory or device this
 * process may not write. */
LccStatus lccFileCheckWritable(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* LCC_RUNTIME_H */
