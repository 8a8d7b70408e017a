//===- lcc-train.cpp - trains a compiled lcc module -----------------------===//
//
// lcc-train MODEL.lcm --data=FILE.npy... [--eval-data=FILE.npy...]
//     [--params=FILE.safetensors | --seed=N] [--steps=N] [--eval-every=N]
//     [--checkpoint=FILE.safetensors] [--report=json]
//     [--device=cpu|cuda|cuda-emulator] [--check=...] [--thread-order=...]
//     [--threads=N] [--eval-function=NAME] [--carry=RESULT:INPUT]...
//     [--lr=F] [--warmup=N] [--schedule=constant|linear|cosine] [--min-lr=F]
//     [--weight-decay=F] [--grad-clip=F] [--beta1=F] [--beta2=F]
//     [--epsilon=F]
//
// The command line is a contract (docs/design.md §6). Training is the module's
// own `train_step` (`lcc --train`): it takes one batch of the loss
// function's arguments, updates the parameters and optimizer state in place
// on the device, and returns the loss. This tool only feeds it batches,
// evaluates the loss function, sets the optimizer's hyper-parameters
// (HyperParameters.h), reports and writes checkpoints. Uses the
// runtime's C API only, as lcc-run does; every error is one
// `lcc-train: error:` line with exit status 1 (2 for usage errors).
//
//===----------------------------------------------------------------------===//

#include "CarriedInputs.h"
#include "DataOrder.h"
#include "HyperParameters.h"
#include "ReportFormat.h"
#include "TrainingData.h"
#include "TrainingPlot.h"
#include "common/RuntimeTool.h"

#include "lcc/runtime.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

using namespace lcc::tools;
using namespace lcc::train;

