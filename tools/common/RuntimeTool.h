//===- RuntimeTool.h - what lcc-run and lcc-train share ---------*- C++ -*-===//
//
// The parts of a command-line tool over the runtime's C API that lcc-run and
// lcc-train have in common, so that each of their messages is written in one
// place: the `TOOL: error:` line and its exit status, the "--flag=value"
// command line (--help, --version, counts, --device, --threads, --report,
// the model), reading .npy files, and putting the model on a device. C API
// only, as the tools are.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_COMMON_RUNTIMETOOL_H
#define LCC_TOOLS_COMMON_RUNTIMETOOL_H

#include "lcc/runtime.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace lcc::tools {

/// The exit statuses of the command-line contract (docs/design.md §6).
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

/// How the value of a flag is checked when the command line is read.
enum class FlagValue {
  Text,          ///< Anything but empty.
  Count,         ///< A non-negative integer.
  PositiveCount, ///< A count of at least 1.
  Threads,       ///< --threads: 1 to 4096, what the cpu device takes.
  Device,        ///< --device: cpu, cuda or cuda-emulator.
  Report,        ///< --report: json.
  Real,          ///< A finite real number ("3e-4").
};

/// An option of the form "--flag=value".
struct Flag {
  const char *name; ///< "--steps".
  /// What its value looks like ("N"), for the error when it is missing.
  const char *form;
  FlagValue value;
};

/// The flags of the device (DeviceOptions) and of the report, which both
/// tools take alike.
constexpr Flag kDeviceFlag = {"--device", "cpu|cuda|cuda-emulator",
                              FlagValue::Device};
constexpr Flag kThreadsFlag = {"--threads", "N", FlagValue::Threads};
constexpr Flag kCheckFlag = {"--check", "memcheck,racecheck", FlagValue::Text};
constexpr Flag kThreadOrderFlag = {
    "--thread-order", "forward|reversed|shuffled[:SEED]", FlagValue::Text};
constexpr Flag kReportFlag = {"--report", "json", FlagValue::Report};

/// The usage lines of the CUDA emulator's flags, which both tools take
/// (a string literal, for the tools' usage texts).
#define LCC_EMULATOR_USAGE                                                     \
  "  --device=cuda-emulator      the module's GPU kernels (compiled with\n"    \
  "                              --target=cuda) run on this CPU by the CUDA\n" \
  "                              emulator, block by block, every thread\n"     \
  "                              of a block with CUDA's barriers\n"            \
  "  --check=memcheck,racecheck  with cuda-emulator: check every global\n"     \
  "                              and shared access against its buffer\n"       \
  "                              (memcheck) and shared accesses of two\n"      \
  "                              threads with no barrier between\n"            \
  "                              (racecheck); a finding is an error line\n"    \
  "  --thread-order=forward|reversed|shuffled[:SEED]\n"                        \
  "                              with cuda-emulator: the order a block's\n"    \
  "                              threads run in between barriers\n"

/// One "--flag=value" argument as read, its value checked.
struct FlagArgument {
  std::string flag;
  std::string value;
  uint64_t count = 0; ///< The value of a count flag (and of --threads).
  double real = 0;    ///< The value of a real flag.
};

/// A tool: its name begins its error lines and its --version line, --help
/// prints its usage, and its flags are those its command line takes.
class Tool {
public:
  template <size_t N>
  constexpr Tool(const char *name, const char *usage, const Flag (&flags)[N])
      : name(name), usage(usage), flags(flags), flagCount(N) {}

  /// One `NAME: error: MESSAGE` line on stderr (a line each when MESSAGE
  /// has several, as the CUDA emulator's findings); returns `status`, the
  /// exit status that goes with it.
  int fail(int status, const std::string &message) const;
  /// The error line of `status`, which is freed; returns kExitError.
  int fail(LccStatus status) const;
  /// One `NAME: note: MESSAGE` line on stderr: something the run does that
  /// the user may not expect, which is not an error.
  void note(const std::string &message) const;

  /// Prints the usage for --help or -h, the version for --version; true
  /// when `argument` was one of them, which ends the run.
  bool printsInfo(const std::string &argument) const;

  /// Reads `argument`, an option (isOption), as one of the tool's flags and
  /// checks its value; returns an error message or "".
  std::string readFlag(const std::string &argument, FlagArgument &out) const;

