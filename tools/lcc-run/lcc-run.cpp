//===- lcc-run.cpp - runs a compiled lcc module ---------------------------===//
//
// lcc-run MODEL.lcm [--device=cpu|cuda|cuda-emulator] [--function=NAME]
//     [--input=FILE.npy]... [--params=FILE.safetensors] [--output-dir=DIR]
//     [--results-file=FILE.safetensors] [--repeat=N] [--warmup=N]
//     [--report=json] [--threads=N] [--max-memory=BYTES]
//     [--segments=N [--carry=RESULT:INPUT]...]
// lcc-run MODEL.lcm --init-params=FILE.safetensors [--seed=N]
// lcc-run MODEL.lcm --list
//
// The command line is a contract (docs/design.md §6): inputs in argument order,
// result i written to DIR/result<i>.npy, and every error one
// `lcc-run: error:` line on stderr with exit status 1 (2 for usage errors).
// Uses the runtime's C API only, as any embedding application would.
//
//===----------------------------------------------------------------------===//

#include "common/RuntimeTool.h"
#include "common/SequenceShares.h"

#include "lcc/runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace lcc::tools;

namespace {

// clang-format off: the usage text as it prints.
const char kUsage[] =
    "usage: lcc-run MODEL.lcm [options]\n"
    "\n"
    "Runs a function of a compiled lcc module and writes its results.\n"
    "\n"
    "  --device=cpu|cuda           device to run on (default cpu); cuda runs\n"
    "                              on GPU 0 through the NVIDIA driver,\n"
    "                              libcuda.so.1 (or $LCC_CUDA_DRIVER),\n"
    "                              with the module's cubin for the GPU's\n"
    "                              architecture, else its PTX\n"
    LCC_EMULATOR_USAGE
    "  --function=NAME             function to run (default: the first)\n"
    "  --input=FILE.npy            next input, in argument order (repeat)\n"
    "  --params=FILE.safetensors   weights, bound to parameters by name\n"
    "  --output-dir=DIR            where result<i>.npy go, created if missing\n"
    "                              (default .)\n"
    "  --results-file=FILE.safetensors\n"
    "                              also write every result of the last call\n"
    "                              to one .safetensors file, each by its\n"
    "                              name (--list shows them; result<i> if it\n"
    "                              has none): a gradients function's\n"
    "                              gradients by parameter name\n"
    "  --segments=N                run a long input as N calls, one per\n"
    "                              segment: an input file holds one value\n"
    "                              for every segment, or N stacked on a new\n"
    "                              leading axis; each result<i>.npy stacks\n"
    "                              the N segments' results the same way\n"
    "                              (in memory: N times the results must fit\n"
    "                              in --max-memory, checked before running)\n"
    "  --carry=RESULT:INPUT        with --segments: result RESULT of each\n"
    "                              segment is the next segment's input\n"
    "                              INPUT, kept on the device (a model's new\n"
    "                              memories); the input file gives the first\n"
    "                              segment's value (repeat)\n"
    "  --repeat=N                  timed runs (default 1)\n"
    "  --warmup=N                  untimed runs before them (default 0)\n"
    "  --report=json               print one JSON object instead of text\n"
    "  --threads=N                 threads of the cpu device (default: the CPUs\n"
    "                              the process may run on)\n"
    "  --max-memory=BYTES          most memory the device may hold, with an\n"
    "                              optional K, M or G suffix (default: the\n"
    "                              machine's physical memory on cpu); more is\n"
    "                              an error before anything is allocated\n"
    "  --list                      print the module's functions (inputs and\n"
    "                              results by name, dtype and shape),\n"
    "                              parameters (optimizer state marked as\n"
    "                              such) and executables, then exit\n"
    "  --init-params=FILE.safetensors\n"
    "                              write freshly initialised weights for the\n"
    "                              module's parameters (no optimizer state,\n"
    "                              which starts at zero), then exit\n"
    "  --seed=N                    seed for --init-params (default 0)\n"
    "  --help, --version\n"
    "\n"
    "Under `mpirun -np P lcc-run MODEL.lcm ...` (the same arguments on every\n"
    "rank) every rank runs the function, its collectives among the ranks;\n"
    "rank 0 writes the results and the report, whose JSON adds \"ranks\",\n"
    "\"peak_bytes_per_rank\" and \"sent_bytes_per_rank\". A rank that fails\n"
    "ends the job with its error line.\n";
// clang-format on

// Each option, what its value looks like (for the error when it is missing)
// and how it is checked.
constexpr Flag kFlags[] = {
    kDeviceFlag,
    {"--function", "NAME", FlagValue::Text},
    {"--input", "FILE.npy", FlagValue::Text},
    {"--params", "FILE.safetensors", FlagValue::Text},
    {"--output-dir", "DIR", FlagValue::Text},
    {"--repeat", "N", FlagValue::PositiveCount},
    {"--warmup", "N", FlagValue::Count},
    kReportFlag,
    kThreadsFlag,
    kCheckFlag,
    kThreadOrderFlag,
    {"--init-params", "FILE.safetensors", FlagValue::Text},
    {"--seed", "N", FlagValue::Count},
    {"--max-memory", "BYTES", FlagValue::Text},
    {"--results-file", "FILE.safetensors", FlagValue::Text},
    {"--segments", "N", FlagValue::PositiveCount},
    {"--carry", "RESULT:INPUT", FlagValue::Text}};

constexpr Tool kTool("lcc-run", kUsage, kFlags);

struct Options {
  std::string model;
  DeviceOptions device;
  std::string function;
  std::vector<std::string> inputs;
  std::string params;
  std::string outputDir = ".";
  std::string resultsFile;
  uint64_t repeat = 1;
  uint64_t warmup = 0;
  bool jsonReport = false;
  std::string initParams;
  uint64_t seed = 0;
  bool seedGiven = false;
  bool list = false;
  uint64_t segments = 1;
  std::vector<std::pair<uint64_t, uint64_t>> carries; // (result, input)
};

/// "512M" -> 536870912 (K, M, G: powers of 1024); false for anything else.
bool parseBytes(std::string text, uint64_t &bytes) {
  uint64_t scale = 1;
  if (!text.empty()) {
    char suffix = text.back();
    int shift = suffix == 'K' || suffix == 'k'   ? 10
                : suffix == 'M' || suffix == 'm' ? 20
                : suffix == 'G' || suffix == 'g' ? 30
                                                 : 0;
    if (shift) {
      scale = uint64_t(1) << shift;
      text.pop_back();
    }
  }
  uint64_t count = 0;
  if (!parseCount(text, count) || count > UINT64_MAX / scale)
    return false;
  bytes = count * scale;
  return true;
}

/// Parses argv into `options`; returns an error message or "".
std::string parseArguments(int argc, char **argv, Options &options,
                           bool &exitNow) {
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (kTool.printsInfo(argument)) {
      exitNow = true;
      return "";
    }
    if (argument == "--list") {
      options.list = true;
      continue;
    }
    if (!isOption(argument)) {
      std::string error = readModel(argument, options.model);
      if (!error.empty())
        return error;
      continue;
    }
    FlagArgument read;
    std::string error = kTool.readFlag(argument, read);
    if (!error.empty())
      return error;
    if (options.device.read(read))
      continue;
    const std::string &flag = read.flag, &value = read.value;
    if (flag == "--function") {
      options.function = value;
    } else if (flag == "--input") {
      options.inputs.push_back(value);
    } else if (flag == "--params") {
      options.params = value;
    } else if (flag == "--output-dir") {
      options.outputDir = value;
    } else if (flag == "--results-file") {
      options.resultsFile = value;
    } else if (flag == "--repeat") {
      options.repeat = read.count;
    } else if (flag == "--warmup") {
      options.warmup = read.count;
    } else if (flag == "--report") {
      options.jsonReport = true;
    } else if (flag == "--init-params") {
      options.initParams = value;
    } else if (flag == "--seed") {
      options.seed = read.count;
      options.seedGiven = true;
    } else if (flag == "--segments") {
      options.segments = read.count;
    } else if (flag == "--carry") {
      std::pair<uint64_t, uint64_t> carry;
      if (!parseCarry(value, carry))
        return "invalid --carry value '" + value +
               "'; expected RESULT:INPUT, two indices (e.g. 1:1)";
      options.carries.push_back(carry);
    } else if (flag == "--max-memory") {
      uint64_t &bytes = options.device.maxMemory;
      if (!parseBytes(value, bytes) || bytes == 0)
        return "invalid --max-memory value '" + value +
               "'; expected a number of bytes >= 1 with an optional K, M or "
               "G suffix";
    }
  }
  if (options.model.empty())
    return "no model given; usage: lcc-run MODEL.lcm [options] (see --help)";
  if (options.seedGiven && options.initParams.empty())
    return "--seed only applies to --init-params";
  if (!options.carries.empty() && options.segments < 2)
    return "--carry feeds one segment's result to the next: give "
           "--segments=N with N >= 2";
  if (options.list &&
      (!options.inputs.empty() || !options.params.empty() ||
       !options.initParams.empty() || !options.resultsFile.empty()))
    return "--list prints what the module holds and runs nothing; drop "
           "--input, --params and --init-params";
  return options.device.check();
}

