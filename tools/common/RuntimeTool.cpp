//===- RuntimeTool.cpp - what lcc-run and lcc-train share -----------------===//

#include "common/RuntimeTool.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>

namespace lcc::tools {

namespace {

/// The most threads lccDeviceCreate gives the cpu device.
constexpr uint64_t kMaxThreads = 4096;

} // namespace

namespace {
/// The job a tool's process joined (Handles::joinJob) when it has several
/// ranks: a failing rank names itself and ends the job.
LccCommunicator jobOfSeveralRanks = nullptr;
} // namespace

int Tool::fail(int status, const std::string &message) const {
  std::string rank =
      jobOfSeveralRanks
          ? "rank " +
                std::to_string(lccCommunicatorGetRank(jobOfSeveralRanks)) + ": "
          : "";
  size_t start = 0;
  do {
    size_t end = message.find('\n', start);
    std::string line = message.substr(start, end - start);
    std::fprintf(stderr, "%s: error: %s%s\n", name, rank.c_str(), line.c_str());
    start = end == std::string::npos ? end : end + 1;
  } while (start != std::string::npos);
  // The other ranks would wait for this one in their next collective.
  if (jobOfSeveralRanks) {
    std::fflush(stderr);
    lccCommunicatorAbort(jobOfSeveralRanks, status);
  }
  return status;
}

int Tool::fail(LccStatus status) const {
  return fail(kExitError, takeMessage(status));
}

void Tool::note(const std::string &message) const {
  std::fprintf(stderr, "%s: note: %s\n", name, message.c_str());
}

bool Tool::printsInfo(const std::string &argument) const {
  if (argument == "--help" || argument == "-h") {
    std::fputs(usage, stdout);
    return true;
  }
  if (argument == "--version") {
    std::printf("%s %s (reads .lcm version %u)\n", name, LCC_VERSION,
                unsigned(lccGetModuleVersion()));
    return true;
  }
  return false;
}

std::string Tool::readFlag(const std::string &argument,
                           FlagArgument &out) const {
  size_t equals = argument.find('=');
  out.flag = argument.substr(0, equals);
  bool hasValue = equals != std::string::npos;
  out.value = hasValue ? argument.substr(equals + 1) : "";
  const Flag *flag = nullptr;
  for (size_t i = 0; i < flagCount; ++i)
    if (out.flag == flags[i].name)
      flag = &flags[i];
  if (!flag)
    return "unknown argument '" + argument + "'; see " + name + " --help";
  if (!hasValue || out.value.empty())
    return out.flag + " needs a value: " + out.flag + "=" + flag->form;

  const std::string &value = out.value;
  switch (flag->value) {
  case FlagValue::Text:
    return "";
  case FlagValue::Device:
    if (value != "cpu" && value != "cuda" && value != "cuda-emulator")
      return "unknown " + out.flag + " value '" + value +
             "'; expected 'cpu', 'cuda' or 'cuda-emulator'";
    return "";
  case FlagValue::Report:
    if (value != "json")
      return "unknown " + out.flag + " value '" + value + "'; expected 'json'";
    return "";
  case FlagValue::Real: {
    char *end = nullptr;
    errno = 0;
    out.real = std::strtod(value.c_str(), &end);
    if (*end != '\0' || errno == ERANGE || !std::isfinite(out.real) ||
        std::isspace(static_cast<unsigned char>(value[0])))
      return "invalid " + out.flag + " value '" + value +
             "'; expected a finite number (e.g. 3e-4)";
    return "";
  }
  case FlagValue::Count:
  case FlagValue::PositiveCount:
  case FlagValue::Threads:
    break;
  }
  if (!parseCount(value, out.count))
    return "invalid " + out.flag + " value '" + value +
           "'; expected a non-negative integer";
  if (flag->value != FlagValue::Count && out.count == 0)
    return out.flag + " must be at least 1";
  if (flag->value == FlagValue::Threads && out.count > kMaxThreads)
    return out.flag + " must be at most " + std::to_string(kMaxThreads) +
           ", got " + value;
  return "";
}

bool isOption(const std::string &argument) {
  return argument.size() >= 2 && argument.compare(0, 2, "--") == 0;
}

std::string readModel(const std::string &argument, std::string &model) {
  if (!model.empty())
    return "unexpected argument '" + argument + "': the model is '" + model +
           "'";
  model = argument;
  return "";
}

bool parseCount(const std::string &text, uint64_t &value) {
  // strtoull alone would take a sign or leading spaces.
  if (text.empty() || text[0] < '0' || text[0] > '9')
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  value = parsed;
  return true;
}

bool parseCarry(const std::string &text, std::pair<uint64_t, uint64_t> &out) {
  size_t colon = text.find(':');
  return colon != std::string::npos &&
         parseCount(text.substr(0, colon), out.first) &&
         parseCount(text.substr(colon + 1), out.second);
}

std::string checkNotAnInput(const char *flag, const std::string &output,
                            const std::vector<ReadFile> &inputs) {
  struct stat written;
  // Only a regular file is replaced; a device or a pipe is written in place.
  if (::stat(output.c_str(), &written) != 0 || !S_ISREG(written.st_mode))
    return "";
  for (const ReadFile &input : inputs) {
    struct stat read;
    if (::stat(input.path.c_str(), &read) == 0 &&
        read.st_dev == written.st_dev && read.st_ino == written.st_ino)
      return std::string(flag) + " '" + output + "' is " + input.flag + " '" +
             input.path +
             "', which this run reads: writing it would destroy it; name "
             "another file";
  }
  return "";
}

std::string takeMessage(LccStatus status) {
  std::string message = lccStatusGetMessage(status);
  lccStatusDestroy(status);
  return message;
}

bool DeviceOptions::read(const FlagArgument &argument) {
  if (argument.flag == "--device") {
    kind = argument.value;
    return true;
  }
  if (argument.flag == "--threads") {
    threads = unsigned(argument.count);
    threadsGiven = true;
    return true;
  }
  if (argument.flag == "--check") {
    checks = argument.value;
    return true;
  }
  if (argument.flag == "--thread-order") {
    threadOrder = argument.value;
    return true;
  }
  return false;
}

std::string DeviceOptions::check() const {
  if (threadsGiven && kind != "cpu")
    return "--threads only applies to --device=cpu";
  if (kind != "cuda-emulator" && !checks.empty())
    return "--check only applies to --device=cuda-emulator";
  if (kind != "cuda-emulator" && !threadOrder.empty())
    return "--thread-order only applies to --device=cuda-emulator";
  return "";
}

NpyFiles::~NpyFiles() {
  for (LccHostTensor tensor : tensors)
    lccHostTensorDestroy(tensor);
}

std::string NpyFiles::read(const std::string &path) {
  LccHostTensor tensor = nullptr;
  if (LccStatus status = lccNpyRead(path.c_str(), &tensor))
    return takeMessage(status);
  tensors.push_back(tensor);
  LccTensorView view;
  lccHostTensorGetView(tensor, &view);
  views.push_back(view);
  return "";
}

Handles::~Handles() {
  lccSessionDestroy(session);
  lccDeviceDestroy(device);
  lccModuleDestroy(module);
  if (jobOfSeveralRanks == communicator)
    jobOfSeveralRanks = nullptr;
  lccCommunicatorDestroy(communicator);
}

std::string Handles::gatherRankUsage(std::vector<uint64_t> &peakBytes,
                                     std::vector<uint64_t> &sentBytes) {
  peakBytes = {lccDeviceGetPeakBytes(device)};
  sentBytes = {lccCommunicatorGetSentBytes(communicator)};
  if (ranks == 1)
    return "";
  for (std::vector<uint64_t> *perRank : {&peakBytes, &sentBytes}) {
    uint64_t mine = perRank->front();
    perRank->resize(static_cast<size_t>(ranks));
    if (LccStatus status = lccCommunicatorAllGather(
            communicator, &mine, sizeof(mine), perRank->data()))
      return takeMessage(status);
  }
  return "";
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

std::string jsonCounts(const std::vector<uint64_t> &values,
                       const char *separator) {
  std::string json = "[";
  for (size_t i = 0; i < values.size(); ++i)
    json += (i ? separator : "") + std::to_string(values[i]);
  return json + "]";
}

std::string Handles::joinJob() {
  if (LccStatus status = lccCommunicatorCreate(&communicator))
    return takeMessage(status);
  rank = lccCommunicatorGetRank(communicator);
  ranks = lccCommunicatorGetSize(communicator);
  if (LccStatus status = lccSessionSetCommunicator(session, communicator))
    return takeMessage(status);
  if (ranks > 1)
    jobOfSeveralRanks = communicator;
  // Each rank of a group holds a share of every sequence: the job must be
  // made of such groups.
  uint32_t shares = lccModuleGetContextParallel(module);
  if (shares > 1 && uint32_t(ranks) % shares != 0)
    return model + " splits each sequence over " + std::to_string(shares) +
           " ranks (lcc --context-parallel=" + std::to_string(shares) +
           "): run it under mpirun -np " + std::to_string(shares) +
           " (or a multiple: groups of " + std::to_string(shares) +
           " ranks, each its own rows), not in a job of " +
           std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
  if (ranks == 1)
    return "";
  // Ranks running different artifacts would reduce unrelated tensors.
  uint64_t mine = lccModuleGetChecksum(module);
  std::vector<uint64_t> every(static_cast<size_t>(ranks));
  if (LccStatus status = lccCommunicatorAllGather(communicator, &mine,
                                                  sizeof(mine), every.data()))
    return takeMessage(status);
  for (int r = 0; r < ranks; ++r)
    if (every[size_t(r)] != mine)
      return model + " is not the module rank " + std::to_string(r) +
             " loaded: every rank of the job must run the same artifact";
  return "";
}

std::string Handles::load(const std::string &path) {
  model = path;
  if (LccStatus status = lccModuleLoadFile(path.c_str(), &module))
    return takeMessage(status);
  return "";
}

std::string Handles::loadMemory(const std::string &bytes,
                                const std::string &name) {
  model = name;
  if (LccStatus status =
          lccModuleLoadMemory(bytes.data(), bytes.size(), &module))
    return name + ": " + takeMessage(status);
  return "";
}

std::string Handles::open(const DeviceOptions &options) {
  if (LccStatus status =
          lccDeviceCreate(options.kind.c_str(), options.threads, &device))
    return takeMessage(status);
  if (options.maxMemory)
    lccDeviceSetMemoryLimit(device, options.maxMemory);
  if (!options.checks.empty() || !options.threadOrder.empty())
    if (LccStatus status = lccDeviceSetEmulatorChecks(
            device, options.checks.empty() ? "none" : options.checks.c_str(),
            options.threadOrder.empty() ? nullptr
                                        : options.threadOrder.c_str()))
      return takeMessage(status);
  // Creating the session picks the module's code for the device: its errors
  // name the model.
  if (LccStatus status = lccSessionCreate(device, module, &session))
    return model + ": " + takeMessage(status);
  return "";
}

std::string Handles::lookup(const std::string &name, LccFunction &function) {
  // Looking a function up loads its code: its errors name the model too.
  if (LccStatus status =
          lccSessionLookupFunction(session, name.c_str(), &function))
    return model + ": " + takeMessage(status);
  return "";
}

} // namespace lcc::tools
