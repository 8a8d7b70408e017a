//===- Session.h - a module on a device, and its functions ------*- C++ -*-===//
//
// A Session binds a checked Module to a device: it loads the executable
// made for the device (ExecutableSelection.h), holds the parameters, and
// creates each Function the first time it is looked up. A Function owns
// everything one call needs (input and output buffers, the transient arena,
// its command list prepared for the device), allocated once and reused by
// every call, so a call allocates nothing.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_SESSION_H
#define LCC_RUNTIME_SESSION_H

#include "comm/Communicator.h"
#include "devices/Device.h"
#include "module/Loader.h"
#include "module/TransfersInFlight.h"

#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace lcc::runtime {

/// A dense tensor in host memory: the caller's (inputs), or the function's
/// (results, valid until the calling thread's next call or the end of the
/// session).
struct TensorView {
  DType dtype = DType::F32;
  const int64_t *shape = nullptr;
  size_t rank = 0;
  const void *data = nullptr;
  uint64_t size = 0; // bytes at `data`
  /// An input's name as the caller gives it: checked against the input's
  /// own when set, ignored when null.
  const char *name = nullptr;
};

/// Time spent in one command, summed over calls since the last reset.
struct CommandStats {
  std::string name;
  std::string location; // of the model op, "model.mlir:12:8"; may be ""
  lcm::CommandKind kind = lcm::CommandKind::Dispatch;
  uint64_t totalNanoseconds = 0;
  double flops = 0; // a dispatch's, as the compiler counted them; 0 if not
};

class Session;
class SafetensorsReader;

/// Whether `parameter` is a decode step's key or value cache (lcc
/// --decode; ModuleFormat.h's kDecodeCachePrefix): scratch state that
/// checkpoints neither hold nor need.
bool isDecodeCache(const lcm::Parameter &parameter);

/// The metadata key that marks a .safetensors file a checkpoint: it holds
/// every parameter, the optimizer state included.
constexpr const char *kCheckpointKey = "lcc.checkpoint";
/// The metadata key naming what wrote a checkpoint ("lcc 0.1.0").
constexpr const char *kProducerKey = "producer";

class Function {
public:
  const std::string &getName() const { return name; }
  size_t getInputCount() const { return inputs.size(); }
  size_t getOutputCount() const { return outputs.size(); }
  const lcm::TensorSignature &getInput(size_t index) const;
  const lcm::TensorSignature &getOutput(size_t index) const;
  /// Input `index` as a view without data: dtype, shape and byte size.
  TensorView getInputType(size_t index) const;

  /// Runs the function: checks `inputs` (count, dtype, shape, size, and
  /// the name when one is given) and copies them to the device, then runs
  /// every command in order, then copies the results for the calling
  /// thread. On a host-addressable device (the CPU) an input whose data is
  /// kBufferAlignment-aligned is not copied: the commands read it where the
  /// caller holds it, during the call (a compiled module never writes its
  /// inputs). Calls to one
  /// Function from any threads are serialised (they share its arena), and
  /// each thread reads the results of its own last call. An input that a
  /// carried result has filled (carryResult) may have no data: it keeps
  /// that value.
  Status call(const TensorView *inputs, size_t count);

  /// From now on, result `result` of every call is copied into input
  /// `input` on the device, without passing through the host, for the next
  /// call to use: a model's new memories feeding its next segment
  /// (Transformer-XL's recurrence). Their dtype and shape must be the same;
  /// an input takes one result at most. A call that gives the input data
  /// still uses that data (a new sequence's first memory).
  Status carryResult(size_t result, size_t input);

  /// Result `index` of the calling thread's last call (zeros before its
  /// first), in host memory of that thread's own: another thread's calls
  /// never change it. Valid until the thread's next call of the function.
  TensorView getResult(size_t index) const;
  /// Output `index` as a view without data: dtype, shape and byte size.
  TensorView getOutputType(size_t index) const;

  /// Calls and times, summed over every thread's calls.
  uint64_t getCallCount() const;
  /// Time of whole calls (input copies, commands, result copies), summed.
  uint64_t getTotalNanoseconds() const;
  /// Bytes of inputs the calls copied to the device (those read in place
  /// count nothing), summed.
  uint64_t getCopiedInputBytes() const;
  uint64_t getArenaBytes() const { return arena.size(); }
  size_t getCommandCount() const { return stats.size(); }
  /// Every command's name, location, kind and time so far.
  std::vector<CommandStats> getCommandStats() const;
  /// Command `index`'s name and location, fixed for the function's life.
  const std::string &getCommandName(size_t index) const {
    return stats[index].name;
  }
  const std::string &getCommandLocation(size_t index) const {
    return stats[index].location;
  }
  lcm::CommandKind getCommandKind(size_t index) const {
    return stats[index].kind;
  }
  double getCommandFlops(size_t index) const { return stats[index].flops; }
  /// Command `index`'s time so far.
  uint64_t getCommandNanoseconds(size_t index) const;
  /// Forgets the calls and times so far (e.g. after warm-up calls).
  void resetStats();

private:
  friend class Session;
  struct Argument {
    const lcm::TensorSignature *signature;
    std::vector<int64_t> shape;
    DeviceBuffer buffer;
    // Inputs: the output carried into this one (carryResult), and whether
    // a call has filled it yet.
    std::optional<size_t> carriedFrom;
    bool holdsCarriedValue = false;
    // Inputs: the command bindings that read it (command, binding, bytes
    // from its start), and where they point now: its buffer, or the
    // caller's data of the last call that read it in place.
    struct Reader {
      size_t command, binding;
      uint64_t offset;
    };
    std::vector<Reader> readers;
    const void *boundTo = nullptr;
  };
  /// Points input `index`'s readers at `data` (its buffer or the caller's).
  Status bindInput(size_t index, const void *data);
  /// One thread's results: those of its last call, each output's bytes.
  using ThreadResults = std::vector<std::vector<uint8_t>>;
  /// The calling thread's results, made (zero-filled) on its first use;
  /// callMutex held.
  ThreadResults &resultsOfThisThread() const;