/// The shortest decimal text that reads back as the same double.
std::string formatNumber(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  char text[40];
  // Integers (the common checksum of integer test data) print in full.
  if (value == std::trunc(value) && std::fabs(value) < 0x1p53) {
    std::snprintf(text, sizeof(text), "%.0f", value);
    return text;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}

std::string jsonNumber(double value) {
  return std::isfinite(value) ? formatNumber(value) : "null";
}

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", byte);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string formatShape(const LccTensorView &tensor, const char *separator) {
  std::string out = "[";
  for (size_t i = 0; i < tensor.rank; ++i)
    out += (i ? separator : "") + std::to_string(tensor.shape[i]);
  return out + "]";
}

double checksum(const LccTensorView &tensor) {
  uint64_t count = tensor.size / lccDTypeGetSize(tensor.dtype);
  double sum = 0;
  for (uint64_t i = 0; i < count; ++i)
    sum += lccTensorGetElement(&tensor, i);
  return sum;
}

/// "\"tokens\": [1, 1024] i32"; the name JSON-quoted, since it comes from
/// the file.
std::string describeSignature(const LccTensorView &signature) {
  return jsonString(signature.name ? signature.name : "") + ": " +
         formatShape(signature, ", ") + " " + lccDTypeGetName(signature.dtype);
}