  /// The whole of a tool's main: `parse` reads the command line into
  /// options, returning an error message or "" and setting `exitNow` when
  /// --help or --version printed; a usage error exits with kExitUsage, else
  /// the exit status is that of `runOptions`.
  template <typename Options>
  int run(int argc, char **argv,
          std::string (*parse)(int, char **, Options &, bool &),
          int (*runOptions)(const Options &)) const {
    Options options;
    bool exitNow = false;
    std::string error = parse(argc, argv, options, exitNow);
    if (!error.empty())
      return fail(kExitUsage, error);
    if (exitNow)
      return 0;
    // What the tools size by the user's numbers is checked against the
    // memory limit first; an allocation that still fails is one error line,
    // not an abort.
    try {
      return runOptions(options);
    } catch (const std::bad_alloc &) {
      return fail(kExitError, "out of memory");
    }
  }

private:
  const char *name;
  const char *usage;
  const Flag *flags;
  size_t flagCount;
};

/// Whether `argument` is an option ("--..."); anything else names a file.
bool isOption(const std::string &argument);

/// Takes a file argument as the model when it is the first; a second is an
/// error message, else "".
std::string readModel(const std::string &argument, std::string &model);

/// A decimal count, digits only; false for anything else, or one that does
/// not fit in 64 bits.
bool parseCount(const std::string &text, uint64_t &value);

/// "RESULT:INPUT" (--carry: a result fed to the next call's input), two
/// counts; false for anything else.
bool parseCarry(const std::string &text, std::pair<uint64_t, uint64_t> &out);

/// A file a run reads, and the flag that names it ("--data"; "the model").
struct ReadFile {
  std::string flag;
  std::string path;
};

/// "" unless `output`, which `flag` writes, is the same file as one of
/// `inputs` (through any link): writing it would destroy what the run
/// reads, so it is an error message naming both.
std::string checkNotAnInput(const char *flag, const std::string &output,
                            const std::vector<ReadFile> &inputs);

/// A shape for messages: "[4, 8, 16]".
std::string formatShape(const std::vector<int64_t> &shape);

/// `values` as a JSON list, elements apart by `separator` (", " or ",").
std::string jsonCounts(const std::vector<uint64_t> &values,
                       const char *separator);

/// The message of `status`, which is freed.
std::string takeMessage(LccStatus status);

/// The device a tool runs the module on: --device, --threads, and lcc-run's
/// --max-memory.
struct DeviceOptions {
  std::string kind = "cpu";
  unsigned threads = 0; ///< 0: one per hardware thread.
  bool threadsGiven = false;
  uint64_t maxMemory = 0; ///< 0: the device's default.
  /// cuda-emulator: --check and --thread-order ("": not given).
  std::string checks, threadOrder;

  /// Takes --device, --threads, --check and --thread-order; false for any
  /// other flag.
  bool read(const FlagArgument &argument);
  /// "" unless the flags contradict each other, once all are read.
  std::string check() const;
};

/// Tensors read from .npy files, in the order read, with their views; freed
/// together.
struct NpyFiles {
  std::vector<LccHostTensor> tensors;
  std::vector<LccTensorView> views;

  NpyFiles() = default;
  NpyFiles(const NpyFiles &) = delete;
  NpyFiles &operator=(const NpyFiles &) = delete;
  ~NpyFiles();

  /// Reads the file at `path` after the others; an error message or "".
  std::string read(const std::string &path);
};

/// The handles of one run of a model, destroyed in any order on exit. Each
/// step returns an error message or "".
struct Handles {
  std::string model; ///< The module's path, which errors of the session name.
  LccModule module = nullptr;
  LccDevice device = nullptr;
  LccSession session = nullptr;

  Handles() = default;
  Handles(const Handles &) = delete;
  Handles &operator=(const Handles &) = delete;
  ~Handles();

  /// Loads the module at `path`.
  std::string load(const std::string &path);
  /// Loads the module whose bytes are `bytes`, called `name` in errors.
  std::string loadMemory(const std::string &bytes, const std::string &name);
  /// Creates the device and the module's session on it.
  std::string open(const DeviceOptions &options);
  /// Looks up the function `name` ("": the module's first).
  std::string lookup(const std::string &name, LccFunction &function);

  /// Joins the job this process is a rank of (mpirun; one process alone
  /// otherwise) and gives the session its communicator, after open(). From
  /// then on, in a job of several ranks, the tool's error lines name the
  /// rank and end the whole job. Checks that every rank loaded the same
  /// module, and that a module that splits sequences over P ranks (lcc
  /// --context-parallel) runs in a job of P, or of groups of P.
  std::string joinJob();
  /// Every rank's device peak bytes and bytes given to collectives, in
  /// rank order (one entry alone in a job of one rank). Every rank must
  /// call it: a collective. An error message or "".
  std::string gatherRankUsage(std::vector<uint64_t> &peakBytes,
                              std::vector<uint64_t> &sentBytes);
  int getRank() const { return rank; }
  int getRanks() const { return ranks; }
  LccCommunicator communicator = nullptr;

private:
  int rank = 0, ranks = 1;
};

} // namespace lcc::tools

#endif // LCC_TOOLS_COMMON_RUNTIMETOOL_H