  Function(Session &session, const lcm::Function &definition);
  Status prepare(size_t index);

  Session &session;
  const lcm::Function &definition;
  std::string name;
  std::vector<Argument> inputs;
  std::vector<Argument> outputs;
  DeviceBuffer arena;
  std::unique_ptr<CommandList> commands;
  // The ring shifts still moving bytes while later commands run.
  TransfersInFlight transfers;
  std::vector<uint32_t> usedParameters;

  // Guards every call, the statistics and each thread's results.
  mutable std::mutex callMutex;
  // Kept for the function's life, one entry per thread that called it (a
  // map: a thread's entry stays where it is while others are added).
  mutable std::map<std::thread::id, ThreadResults> resultsByThread;
  uint64_t callCount = 0;
  uint64_t totalNanoseconds = 0;
  uint64_t copiedInputBytes = 0;
  std::vector<CommandStats> stats;
  std::vector<uint64_t> lastNanoseconds; // of each command, in the last call
};

class Session {
public:
  /// Copies the module's embedded parameters to the device and reserves
  /// device memory for the others: weights, which must be bound before a
  /// call, and optimizer state, which starts at zero (device memory is
  /// zero-filled when allocated) and is bound from then on. Parameters live
  /// as long as the session: a training step that writes them in place
  /// changes what every later call of every function sees.
  static StatusOr<std::unique_ptr<Session>>
  create(std::shared_ptr<Device> device, std::shared_ptr<const Module> module);
  ~Session();

  /// Binds every weight (a parameter neither embedded nor state) from the
  /// .safetensors file at `path`, by name; dtype and shape must match. State
  /// is bound when the file holds it (a checkpoint being resumed) and left
  /// as it is otherwise. Tensors the module does not need are ignored.
  Status bindParameters(const std::string &path);
  /// Binds the parameter named `name` (a weight or state) from memory.
  Status bindParameter(const std::string &name, const TensorView &value);
  /// Binds every weight with the fresh values of ParameterInit.h for
  /// `seed`: those `lcc-run --init-params --seed` writes to a file.
  Status initializeParameters(uint64_t seed);

  /// Parameters in module order, as Module::getParameter lists them.
  size_t getParameterCount() const { return parameters.size(); }
  /// The current value of parameter `index` (e.g. after training steps),
  /// copied into `out`. An unbound weight is an error. Not while a call of
  /// the session runs: that call may be writing it.
  Status readParameter(size_t index, std::vector<uint8_t> &out);
  /// Writes every parameter the module does not embed, state included, to
  /// `path` as .safetensors by name, atomically: a checkpoint that
  /// bindParameters resumes from and `lcc-run --params` runs with. Its
  /// metadata holds `extraMetadata` (a trainer's data position), the
  /// producer and kCheckpointKey. Every weight must be bound. Not while a
  /// call of the session runs.
  Status
  writeParameters(const std::string &path,
                  const std::map<std::string, std::string> &extraMetadata = {});

  /// The function named `name` ("" for the module's first function), made
  /// on first use: the executable is loaded and its buffers allocated.
  StatusOr<Function *> lookupFunction(const std::string &name);

  /// The ranks the functions' collectives (a train step's gradient
  /// average) run among: `communicator`, which must outlive the session's
  /// calls; null (the default) for one process alone.
  void setCommunicator(Communicator *communicator) {
    this->communicator = communicator;
  }
  Communicator *getCommunicator() const { return communicator; }

  Device &getDevice() { return *device; }
  const Module &getModule() const { return *module; }

private:
  friend class Function;
  Session(std::shared_ptr<Device> device, std::shared_ptr<const Module> module);
  /// The module's executable for this device, loaded on first use.
  StatusOr<const DeviceExecutable *> getExecutable();
  /// An error naming parameter `index` unless it is bound.
  Status checkBound(size_t index, const std::string &what) const;
  /// An error unless `file` holds every optimizer state tensor, or none and
  /// is not marked a checkpoint: a checkpoint missing one would resume with
  /// zeros in its place.
  Status checkStateComplete(const SafetensorsReader &file,
                            const std::string &path) const;
  /// Writes a Constant-init parameter's starting value into `buffer`.
  Status fillConstant(const lcm::Parameter &parameter, DeviceBuffer &buffer);

  std::shared_ptr<Device> device;
  std::shared_ptr<const Module> module;
  size_t executableIndex = 0; // the executable this device runs
  std::unique_ptr<DeviceExecutable> executable; // loaded lazily
  std::vector<DeviceBuffer> parameters;
  std::vector<bool> parameterBound;
  std::map<std::string, size_t> parameterIndex;
  Communicator *communicator = nullptr;
  std::mutex mutex; // guards lookups and binding
  // Functions hold pointers into `parameters` and `executable`: declared
  // last, they are destroyed first.
  std::map<size_t, std::unique_ptr<Function>> functions;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_SESSION_H