namespace {

// clang-format off: the usage text as it prints.
const char kUsage[] =
    "usage: lcc-train MODEL.lcm --data=FILE.npy... [options]\n"
    "\n"
    "Trains a module compiled with `lcc --train`: each step calls its\n"
    "train_step on the next batch of the data, which updates the\n"
    "parameters and optimizer state on the device and returns the loss.\n"
    "\n"
    "  --data=FILE.npy...          training data, one file per argument of\n"
    "                              train_step (the loss function's) that\n"
    "                              is not carried, in argument order:\n"
    "                              repeat the flag, list the files after\n"
    "                              it, or separate them by commas. Each\n"
    "                              file is [N, ...]: the\n"
    "                              argument's shape without its first\n"
    "                              (batch) dimension B, with the dtype of\n"
    "                              the argument; every file has the same N.\n"
    "                              Step s (from 1) takes rows (s-1)*B ..\n"
    "                              s*B-1 (mod N),\n"
    "                              wrapping around at the end (--shuffle:\n"
    "                              positions, each pass a permutation;\n"
    "                              --accumulate=K: K batches, rows\n"
    "                              (s-1)*K*B .. s*K*B-1)\n"
    "  --carry=RESULT:INPUT        result RESULT of each step is the next\n"
    "                              step's argument INPUT, kept on the\n"
    "                              device (repeat): a Transformer-XL's new\n"
    "                              memories, for data that is a text in\n"
    "                              consecutive segments. A carried argument\n"
    "                              takes no --data file; it starts at zeros,\n"
    "                              again when the data starts over, and at\n"
    "                              the start of each evaluation (the loss\n"
    "                              function returns the same results)\n"
    "  --eval-data=FILE.npy...     evaluation data in the same form\n"
    "                              (default: the training data)\n"
    "  --eval-function=NAME        the loss function that evaluates\n"
    "                              (default loss): it runs over every full\n"
    "                              batch of the evaluation data, and the\n"
    "                              eval loss is the mean of its losses\n"
    "  --params=FILE.safetensors   start from these weights; a checkpoint\n"
    "                              also restores the optimizer state (all\n"
    "                              of it) and the place in the data: the\n"
    "                              run continues where the checkpoint's\n"
    "                              left off, in the same order, as if it\n"
    "                              had not stopped (if --data has as many\n"
    "                              rows; else from row 0, with a note)\n"
    "  --seed=N                    or start from fresh weights for seed N,\n"
    "                              those `lcc-run --init-params --seed=N`\n"
    "                              writes (default: seed 0); with\n"
    "                              --shuffle, also the order's seed\n"
    "  --shuffle                   each pass over the data takes its rows in\n"
    "                              an order of its own, drawn from --seed\n"
    "                              (default 0; a checkpoint keeps it)\n"
    "  --steps=N                   training steps (default: one pass over\n"
    "                              the data, ceil(N / B))\n"
    "\n"
    "The optimizer's hyper-parameters are values of the module (state\n"
    "parameters optimizer.*) that start at lcc's --lr, --weight-decay,\n"
    "--grad-clip; these set them without recompiling:\n"
    "  --lr=F                      the learning rate (default: the module's)\n"
    "  --schedule=constant|linear|cosine\n"
    "                              how it changes over the run (default\n"
    "                              constant): linear and cosine decay from\n"
    "                              --lr at the end of the warmup to --min-lr\n"
    "                              at step --total-steps\n"
    "  --total-steps=T             the steps the schedule spans (default:\n"
    "                              the checkpoint's, resuming, and --steps):\n"
    "                              a run stopped and resumed gives the\n"
    "                              whole run's T to both parts\n"
    "  --warmup=N                  the first N steps rise linearly to --lr\n"
    "                              (step s: lr * s / N; default 0)\n"
    "  --min-lr=F                  where linear and cosine end (default 0)\n"
    "  --weight-decay=F            decoupled weight decay (AdamW; SGD: L2)\n"
    "  --grad-clip=F               clip the gradients' global norm to F\n"
    "                              (0: off)\n"
    "  --beta1=F, --beta2=F, --epsilon=F\n"
    "                              Adam's (a module compiled with\n"
    "                              --optimizer=adam)\n"
    "  --accumulate=K              each step takes K batches and updates\n"
    "                              once with their mean gradient (a module\n"
    "                              compiled with --accumulate-gradients);\n"
    "                              its loss is their mean (default 1)\n"
    "Unset, each keeps the module's value, or a checkpoint's (--params)\n"
    "but for the learning rate, which --lr or the module gives.\n"
    "\n"
    "  --eval-every=N              evaluate every N steps (default 0: only\n"
    "                              after the last step, which always does)\n"
    "  --checkpoint=FILE.safetensors\n"
    "                              write every parameter (optimizer state\n"
    "                              included) by name after each evaluation;\n"
    "                              `lcc-run --params` and `lcc-train\n"
    "                              --params` read it. Written beside FILE\n"
    "                              and renamed into place: never half a file\n"
    "                              (a device or FIFO is written in place; a\n"
    "                              file this run reads is refused, but for\n"
    "                              --params: resuming in place is safe)\n"
    "  --plot=FILE.svg             draw the loss and eval loss against\n"
    "                              steps and tokens, after each evaluation\n"
    "  --report=json               print {\"steps\", \"loss\" and \"lr\"\n"
    "                              (each step), \"eval_loss\", \"eval_steps\"\n"
    "                              (each evaluation and the step after\n"
    "                              which it ran), \"ms_per_step\" (median),\n"
    "                              \"peak_bytes\" (device peak)} to stdout\n"
    "  --device=cpu|cuda           device to train on (default cpu)\n"
    LCC_EMULATOR_USAGE
    "  --threads=N                 threads of the cpu device (default: the CPUs\n"
    "                              the process may run on)\n"
    "  --help, --version\n"
    "\n"
    "Progress goes to stderr after the first step, each evaluation, the\n"
    "last step and at most once a second in between:\n"
    "  step 12/100  loss 2.3141  eval 2.4012  lr 3.00e-04  1234 tokens/s"
    "  ETA 0:42\n"
    "(tokens: the elements of train_step's first argument per step). A loss\n"
    "that is not finite stops training with an error.\n"
    "\n"
    "Data parallel: `mpirun -np P lcc-train MODEL.lcm ...` with the same\n"
    "arguments on every rank trains as one process would at batch P*B:\n"
    "each batch is P*B rows of the data and rank r takes the r-th B;\n"
    "train_step averages the loss and gradients over the ranks, so every\n"
    "rank's parameters stay equal. Rank 0 prints, plots and checkpoints (a\n"
    "checkpoint resumes with another P at the same P*B); --report=json adds\n"
    "\"ranks\", \"peak_bytes_per_rank\" and \"sent_bytes_per_rank\". A rank\n"
    "that fails ends the job with its error line.\n";
// clang-format on

// Each option, what its value looks like (for the error when it is missing)
// and how it is checked.
constexpr Flag kFlags[] = {
    {"--data", "FILE.npy", FlagValue::Text},
    {"--eval-data", "FILE.npy", FlagValue::Text},
    {"--eval-function", "NAME", FlagValue::Text},
    {"--params", "FILE.safetensors", FlagValue::Text},
    {"--seed", "N", FlagValue::Count},
    {"--steps", "N", FlagValue::PositiveCount},
    {"--eval-every", "N", FlagValue::Count},
    {"--checkpoint", "FILE.safetensors", FlagValue::Text},
    {"--carry", "RESULT:INPUT", FlagValue::Text},
    {"--lr", "F", FlagValue::Real},
    {"--min-lr", "F", FlagValue::Real},
    {"--warmup", "N", FlagValue::Count},
    {"--total-steps", "T", FlagValue::PositiveCount},
    {"--schedule", "constant|linear|cosine", FlagValue::Text},
    {"--weight-decay", "F", FlagValue::Real},
    {"--grad-clip", "F", FlagValue::Real},
    {"--beta1", "F", FlagValue::Real},
    {"--beta2", "F", FlagValue::Real},
    {"--epsilon", "F", FlagValue::Real},
    {"--accumulate", "K", FlagValue::PositiveCount},
    {"--plot", "FILE.svg", FlagValue::Text},
    kReportFlag,
    kDeviceFlag,
    kThreadsFlag,
    kCheckFlag,
    kThreadOrderFlag};

constexpr Tool kTool("lcc-train", kUsage, kFlags);

struct Options {
  std::string model;
  std::vector<std::string> data;
  std::vector<std::string> evalData;
  std::string evalFunction = "loss";
  std::string params;
  uint64_t seed = 0;
  bool seedGiven = false;
  bool shuffle = false;
  uint64_t steps = 0;
  bool stepsGiven = false;
  uint64_t evalEvery = 0;
  std::string checkpoint;
  std::vector<std::pair<uint64_t, uint64_t>> carries; // (result, input)
  bool jsonReport = false;
  DeviceOptions device;
  OptimizerOptions optimizer;
  uint64_t accumulate = 1;
  std::string plot;
};

/// `value` split at commas, empty pieces dropped.
void appendList(const std::string &value, std::vector<std::string> &out) {
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos)
      comma = value.size();
    if (comma > start)
      out.push_back(value.substr(start, comma - start));
    start = comma + 1;
  }
}