/// `lcc-run MODEL --list`: what the module holds, from the C API alone.
int listModule(LccModule module, const std::string &path) {
  std::printf("%s\n", path.c_str());
  size_t functions = lccModuleGetFunctionCount(module);
  for (size_t f = 0; f < functions; ++f) {
    std::printf("function %s: %zu commands, arena %llu bytes\n",
                jsonString(lccModuleGetFunctionName(module, f)).c_str(),
                lccModuleGetFunctionCommandCount(module, f),
                (unsigned long long)lccModuleGetFunctionArenaBytes(module, f));
    for (size_t i = 0; i < lccModuleGetFunctionInputCount(module, f); ++i) {
      LccTensorView input;
      lccModuleGetFunctionInput(module, f, i, &input);
      int64_t low, high;
      std::string range;
      if (lccModuleGetFunctionInputRange(module, f, i, &low, &high))
        range = ", values in [" + std::to_string(low) + ", " +
                std::to_string(high) + "]";
      std::printf("  input %zu %s%s\n", i, describeSignature(input).c_str(),
                  range.c_str());
    }
    for (size_t i = 0; i < lccModuleGetFunctionOutputCount(module, f); ++i) {
      LccTensorView output;
      lccModuleGetFunctionOutput(module, f, i, &output);
      std::printf("  result %zu %s (result%zu.npy)\n", i,
                  describeSignature(output).c_str(), i);
    }
  }
  size_t parameters = lccModuleGetParameterCount(module);
  size_t state = 0, caches = 0;
  for (size_t p = 0; p < parameters; ++p) {
    caches += size_t(lccModuleIsDecodeCache(module, p));
    state += size_t(lccModuleIsStateParameter(module, p) &&
                    !lccModuleIsDecodeCache(module, p));
  }
  std::string stateCount;
  if (state)
    stateCount += std::to_string(state) + " optimizer state";
  if (caches)
    stateCount +=
        (state ? ", " : "") + std::to_string(caches) + " decode caches";
  if (!stateCount.empty())
    stateCount = " (" + stateCount + ")";
  std::printf("%zu parameters%s, %llu bytes to bind from --params\n",
              parameters, stateCount.c_str(),
              (unsigned long long)lccModuleGetParameterBytes(module));
  for (size_t p = 0; p < parameters; ++p) {
    LccTensorView parameter;
    lccModuleGetParameter(module, p, &parameter);
    std::string init = lccModuleGetParameterInit(module, p);
    // A hyper-parameter (optimizer.lr) starts at its constant.
    std::string kind =
        !lccModuleIsStateParameter(module, p) ? init
        : lccModuleIsDecodeCache(module, p) ? "decode cache (filled by prefill)"
        : init.rfind("constant", 0) == 0    ? "optimizer state, " + init
                                            : "optimizer state";
    std::printf("  %s, %s\n", describeSignature(parameter).c_str(),
                parameter.data ? "embedded" : kind.c_str());
  }
  for (size_t e = 0; e < lccModuleGetExecutableCount(module); ++e) {
    std::string description = lccModuleGetExecutableDescription(module, e);
    std::printf("executable %zu: %s\n", e, description.c_str());
    // lcc --cpu=native (its default) records the build machine's features.
    if (description.find(", needs ") != std::string::npos)
      std::printf("  (a CPU lacking one of these refuses it; lcc --cpu=NAME "
                  "picks them: the default 'native' takes the build "
                  "machine's, 'x86-64-v3' any AVX2 CPU's)\n");
  }
  return 0;
}