/// Parses argv into `options`; returns an error message or "".
std::string parseArguments(int argc, char **argv, Options &options,
                           bool &exitNow) {
  // Bare file names after --data or --eval-data continue its list.
  std::vector<std::string> *list = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (kTool.printsInfo(argument)) {
      exitNow = true;
      return "";
    }
    if (argument == "--shuffle") {
      options.shuffle = true;
      list = nullptr;
      continue;
    }
    if (!isOption(argument)) {
      if (!options.model.empty() && list) {
        appendList(argument, *list);
        continue;
      }
      std::string error = readModel(argument, options.model);
      if (!error.empty())
        return error;
      list = nullptr;
      continue;
    }
    list = nullptr;
    FlagArgument read;
    std::string error = kTool.readFlag(argument, read);
    if (!error.empty())
      return error;
    if (options.device.read(read))
      continue;
    if (options.optimizer.read(read, error)) {
      if (!error.empty())
        return error;
      continue;
    }
    const std::string &flag = read.flag, &value = read.value;
    if (flag == "--data") {
      appendList(value, options.data);
      list = &options.data;
    } else if (flag == "--eval-data") {
      appendList(value, options.evalData);
      list = &options.evalData;
    } else if (flag == "--eval-function") {
      options.evalFunction = value;
    } else if (flag == "--params") {
      options.params = value;
    } else if (flag == "--seed") {
      options.seed = read.count;
      options.seedGiven = true;
    } else if (flag == "--steps") {
      options.steps = read.count;
      options.stepsGiven = true;
    } else if (flag == "--eval-every") {
      options.evalEvery = read.count;
    } else if (flag == "--checkpoint") {
      options.checkpoint = value;
    } else if (flag == "--carry") {
      std::pair<uint64_t, uint64_t> carry;
      if (!parseCarry(value, carry))
        return "invalid --carry value '" + value +
               "'; expected RESULT:INPUT, two indices (e.g. 1:2)";
      options.carries.push_back(carry);
    } else if (flag == "--report") {
      options.jsonReport = true;
    } else if (flag == "--accumulate") {
      options.accumulate = read.count;
    } else if (flag == "--plot") {
      options.plot = value;
    }
  }
  if (options.model.empty())
    return "no model given; usage: lcc-train MODEL.lcm --data=FILE.npy... "
           "(see --help)";
  if (options.data.empty())
    return "no --data given: one .npy file per argument of train_step, in "
           "argument order";
  if (!options.params.empty() && options.seedGiven && !options.shuffle)
    return "--params and --seed exclude each other: --params starts from "
           "those weights, --seed from fresh ones";
  if (options.shuffle && !options.carries.empty())
    return "--shuffle takes each step's rows from anywhere in the data; "
           "--carry needs them in order (consecutive segments of one text)";
  if (options.accumulate > 1 && !options.carries.empty())
    return "--accumulate and --carry exclude each other: a carried result "
           "of accumulate_step would have to feed train_step";
  std::string error = options.optimizer.check();
  if (!error.empty())
    return error;
  return options.device.check();
}

/// "" when result 0 of `function` is a loss: one f32.
std::string checkLossResult(const Signature &function) {
  if (!function.outputs.empty()) {
    const Argument &loss = function.outputs[0];
    if (loss.dtype == LCC_DTYPE_F32 && loss.bytes == 4)
      return "";
  }
  std::string actual = function.outputs.empty()
                           ? "it returns nothing"
                           : "result 0 is " +
                                 formatShape(function.outputs[0].shape) + " " +
                                 lccDTypeGetName(function.outputs[0].dtype);
  return "function " + quote(function.name) +
         " does not return a loss first (a 0-d f32): " + actual;
}

/// An error message unless a file can be written at `path`: a checkpoint
/// that cannot be written is found before training, not after it.
std::string checkWritable(const std::string &path, const char *flag) {
  if (LccStatus status = lccFileCheckWritable(path.c_str()))
    return std::string(flag) + ": " + takeMessage(status);
  return "";
}

/// Where a run starts in its data, and what its checkpoints record
/// (lcc-train.* metadata): the stream position of the next step
/// (DataOrder.h), the steps trained so far, the data's rows and batch, and
/// the shuffle's seed.
struct DataPlace {
  uint64_t position = 0;
  uint64_t stepsBefore = 0;
  std::optional<uint64_t> shuffleSeed;
};

constexpr const char *kPositionKey = "lcc-train.position";
constexpr const char *kStepsKey = "lcc-train.steps";
constexpr const char *kRowsKey = "lcc-train.rows";
constexpr const char *kBatchKey = "lcc-train.batch";
constexpr const char *kShuffleSeedKey = "lcc-train.shuffle_seed";

/// The value of `key` in `metadata` as a count; nullopt when absent. An
/// unreadable one is an error message in `error`.
std::optional<uint64_t> metadataCount(LccMetadata metadata, const char *key,
                                      const std::string &path,
                                      std::string &error) {
  const char *text = lccMetadataFind(metadata, key);
  uint64_t value = 0;
  if (!text)
    return std::nullopt;
  if (!parseCount(text, value))
    error = "checkpoint '" + path + "' has " + key + " = " + quote(text) +
            ", not a count";
  return value;
}

/// Where training starts: at the start of the data, or where the checkpoint
/// given as --params left off (the same order, the same place). Returns an
/// error message or "".
std::string findDataPlace(const Options &options, uint64_t rows, uint64_t batch,
                          DataPlace &place) {
  if (options.shuffle)
    place.shuffleSeed = options.seed;
  if (options.params.empty())
    return "";
  LccMetadata metadata = nullptr;
  if (LccStatus status =
          lccSafetensorsReadMetadata(options.params.c_str(), &metadata))
    return takeMessage(status);
  std::string error;
  const std::string &path = options.params;
  std::optional<uint64_t> position =
      metadataCount(metadata, kPositionKey, path, error);
  std::optional<uint64_t> steps =
      metadataCount(metadata, kStepsKey, path, error);
  std::optional<uint64_t> recordedRows =
      metadataCount(metadata, kRowsKey, path, error);
  std::optional<uint64_t> recordedBatch =
      metadataCount(metadata, kBatchKey, path, error);
  std::optional<uint64_t> seed =
      metadataCount(metadata, kShuffleSeedKey, path, error);
  lccMetadataDestroy(metadata);
  if (!error.empty() || !position)
    return error; // weights, not a checkpoint of lcc-train's: from row 0
  if (seed && !options.shuffle)
    return "checkpoint '" + path +
           "' was trained with --shuffle --seed=" + std::to_string(*seed) +
           ": give --shuffle to continue its order of the data";
  if (!seed && options.shuffle)
    return "checkpoint '" + path +
           "' was trained with the data in order: resume it without "
           "--shuffle";
  if (seed && options.seedGiven && options.seed != *seed)
    return "checkpoint '" + path +
           "' was trained with --shuffle --seed=" + std::to_string(*seed) +
           ", not --seed=" + std::to_string(options.seed) +
           ": drop --seed to continue its order";
  place.shuffleSeed = seed;
  place.stepsBefore = steps.value_or(0);
  if (recordedRows == rows && recordedBatch == batch) {
    place.position = *position;
    return "";
  }
  kTool.note("checkpoint '" + path + "' was trained on " +
             std::to_string(recordedRows.value_or(0)) + " rows in batches of " +
             std::to_string(recordedBatch.value_or(0)) + "; --data has " +
             std::to_string(rows) + " rows in batches of " +
             std::to_string(batch) + ": the data starts at row 0");
  return "";
}