/// The inputs of each segment's call (--segments=N): a file holding N
/// values of its argument stacked on a new leading axis gives one to each
/// segment; any other file gives its value to every segment, or to the
/// first only when a result is carried into it (later ones keep the carried
/// value: no data). Each segment's views are made when it runs, so that N
/// costs no memory of its own.
class SegmentInputs {
public:
  /// Returns an error message or "".
  std::string split(LccFunction function, const Options &options,
                    const std::vector<std::string> &paths,
                    const std::vector<LccTensorView> &files) {
    count = options.segments;
    this->files = files;
    stacked.assign(files.size(), false);
    carried.assign(files.size(), false);
    size_t inputs = lccFunctionGetInputCount(function);
    for (size_t i = 0; i < files.size() && i < inputs; ++i) {
      LccTensorView signature;
      lccFunctionGetInput(function, i, &signature);
      const LccTensorView &file = files[i];
      carried[i] = std::any_of(options.carries.begin(), options.carries.end(),
                               [&](const std::pair<uint64_t, uint64_t> &c) {
                                 return c.second == i;
                               });
      if (file.rank != signature.rank + 1)
        continue;
      if (carried[i])
        return "input " + std::to_string(i) + " ('" + paths[i] +
               "') is carried from a result: give its first segment's value "
               "only, not one per segment";
      if (file.shape[0] != int64_t(count))
        return "input " + std::to_string(i) + " ('" + paths[i] + "') holds " +
               std::to_string(file.shape[0]) + " stacked values, but " +
               "--segments=" + std::to_string(count);
      stacked[i] = true;
    }
    return "";
  }