/// Writes the parameters, optimizer state included, with the place in the
/// data after `steps` more steps: a checkpoint --params resumes from.
LccStatus writeCheckpoint(LccSession session, const std::string &path,
                          const DataPlace &place, const DataOrder &order,
                          uint64_t steps, uint64_t rows, uint64_t batch) {
  std::vector<std::pair<const char *, std::string>> entries = {
      {kPositionKey, std::to_string(order.getPosition())},
      {kStepsKey, std::to_string(place.stepsBefore + steps)},
      {kRowsKey, std::to_string(rows)},
      {kBatchKey, std::to_string(batch)}};
  if (place.shuffleSeed)
    entries.push_back({kShuffleSeedKey, std::to_string(*place.shuffleSeed)});
  std::vector<const char *> keys, values;
  for (const auto &[key, value] : entries) {
    keys.push_back(key);
    values.push_back(value.c_str());
  }
  return lccSessionWriteCheckpoint(session, path.c_str(), keys.data(),
                                   values.data(), keys.size());
}

/// Writes `text` to `path`; an error message naming `flag`, or "".
std::string writeTextFile(const std::string &path, const std::string &text,
                          const char *flag) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  bool written =
      file && std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (file && std::fclose(file) != 0)
    written = false;
  if (!written)
    return std::string(flag) + ": cannot write '" + path +
           "': " + std::strerror(errno);
  return "";
}

/// The loss (result 0) of the last call of `function`.
double lossOf(LccFunction function) {
  LccTensorView result;
  lccFunctionGetResult(function, 0, &result);
  return lccTensorGetElement(&result, 0);
}