  uint64_t size() const { return count; }

  /// The inputs of segment `s`.
  const std::vector<LccTensorView> &at(uint64_t s) {
    views = files;
    for (size_t i = 0; i < files.size(); ++i) {
      LccTensorView &view = views[i];
      if (stacked[i]) {
        uint64_t bytes = files[i].size / count;
        view.shape = files[i].shape + 1;
        view.rank = files[i].rank - 1;
        view.data = static_cast<const char *>(files[i].data) + s * bytes;
        view.size = bytes;
      } else if (carried[i] && s > 0) {
        view.data = nullptr;
        view.size = 0;
      }
    }
    return views;
  }

private:
  uint64_t count = 1;
  std::vector<LccTensorView> files, views;
  std::vector<bool> stacked, carried;
};

/// The most memory what lcc-run keeps on the host may take: --max-memory,
/// else the machine's physical memory (the cpu device's own default).
struct HostMemoryLimit {
  explicit HostMemoryLimit(const DeviceOptions &device)
      : given(device.maxMemory != 0),
        bytes(given ? device.maxMemory : lccGetPhysicalMemoryBytes()) {}

  /// "the 1024-byte memory limit (--max-memory)".
  std::string describe() const {
    return "the " + std::to_string(bytes) + "-byte memory limit " +
           (given ? "(--max-memory)" : "(physical memory; --max-memory)");
  }

  bool given;
  uint64_t bytes;
};

/// An error message unless the host memory a run of `options.segments`
/// segments keeps (each result stacked N times, each call's time) fits in
/// the memory limit.
std::string checkSegmentsFit(LccFunction function, const Options &options) {
  uint64_t perSegment = sizeof(double) * options.repeat;
  for (size_t i = 0; i < lccFunctionGetOutputCount(function); ++i) {
    LccTensorView output;
    lccFunctionGetOutput(function, i, &output);
    perSegment += output.size;
  }
  HostMemoryLimit limit(options.device);
  uint64_t total = 0;
  bool overflows = __builtin_mul_overflow(perSegment, options.segments, &total);
  if (!overflows && total <= limit.bytes)
    return "";
  return "--segments=" + std::to_string(options.segments) + " keeps " +
         std::to_string(perSegment) + " bytes a segment (its results " +
         "stacked, its times), " +
         (overflows ? "more than 2^64" : std::to_string(total)) +
         " bytes in all, more than " + limit.describe();
}

/// Each result of one run's segments, stacked on a new leading axis.
struct StackedResults {
  std::vector<std::vector<uint8_t>> data;
  std::vector<std::vector<int64_t>> shapes;

  void add(LccFunction function, uint64_t segment, uint64_t count) {
    size_t outputs = lccFunctionGetOutputCount(function);
    data.resize(outputs);
    shapes.resize(outputs);
    for (size_t i = 0; i < outputs; ++i) {
      LccTensorView result;
      lccFunctionGetResult(function, i, &result);
      data[i].resize(result.size * count);
      std::memcpy(data[i].data() + segment * result.size, result.data,
                  result.size);
      shapes[i].assign(1, int64_t(count));
      shapes[i].insert(shapes[i].end(), result.shape,
                       result.shape + result.rank);
    }
  }

  /// Result `i`: the function's own result view, with the stacked shape
  /// and data.
  LccTensorView view(LccFunction function, size_t i) const {
    LccTensorView result;
    lccFunctionGetResult(function, i, &result);
    result.shape = shapes[i].data();
    result.rank = shapes[i].size();
    result.data = data[i].data();
    result.size = data[i].size();
    return result;
  }
};