const char *describeNonFinite(double value) {
  return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The functions a step calls: with --accumulate=K, accumulate_step on
/// the first K-1 batches (their gradients summed on the device) and
/// train_step on the last.
struct StepFunctions {
  LccFunction train = nullptr;
  LccFunction accumulate = nullptr;
  uint64_t batches = 1; ///< K
};

/// This rank's share of each batch of the job (data parallelism, mpirun):
/// of every P * B rows the order gives, rank r takes the r-th B. Under
/// context parallelism r and P count the groups of ranks that share a
/// sequence, every rank of a group taking its group's rows.
struct RankShare {
  LccCommunicator communicator = nullptr;
  uint64_t rank = 0, ranks = 1, rows = 0; ///< r, P, B
  uint64_t jobRanks = 1; ///< the communicator's ranks

  std::vector<uint64_t> of(const std::vector<uint64_t> &jobRows) const {
    auto first = jobRows.begin() + std::ptrdiff_t(rank * rows);
    return std::vector<uint64_t>(first, first + std::ptrdiff_t(rows));
  }
  /// The mean over the job's ranks of `value`, this rank's; an error
  /// message or "".
  std::string average(double &value) const {
    if (jobRanks == 1)
      return "";
    float sum = float(value);
    if (LccStatus status = lccCommunicatorAllReduceSum(communicator, &sum, 1))
      return takeMessage(status);
    value = double(sum) / double(jobRanks);
    return "";
  }
};

/// Runs optimizer step `s`; `loss` is the mean loss of its batches, `ms`
/// the time of its calls. Returns an error message or "".
std::string runStep(uint64_t s, bool fresh, const StepFunctions &functions,
                    const RankShare &share, DataOrder &order, Batcher &batches,
                    CarriedInputs &carried, double &loss, double &ms) {
  double accumulated = 0;
  ms = 0;
  for (uint64_t k = 1; k <= functions.batches; ++k) {
    LccFunction function =
        k < functions.batches ? functions.accumulate : functions.train;
    std::vector<uint64_t> rows = share.of(order.next());
    const LccTensorView *inputs =
        carried.callInputs(batches.of(rows), fresh && k == 1);
    uint64_t before = lccFunctionGetTotalNanoseconds(function);
    if (LccStatus status =
            lccFunctionCall(function, inputs, carried.inputCount()))
      return "step " + std::to_string(s) +
             (functions.batches > 1 ? ", batch " + std::to_string(k) : "") +
             " (" + describeRows(rows, "--data") + "): " + takeMessage(status);
    ms += double(lccFunctionGetTotalNanoseconds(function) - before) / 1e6;
    if (k < functions.batches)
      accumulated += lossOf(function);
    else
      loss = lossOf(function); // train_step's: averaged over the ranks
  }
  // accumulate_step's losses are this rank's own (none without K > 1).
  std::string failure =
      functions.batches > 1 ? share.average(accumulated) : std::string();
  loss = (accumulated + loss) / double(functions.batches);
  return failure;
}

int train(const Options &options) {
  Handles handles;
  std::string error = handles.load(options.model);
  if (!error.empty())
    return kTool.fail(kExitError, error);

  // What the module offers, checked before any data is read.
  Signature step, eval;
  if (!findSignature(handles.module, kTrainStep, step))
    return kTool.fail(kExitError, options.model + " has no " + kTrainStep +
                                      ": compile it with lcc --train");
  Signature accumulate;
  if (options.accumulate > 1 &&
      !findSignature(handles.module, kAccumulateStep, accumulate))
    return kTool.fail(kExitError, "--accumulate: " + options.model +
                                      " has no " + kAccumulateStep +
                                      ": compile it with lcc --train "
                                      "--accumulate-gradients");
  if (options.evalFunction == kTrainStep)
    return kTool.fail(kExitUsage,
                      std::string("--eval-function=") + kTrainStep +
                          " would train while it evaluates; name the "
                          "loss function it trains");
  if (!findSignature(handles.module, options.evalFunction, eval))
    return kTool.fail(
        kExitError, options.model + " has no function " +
                        quote(options.evalFunction) +
                        " to evaluate the loss with; name the function that " +
                        kTrainStep + " trains with --eval-function=NAME");
  for (const Signature *function : {&step, &eval}) {
    error = checkLossResult(*function);
    if (!error.empty())
      return kTool.fail(kExitError, options.model + ": " + error);
  }
  bool sameArguments = eval.inputs.size() == step.inputs.size();
  for (size_t i = 0; sameArguments && i < eval.inputs.size(); ++i)
    sameArguments = eval.inputs[i].dtype == step.inputs[i].dtype &&
                    eval.inputs[i].shape == step.inputs[i].shape;
  if (!sameArguments)
    return kTool.fail(kExitError, options.model + ": function " +
                                      quote(options.evalFunction) +
                                      " does not take the arguments of " +
                                      kTrainStep +
                                      "; name the function it trains with "
                                      "--eval-function=NAME");
  CarriedInputs carried(step, options.carries);
  error = carried.check();
  if (!error.empty())
    return kTool.fail(kExitUsage, error);
  // What --data feeds: the arguments that are not carried.
  Signature fed = carried.dataSignature();
  error = checkBatchDimension(fed);
  if (!error.empty())
    return kTool.fail(kExitError, options.model + ": " + error);

  // --params may name the checkpoint (resuming in place): it is read whole
  // before the first step. Nothing else the run reads may be written.
  std::vector<ReadFile> read = {{"the model", options.model}};
  for (const std::string &path : options.data)
    read.push_back({"--data", path});
  for (const std::string &path : options.evalData)
    read.push_back({"--eval-data", path});
  for (auto [flag, path] : {std::pair<const char *, const std::string &>{
                                "--checkpoint", options.checkpoint},
                            {"--plot", options.plot}}) {
    if (path.empty() || !error.empty())
      continue;
    error = checkNotAnInput(flag, path, read);
    if (error.empty())
      error = checkWritable(path, flag);
  }
  if (!error.empty())
    return kTool.fail(kExitError, error);

  // Context parallelism: the files hold whole sequences, each rank takes
  // its share of every row once it knows its rank.
  uint32_t contextParallel = lccModuleGetContextParallel(handles.module);
  if (contextParallel > 1 && !options.carries.empty())
    return kTool.fail(kExitUsage, "--carry with a model that splits its "
                                  "sequence over ranks (lcc "
                                  "--context-parallel) is not supported yet");
  lcc::tools::SequenceShares splits(handles.module, kTrainStep, 0);
  Signature wholeFed = fed;
  for (size_t i = 0; i < wholeFed.inputs.size(); ++i)
    wholeFed.inputs[i].shape =
        splits.wholeInputShape(i, wholeFed.inputs[i].shape);
  Dataset trainData, evalData;
  error = loadDataset(options.data, "--data", wholeFed, trainData);
  if (error.empty() && !options.evalData.empty())
    error = loadDataset(options.evalData, "--eval-data", wholeFed, evalData);
  if (!error.empty())
    return kTool.fail(kExitError, error);
  const Dataset &evaluated = options.evalData.empty() ? trainData : evalData;

  error = handles.open(options.device);
  if (error.empty())
    error = handles.joinJob();
  if (error.empty() && contextParallel > 1)
    for (Dataset *data : {&trainData, &evalData})
      keepRankShares(*data, splits, contextParallel,
                     uint64_t(handles.getRank()) % contextParallel);
  HyperParameters hyper;
  if (error.empty())
    error = hyper.find(handles.module, handles.session, options.model);
  if (!error.empty())
    return kTool.fail(kExitError, error);
  LccStatus bound =
      options.params.empty()
          ? lccSessionInitializeParameters(handles.session, options.seed)
          : lccSessionBindParametersFile(handles.session,
                                         options.params.c_str());
  if (bound)
    return kTool.fail(bound);
  error = hyper.apply(options.optimizer);
  StepFunctions functions;
  functions.batches = options.accumulate;
  // Always: a checkpoint of a run with --accumulate holds its 1/K.
  if (error.empty())
    error = hyper.setGradientScale(1.0 / double(functions.batches));
  LccFunction evalFunction = nullptr;
  if (error.empty())
    error = handles.lookup(kTrainStep, functions.train);
  if (error.empty() && functions.batches > 1)
    error = handles.lookup(kAccumulateStep, functions.accumulate);
  if (error.empty())
    error = handles.lookup(options.evalFunction, evalFunction);
  if (!error.empty())
    return kTool.fail(kExitError, error);
  for (LccFunction function : {functions.train, evalFunction})
    if (LccStatus status = carried.bind(function))
      return kTool.fail(status);

  Batcher batches(trainData, fed);
  // Data parallelism over the groups of ranks that share one sequence
  // (one rank each without context parallelism): group g takes the g-th B
  // rows of each G * B.
  bool sharesSequence = contextParallel > 1;
  RankShare share{handles.communicator,
                  uint64_t(handles.getRank()) / contextParallel,
                  uint64_t(handles.getRanks()) / contextParallel,
                  batches.getBatchRows(), uint64_t(handles.getRanks())};
  bool leader = handles.getRank() == 0; // prints, plots and checkpoints
  // The job's batch: P ranks' B rows each.
  uint64_t batch = share.rows * share.ranks;
  for (const Dataset *data :
       {static_cast<const Dataset *>(&trainData), &evaluated})
    if (data->rows < batch)
      return kTool.fail(
          kExitError,
          std::string(data == &trainData ? "--data" : "--eval-data") + " has " +
              std::to_string(data->rows) + " rows; " +
              std::to_string(share.ranks) + " ranks take " +
              std::to_string(batch) + " a batch (" +
              std::to_string(share.rows) + " each)");
  // A step takes K batches: one pass is ceil(N / (B P K)) steps.
  uint64_t stepRows = batch * functions.batches;
  uint64_t steps = options.stepsGiven
                       ? options.steps
                       : (trainData.rows + stepRows - 1) / stepRows;
  DataPlace place;
  error = findDataPlace(options, trainData.rows, batch, place);
  if (!error.empty())
    return kTool.fail(kExitError, error);
  DataOrder order(trainData.rows, batch, place.shuffleSeed);
  order.setPosition(place.position);
  if (!carried.empty() && !order.startsPass())
    kTool.note("the carried inputs start from zeros at the checkpoint's "
               "place in the data (row " +
               std::to_string(place.position % trainData.rows) +
               "): a checkpoint holds the parameters, not the memories");
  const OptimizerOptions &optimizer = options.optimizer;
  LearningRateSchedule schedule(
      optimizer.schedule, hyper.getPeakLearningRate(),
      optimizer.minLr.value_or(0.0), optimizer.warmup,
      optimizer.totalSteps.value_or(place.stepsBefore + steps));
  // The job's tokens: each rank's share of B rows (context parallelism),
  // or its own B rows (data parallelism).
  uint64_t tokensPerStep = functions.batches * uint64_t(handles.getRanks());
  for (int64_t dim : fed.inputs[0].shape)
    tokensPerStep *= uint64_t(dim);

  std::vector<double> losses, evalLosses, stepMs, learningRates;
  std::vector<uint64_t> evalSteps;
  Batcher evalBatches(evaluated, fed);
  auto evaluate = [&](uint64_t after) -> std::string {
    uint64_t count = evaluated.rows / batch;
    double sum = 0;
    for (uint64_t b = 0; b < count; ++b) {
      // Each evaluation runs the text from its start, in order, memories
      // from zeros.
      std::vector<uint64_t> rows =
          share.of(consecutiveRows(b * batch, batch, evaluated.rows));
      const LccTensorView *inputs =
          carried.callInputs(evalBatches.of(rows), b == 0);
      if (LccStatus status =
              lccFunctionCall(evalFunction, inputs, carried.inputCount()))
        return "evaluating after step " + std::to_string(after) + " (" +
               describeRows(rows, options.evalData.empty() ? "--data"
                                                           : "--eval-data") +
               "): " + takeMessage(status);
      sum += lossOf(evalFunction);
    }
    std::string failure = share.average(sum);
    if (!failure.empty())
      return failure;
    double mean = sum / double(count);
    if (!std::isfinite(mean))
      return std::string("eval loss is ") + describeNonFinite(mean) +
             " at step " + std::to_string(after);
    evalLosses.push_back(mean);
    evalSteps.push_back(after);
    if (!leader)
      return "";
    if (!options.checkpoint.empty())
      if (LccStatus status =
              writeCheckpoint(handles.session, options.checkpoint, place, order,
                              after, trainData.rows, batch))
        return takeMessage(status);
    if (!options.plot.empty()) {
      // The file's name: a folder path would crowd out the plot's title.
      TrainingCurves curves{
          options.model.substr(options.model.find_last_of('/') + 1),
          place.stepsBefore + 1,
          tokensPerStep,
          losses,
          {},
          evalLosses};
      for (uint64_t step : evalSteps)
        curves.evalSteps.push_back(place.stepsBefore + step);
      return writeTextFile(options.plot, renderTrainingPlot(curves), "--plot");
    }
    return "";
  };

  auto start = std::chrono::steady_clock::now();
  auto lastPrint = start;
  double trainSeconds = 0;
  for (uint64_t s = 1; s <= steps; ++s) {
    double lr = schedule.at(place.stepsBefore + s);
    if (hyper.hasLearningRate() && !schedule.isConstant()) {
      std::string failure = hyper.setLearningRate(lr);
      if (!failure.empty())
        return kTool.fail(kExitError, failure);
    }
    learningRates.push_back(lr);
    double loss = 0, ms = 0;
    // Memories start from zeros, again when the data starts over, and at
    // a resumed run's first step.
    std::string failure = runStep(s, s == 1 || order.startsPass(), functions,
                                  share, order, batches, carried, loss, ms);
    if (!failure.empty())
      return kTool.fail(kExitError, failure);
    stepMs.push_back(ms);
    trainSeconds += ms / 1e3;
    if (!std::isfinite(loss))
      return kTool.fail(kExitError, std::string("loss is ") +
                                        describeNonFinite(loss) + " at step " +
                                        std::to_string(s));
    losses.push_back(loss);

    bool evaluates =
        s == steps || (options.evalEvery && s % options.evalEvery == 0);
    if (evaluates) {
      std::string failure = evaluate(s);
      if (!failure.empty())
        return kTool.fail(kExitError, failure);
    }
    auto now = std::chrono::steady_clock::now();
    if (!leader)
      continue;
    if (s == 1 || evaluates ||
        std::chrono::duration<double>(now - lastPrint).count() >= 1.0) {
      lastPrint = now;
      double perStep = trainSeconds / double(s);
      std::string line =
          "step " + std::to_string(s) + "/" + std::to_string(steps);
      char number[64];
      std::snprintf(number, sizeof(number), "  loss %.4f", loss);
      line += number;
      if (!evalLosses.empty()) {
        std::snprintf(number, sizeof(number), "  eval %.4f", evalLosses.back());
        line += number;
      }
      if (hyper.hasLearningRate()) {
        std::snprintf(number, sizeof(number), "  lr %.2e", lr);
        line += number;
      }
      std::snprintf(number, sizeof(number), "  %.0f tokens/s",
                    perStep > 0 ? double(tokensPerStep) / perStep : 0.0);
      line += number;
      // Steps so far tell the time the rest takes, evaluations included.
      double elapsed = secondsSince(start);
      line +=
          "  ETA " + formatDuration(elapsed / double(s) * double(steps - s));
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

  // Every rank's memory and traffic, for the leader's report.
  std::vector<uint64_t> peakBytes, sentBytes;
  error = handles.gatherRankUsage(peakBytes, sentBytes);
  if (!error.empty())
    return kTool.fail(kExitError, error);
  if (options.jsonReport && leader) {
    std::string json = "{\"steps\": " + std::to_string(steps);
    // A mean over several batches is not an f32.
    json += ", \"loss\": " + jsonList(losses, functions.batches == 1);
    if (hyper.hasLearningRate())
      json += ", \"lr\": " + jsonList(learningRates, true);
    json += ", \"eval_loss\": " + jsonList(evalLosses, false);
    json += ", \"eval_steps\": [";
    for (size_t i = 0; i < evalSteps.size(); ++i)
      json += (i ? ", " : "") + std::to_string(evalSteps[i]);
    // Times are whole nanoseconds: six decimals of a millisecond (a median
    // of two may add a half).
    json += "], \"ms_per_step\": " +
            jsonNumber(std::round(median(stepMs) * 1e6) / 1e6, false);
    json += ", \"peak_bytes\": " + std::to_string(peakBytes.front());
    if (handles.getRanks() > 1) {
      json += ", \"ranks\": " + std::to_string(handles.getRanks());
      if (sharesSequence)
        json += ", \"context_parallel\": " + std::to_string(contextParallel);
      json += ", \"peak_bytes_per_rank\": " + jsonCounts(peakBytes, ", ");
      json += ", \"sent_bytes_per_rank\": " + jsonCounts(sentBytes, ", ");
    }
    json += "}";
    std::printf("%s\n", json.c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  return kTool.run(argc, argv, parseArguments, train);
}