/// Creates --output-dir and its parents where missing (as mkdir -p); the
/// reason, with the path, when it cannot.
std::string createOutputDirectory(const std::string &directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (!ec && !std::filesystem::is_directory(directory, ec))
    ec = std::make_error_code(std::errc::not_a_directory);
  if (!ec)
    return "";
  return "cannot create --output-dir '" + directory + "': " + ec.message();
}

int run(const Options &options) {
  Handles handles;
  std::string error = handles.load(options.model);
  if (!error.empty())
    return kTool.fail(kExitError, error);

  if (options.list)
    return listModule(handles.module, options.model);

  if (!options.initParams.empty()) {
    // A weights file the device could not hold is no use, and the bytes
    // come from the module alone: refuse it before writing anything.
    HostMemoryLimit limit(options.device);
    uint64_t bytes = lccModuleGetParameterBytes(handles.module);
    if (bytes > limit.bytes)
      return kTool.fail(kExitError, options.model + ": its parameters need " +
                                        std::to_string(bytes) +
                                        " bytes, more than " +
                                        limit.describe());
    error = checkNotAnInput("--init-params", options.initParams,
                            {{"the model", options.model}});
    if (!error.empty())
      return kTool.fail(kExitError, error);
    if (LccStatus status = lccModuleWriteInitialParameters(
            handles.module, options.seed, options.initParams.c_str()))
      return kTool.fail(status);
    std::printf("wrote initial values of the parameters of '%s' (seed %llu) "
                "to '%s'\n",
                options.model.c_str(), (unsigned long long)options.seed,
                options.initParams.c_str());
    return 0;
  }

  error = handles.open(options.device);
  if (error.empty())
    error = handles.joinJob();
  if (!error.empty())
    return kTool.fail(kExitError, error);
  // In a job of several ranks (mpirun), every rank runs; rank 0 writes.
  bool leader = handles.getRank() == 0;
  if (!options.params.empty())
    if (LccStatus status = lccSessionBindParametersFile(handles.session,
                                                        options.params.c_str()))
      return kTool.fail(status);
  LccFunction function = nullptr;
  error = handles.lookup(options.function, function);
  if (!error.empty())
    return kTool.fail(kExitError, error);

  if (options.segments > 1)
    error = checkSegmentsFit(function, options);
  if (!error.empty())
    return kTool.fail(kExitError, error);

  // What the run writes may not be what it reads: checked before it runs.
  std::vector<ReadFile> read = {{"the model", options.model}};
  if (!options.params.empty())
    read.push_back({"--params", options.params});
  for (const std::string &path : options.inputs)
    read.push_back({"--input", path});
  std::string directory = options.outputDir;
  if (directory.back() != '/')
    directory += '/';
  size_t outputCount = lccFunctionGetOutputCount(function);
  std::vector<std::string> files;
  for (size_t i = 0; i < outputCount && error.empty(); ++i) {
    files.push_back(directory + "result" + std::to_string(i) + ".npy");
    error = checkNotAnInput("--output-dir", files.back(), read);
  }
  if (error.empty() && !options.resultsFile.empty())
    error = checkNotAnInput("--results-file", options.resultsFile, read);
  if (error.empty() && outputCount > 0 && leader)
    error = createOutputDirectory(options.outputDir);
  if (!error.empty())
    return kTool.fail(kExitError, error);

  NpyFiles inputs;
  for (const std::string &path : options.inputs) {
    error = inputs.read(path);
    if (!error.empty())
      return kTool.fail(kExitError, error);
  }
  // Context parallelism: each rank takes its share of the whole inputs.
  SequenceShares shares(handles.module, lccFunctionGetName(function),
                        handles.getRank());
  if (shares.splits() && (options.segments > 1 || !options.carries.empty()))
    return kTool.fail(kExitUsage,
                      std::string(options.segments > 1 ? "--segments"
                                                       : "--carry") +
                          " with a function that splits its sequence over "
                          "ranks (lcc --context-parallel) is not supported "
                          "yet");
  if (inputs.views.size() == lccFunctionGetInputCount(function))
    for (size_t i = 0; i < inputs.views.size() && error.empty(); ++i) {
      LccTensorView signature;
      lccFunctionGetInput(function, i, &signature);
      error = shares.cutInput(i, signature, inputs.views[i],
                              "--input '" + options.inputs[i] + "'");
    }
  if (!error.empty())
    return kTool.fail(kExitError, error);

  for (const auto &[result, input] : options.carries)
    if (LccStatus status = lccFunctionCarryResult(function, result, input))
      return kTool.fail(status);
  SegmentInputs segmentInputs;
  error = segmentInputs.split(function, options, options.inputs, inputs.views);
  if (!error.empty())
    return kTool.fail(kExitError, error);
  bool segmented = options.segments > 1;
  StackedResults stacked;
  // One run is a call per segment; each call's time, from the runtime's own
  // clock, goes into the report's median and minimum.
  std::vector<double> callMs;
  // `last`: the run whose results are written, the only one stacked.
  auto runSegments = [&](bool timed, bool last) -> LccStatus {
    for (uint64_t s = 0; s < segmentInputs.size(); ++s) {
      const std::vector<LccTensorView> &views = segmentInputs.at(s);
      uint64_t before = lccFunctionGetTotalNanoseconds(function);
      if (LccStatus status =
              lccFunctionCall(function, views.data(), views.size()))
        return status;
      if (timed)
        callMs.push_back(
            double(lccFunctionGetTotalNanoseconds(function) - before) / 1e6);
      if (segmented && last)
        stacked.add(function, s, segmentInputs.size());
    }
    return nullptr;
  };
  for (uint64_t i = 0; i < options.warmup; ++i)
    if (LccStatus status = runSegments(false, false))
      return kTool.fail(status);
  lccFunctionResetStats(function);
  for (uint64_t i = 0; i < options.repeat; ++i)
    if (LccStatus status = runSegments(true, i + 1 == options.repeat))
      return kTool.fail(status);
  // Results split over the ranks, gathered whole (every rank takes part).
  std::vector<LccTensorView> wholeResults(outputCount);
  for (size_t i = 0; i < outputCount && error.empty(); ++i) {
    lccFunctionGetResult(function, i, &wholeResults[i]);
    error = shares.gatherResult(handles.communicator, i, wholeResults[i]);
  }
  if (!error.empty())
    return kTool.fail(kExitError, error);
  auto resultView = [&](size_t i) {
    if (segmented)
      return stacked.view(function, i);
    return wholeResults[i];
  };
  std::sort(callMs.begin(), callMs.end());
  double medianMs =
      callMs.size() % 2
          ? callMs[callMs.size() / 2]
          : (callMs[callMs.size() / 2 - 1] + callMs[callMs.size() / 2]) / 2;

  // Every rank's memory and traffic, for the leader's report.
  std::vector<uint64_t> peakBytes, sentBytes;
  error = handles.gatherRankUsage(peakBytes, sentBytes);
  if (!error.empty())
    return kTool.fail(kExitError, error);
  if (!leader)
    return 0;
  std::vector<double> sums;
  for (size_t i = 0; i < outputCount; ++i) {
    LccTensorView result = resultView(i);
    if (LccStatus status = lccNpyWrite(files[i].c_str(), &result))
      return kTool.fail(status);
    sums.push_back(checksum(result));
  }
  if (!options.resultsFile.empty()) {
    std::vector<LccTensorView> results(outputCount);
    std::vector<std::string> names(outputCount);
    for (size_t i = 0; i < outputCount; ++i) {
      results[i] = resultView(i);
      names[i] = results[i].name && results[i].name[0]
                     ? results[i].name
                     : "result" + std::to_string(i);
      results[i].name = names[i].c_str();
    }
    if (LccStatus status = lccSafetensorsWrite(options.resultsFile.c_str(),
                                               results.data(), results.size()))
      return kTool.fail(status);
  }

  double calls = double(lccFunctionGetCallCount(function));
  auto meanMs = [&](uint64_t nanoseconds) {
    return double(nanoseconds) / calls / 1e6;
  };
  double mean = meanMs(lccFunctionGetTotalNanoseconds(function));
  if (!options.jsonReport) {
    for (size_t i = 0; i < outputCount; ++i) {
      LccTensorView result = resultView(i);
      std::printf("result%zu: %s %s checksum %s (%s)\n", i,
                  formatShape(result, ", ").c_str(),
                  lccDTypeGetName(result.dtype), formatNumber(sums[i]).c_str(),
                  files[i].c_str());
    }
    std::printf("mean %.6f ms per call over %llu call%s\n", mean,
                (unsigned long long)calls, calls == 1 ? "" : "s");
    return 0;
  }

  std::string json = "{";
  json += "\"model\":" + jsonString(options.model);
  json += ",\"function\":" + jsonString(lccFunctionGetName(function));
  json += ",\"device\":" + jsonString(lccDeviceGetKind(handles.device));
  if (options.device.kind == "cpu") {
    json += ",\"threads\":" +
            std::to_string(lccDeviceGetThreadCount(handles.device));
  } else {
    // Which GPU ran it, and the code it ran.
    json += ",\"device_name\":" + jsonString(lccDeviceGetName(handles.device));
    json += ",\"device_arch\":" +
            jsonString(lccDeviceGetArchitecture(handles.device));
  }
  json += ",\"calls\":" + std::to_string(lccFunctionGetCallCount(function));
  json += ",\"warmup\":" + std::to_string(options.warmup);
  if (segmented)
    json += ",\"segments\":" + std::to_string(options.segments);
  json += ",\"mean_ms\":" + jsonNumber(mean);
  json += ",\"median_ms\":" + jsonNumber(medianMs);
  json += ",\"min_ms\":" + jsonNumber(callMs.front());
  json += ",\"peak_bytes\":" + std::to_string(peakBytes.front());
  if (handles.getRanks() > 1) {
    json += ",\"ranks\":" + std::to_string(handles.getRanks());
    json += ",\"peak_bytes_per_rank\":" + jsonCounts(peakBytes, ",");
    json += ",\"sent_bytes_per_rank\":" + jsonCounts(sentBytes, ",");
  }
  json +=
      ",\"arena_bytes\":" + std::to_string(lccFunctionGetArenaBytes(function));
  json += ",\"commands\":[";
  for (size_t i = 0; i < lccFunctionGetCommandCount(function); ++i) {
    LccCommandStats stats;
    lccFunctionGetCommandStats(function, i, &stats);
    json += i ? ",{" : "{";
    json += "\"name\":" + jsonString(stats.name);
    if (stats.location[0])
      json += ",\"location\":" + jsonString(stats.location);
    json += ",\"kind\":" + jsonString(stats.kind);
    double ms = meanMs(stats.totalNanoseconds);
    json += ",\"mean_ms\":" + jsonNumber(ms);
    if (double flops = lccFunctionGetCommandFlops(function, i); flops > 0) {
      json += ",\"flops\":" + jsonNumber(flops);
      if (ms > 0)
        json += ",\"gflops_per_s\":" + jsonNumber(flops / ms / 1e6);
    }
    json += "}";
  }
  json += "],\"outputs\":[";
  for (size_t i = 0; i < outputCount; ++i) {
    LccTensorView result = resultView(i);
    json += i ? ",{" : "{";
    json += "\"name\":" + jsonString(result.name);
    json += ",\"file\":" + jsonString(files[i]);
    json += ",\"dtype\":" + jsonString(lccDTypeGetName(result.dtype));
    json += ",\"shape\":" + formatShape(result, ",");
    json += ",\"checksum\":" + jsonNumber(sums[i]);
    json += "}";
  }
  json += "]}";
  std::printf("%s\n", json.c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  return kTool.run(argc, argv, parseArguments, run);
}
