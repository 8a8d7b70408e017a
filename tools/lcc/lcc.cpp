//===- lcc.cpp - the lcc compiler driver ----------------------------------===//
//
// lcc MODEL.mlir -o MODEL.lcm [--target=cpu|cuda|cpu,cuda]
//     [--emit=attn|linalg|llvm|ptx|kernel-report|kernel-report-json|artifact]
//     [--dump-ir=DIR]
//
// Reads a model written in the attn dialect, verifies it, compiles it and
// writes the requested stage. The command line is a contract
// (docs/design.md §6): errors are one `lcc: error:` line on stderr and a
// non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "InputKeySelections.h"

#include "compiler/AttentionMap.h"
#include "compiler/CpuTarget.h"
#include "compiler/CudaTarget.h"
#include "compiler/Diagnostics.h"
#include "compiler/ModelParser.h"
#include "compiler/Pipeline.h"
#include "compiler/PluginLoader.h"
#include "compiler/Registration.h"
#include "dialects/Attn/IR/AttnOps.h"
#include "passes/AttentionForms.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>
#include <deque>
#include <limits>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

constexpr llvm::StringLiteral kTool = "lcc";

template <typename T> struct Choice {
  llvm::StringLiteral name;
  T value;
};

constexpr Choice<lcc::Stage> kEmitChoices[] = {
    {"attn", lcc::Stage::Attn},
    {"linalg", lcc::Stage::Linalg},
    {"llvm", lcc::Stage::Llvm},
    {"ptx", lcc::Stage::Ptx},
    {"kernel-report", lcc::Stage::KernelReport},
    {"kernel-report-json", lcc::Stage::KernelReportJson},
    {"attention-map", lcc::Stage::AttentionMap},
    {"artifact", lcc::Stage::Artifact}};

cl::OptionCategory lccCategory("lcc options");

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<model.mlir>"),
                                   cl::Required, cl::cat(lccCategory));

cl::opt<std::string> outputFilename(
    "o", cl::desc("Output file ('-' for stdout; an artifact needs a file)"),
    cl::value_desc("file"), cl::init("-"), cl::cat(lccCategory));

// Strings rather than cl::values enums: llvm::cl reports a bad enum value on
// its own, without the one-line `lcc: error:` form.
cl::opt<std::string> emitName(
    "emit",
    cl::desc("What to write: 'attn' (the verified model), 'linalg' (after "
             "lowering to linalg on tensors), 'llvm' (the CPU kernels' LLVM "
             "IR), 'ptx' (the CUDA kernels' PTX), 'kernel-report' (each "
             "CUDA kernel's launch, registers, spills, shared memory, "
             "occupancy on sm_80 and sm_90, FLOPs, bytes and roofline bound "
             "on an H100 and H200, as a table; 'kernel-report-json': the "
             "same as JSON; docs/gpu.md), 'attention-map' (-o DIR: an SVG "
             "per attention op, the query x key tile pairs it computes), "
             "'artifact' (the .lcm module lcc-run runs; the default)"),
    cl::value_desc("stage"), cl::init("artifact"), cl::cat(lccCategory));

cl::opt<std::string> targetName(
    "target",
    cl::desc("Devices to compile for, comma-separated: 'cpu' (x86-64, the "
             "default), 'cuda' (NVIDIA PTX, and a cubin when ptxas is "
             "found), or 'cpu,cuda' (both in one artifact)"),
    cl::value_desc("devices"), cl::init("cpu"), cl::cat(lccCategory));

cl::opt<std::string>
    cudaArch("cuda-arch",
             cl::desc("GPU architecture of --target=cuda (default sm_90)"),
             cl::value_desc("sm_NN"), cl::init("sm_90"), cl::cat(lccCategory));

cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("CUDA installation whose bin/ptxas makes the cubin (searched "
             "first; then PATH, then /usr/local/cuda)"),
    cl::value_desc("dir"), cl::init(""), cl::cat(lccCategory));

cl::opt<bool> cudaTF32(
    "cuda-tf32",
    cl::desc("With --target=cuda on sm_80 and up: multiply f32 products on "
             "tensor cores in tf32 (operands rounded to 10 bits of mantissa, "
             "about 1e-3 relative; sums in f32), as PyTorch's "
             "allow_tf32 does (default: exact f32 on CUDA cores)"),
    cl::init(false), cl::cat(lccCategory));

cl::opt<std::string> attentionPrecision(
    "attention-precision",
    cl::desc("Type the attention cores compute in: 'f32' (the default), "
             "'bf16' or 'f16': dense, masked, sparse, adaptive-span, "
             "relative, LSH and routed attention, forward and backward, take "
             "their operands rounded to it, multiply on "
             "its pairs with f32 sums (tensor cores on sm_80 and up) and "
             "return f32; parameters, the other ops, the loss and the "
             "optimizer stay f32 (mixed precision, as autocast runs "
             "FlashAttention); other attention forms stay f32 with a "
             "warning (docs/training.md)"),
    cl::value_desc("type"), cl::init("f32"), cl::cat(lccCategory));

cl::opt<std::string> attentionName(
    "attention",
    cl::desc("Form of the attention ops (the forms are listed when lcc "
             "starts; see makeFormFlags)"),
    cl::value_desc("form"), cl::init("keep"), cl::cat(lccCategory));

cl::list<std::string> pluginPaths(
    "load-plugin",
    cl::desc("Load a shared library of attention forms and passes built "
             "against lcc (repeatable; a path, never searched for on the "
             "library path; docs/pass-authoring.md)"),
    cl::value_desc("LIB.so"), cl::cat(lccCategory));

cl::opt<std::string> attentionOptions(
    "attention-options",
    cl::desc("Options of a form that has no flags of its own (a plugin's), "
             "in MLIR pass-option syntax, e.g. \"window=128\""),
    cl::value_desc("options"), cl::init(""), cl::cat(lccCategory));

cl::list<std::string>
    autoForms("auto-forms",
              cl::desc("With --attention=auto: the forms it may choose, "
                       "comma-separated (default: lsh)"),
              cl::value_desc("forms"), cl::CommaSeparated,
              cl::cat(lccCategory));

/// A flag of an integer knob: its name, help and default.
cl::opt<int64_t> knobFlag(const lcc::IntegerKnob &knob) {
  return cl::opt<int64_t>(StringRef(knob.flag), cl::desc(knob.help),
                          cl::value_desc("N"), cl::init(knob.defaultValue),
                          cl::cat(lccCategory));
}

cl::opt<int64_t> seed = knobFlag(lcc::knobs::kSeed);

cl::opt<std::string> memoryBudgetText(
    StringRef(lcc::knobs::kMemoryBudget.flag),
    cl::desc("With --attention=auto: bytes one attention may use, with an "
             "optional K, M or G suffix (default: no limit)"),
    cl::value_desc("bytes"), cl::init("0"), cl::cat(lccCategory));

/// A flag an attention form declares (--lsh-bucket-size, --sparse-pattern).
struct FormFlag {
  explicit FormFlag(const lcc::AttentionFormFlag &flag)
      : flag(flag), valueName(flag.valueName()),
        option(flag.name(), cl::desc(flag.help()), cl::value_desc(valueName),
               cl::init(flag.defaultText()), cl::cat(lccCategory)) {}

  lcc::AttentionFormFlag flag;
  std::string valueName;
  cl::opt<std::string> option;
};

/// The forms' flags; a deque, since an option is registered by address.
std::deque<FormFlag> formFlags;

/// Makes the flags the registered forms declare, before the command line
/// is read.
void makeFormFlags() {
  for (const lcc::AttentionFormFlag &flag : lcc::registeredFormFlags())
    formFlags.emplace_back(flag);
  // --attention's help names the forms registered so far, lcc's own.
  static std::string help =
      "Form of the attention ops: 'keep' (as written, the default), 'auto' "
      "(the cheapest of --auto-forms where a cost model favours it, see "
      "--memory-budget), a form a plugin adds (see --load-plugin, "
      "--attention-options) or one of lcc's: ";
  llvm::ListSeparator separator("; ");
  for (const lcc::AttentionFormDefinition *form :
       lcc::registeredAttentionForms()) {
    help += StringRef(separator);
    help += "'" + form->name + "' (" + form->summary + ")";
  }
  help += ". A remark names each op rewritten or kept";
  attentionName.setDescription(help);
}

/// "512M" -> 536870912; nullopt for anything else.
std::optional<int64_t> parseBytes(StringRef text) {
  int64_t scale = 1;
  if (text.consume_back("K") || text.consume_back("k"))
    scale = int64_t(1) << 10;
  else if (text.consume_back("M") || text.consume_back("m"))
    scale = int64_t(1) << 20;
  else if (text.consume_back("G") || text.consume_back("g"))
    scale = int64_t(1) << 30;
  int64_t value;
  if (text.getAsInteger(10, value) || value < 0 ||
      value > std::numeric_limits<int64_t>::max() / scale)
    return std::nullopt;
  return value * scale;
}

cl::opt<bool> reversible(
    "reversible",
    cl::desc("Make each stack of residual blocks (attention, then "
             "feed-forward) reversible, as Reformer does "
             "(attn-insert-reversible): the train step then recomputes each "
             "block's inputs from its outputs instead of storing its "
             "activations. A different network from the residual one; blocks "
             "written as attn.reversible are kept"),
    cl::init(false), cl::cat(lccCategory));

cl::opt<int64_t> contextParallel(
    "context-parallel",
    cl::desc("Split each sequence over P ranks (attn-context-parallel): "
             "every function that attends takes and returns rank r's share "
             "of the positions (chunks r and 2P-1-r of 2P), dense attention "
             "as ring attention, every other form split over the heads "
             "(DeepSpeed-Ulysses), the loss averaged over the ranks. Run "
             "the artifact under mpirun -np P: lcc-run and lcc-train give "
             "each rank its share and write whole results from rank 0"),
    cl::value_desc("P"), cl::init(1), cl::cat(lccCategory));

cl::opt<bool> contextParallelOverHeads(
    "context-parallel-over-heads",
    cl::desc("With --context-parallel: split dense attention over the heads "
             "too, not as ring attention. Its train step then keeps 1/P of "
             "the attention's keys and values per rank (ring attention keeps "
             "every step's block) and sends fewer bytes beyond 2 ranks; the "
             "heads must divide by P"),
    cl::init(false), cl::cat(lccCategory));

cl::opt<int64_t> ffChunks = knobFlag(lcc::knobs::kFeedForwardChunks);
cl::opt<int64_t> attentionChunks = knobFlag(lcc::knobs::kAttentionChunks);
cl::opt<int64_t> queryTile = knobFlag(lcc::knobs::kQueryTile);
cl::opt<int64_t> keyTile = knobFlag(lcc::knobs::kKeyTile);

cl::opt<std::string> trainFunction(
    "train", cl::ValueOptional,
    cl::desc("Also compile a train step: differentiate FUNC (default 'loss', "
             "whose first result is a scalar f32 loss) with respect to every "
             "attn.param it uses and add the function 'train_step', which "
             "takes FUNC's arguments, updates the parameters and optimizer "
             "state held by the loaded module and returns the loss"),
    cl::value_desc("FUNC"), cl::cat(lccCategory));

cl::opt<std::string> decodeFunction(
    "decode", cl::ValueOptional,
    cl::desc("Also compile generation: from the causal model FUNC (default "
             "'forward': tokens [B, L] i32 -> logits [B, L, V]) add 'prefill' "
             "(the prompt, filling key and value caches held by the loaded "
             "module) and 'decode_step' (one new token at a position, the "
             "caches updated on the device); lcc-generate runs them "
             "(docs/generation.md)"),
    cl::value_desc("FUNC"), cl::cat(lccCategory));

cl::opt<int64_t> maxCache(
    "max-cache",
    cl::desc("With --decode: the positions the caches hold, at least the "
             "model's sequence length (the default); more only for a model "
             "without learned positions"),
    cl::value_desc("N"), cl::init(0), cl::cat(lccCategory));

cl::opt<std::string> optimizerName(
    "optimizer",
    cl::desc("The train step's optimizer: 'adam' (default; torch.optim.Adam, "
             "AdamW with --weight-decay) or 'sgd' (p -= lr * g)"),
    cl::value_desc("sgd|adam"), cl::init("adam"), cl::cat(lccCategory));

cl::opt<double> learningRate(StringRef(lcc::knobs::kLearningRate.flag),
                             cl::desc(lcc::knobs::kLearningRate.help),
                             cl::value_desc("F"),
                             cl::init(lcc::knobs::kLearningRate.defaultValue),
                             cl::cat(lccCategory));

cl::opt<double> weightDecay(StringRef(lcc::knobs::kWeightDecay.flag),
                            cl::desc(lcc::knobs::kWeightDecay.help),
                            cl::value_desc("F"),
                            cl::init(lcc::knobs::kWeightDecay.defaultValue),
                            cl::cat(lccCategory));

cl::opt<double> gradClip(StringRef(lcc::knobs::kGradClip.flag),
                         cl::desc(lcc::knobs::kGradClip.help),
                         cl::value_desc("F"),
                         cl::init(lcc::knobs::kGradClip.defaultValue),
                         cl::cat(lccCategory));

cl::opt<double> centroidDecay(StringRef(lcc::knobs::kCentroidDecay.flag),
                              cl::desc(lcc::knobs::kCentroidDecay.help),
                              cl::value_desc("F"),
                              cl::init(lcc::knobs::kCentroidDecay.defaultValue),
                              cl::cat(lccCategory));

cl::opt<bool> emitGradients(
    "emit-gradients",
    cl::desc("With --train, also add FUNC_gradients, returning the loss and "
             "the gradient of every parameter (results named after the "
             "parameters)"),
    cl::init(false), cl::cat(lccCategory));

cl::opt<bool> accumulateGradients(
    "accumulate-gradients",
    cl::desc("With --train, also add accumulate_step, so that lcc-train "
             "--accumulate=K updates once per K batches with their mean "
             "gradient (costs a buffer the size of the parameters)"),
    cl::init(false), cl::cat(lccCategory));

cl::opt<int64_t> gradientBucketBytes(
    "gradient-bucket-bytes",
    cl::desc("With --train, run under mpirun: average the gradients over the "
             "ranks in buckets of about N bytes, each as soon as the backward "
             "has computed it, so that it is reduced while the backward goes "
             "on (default 4 MiB; 0: one all-reduce after the backward)"),
    cl::value_desc("N"), cl::init(4 << 20), cl::cat(lccCategory));

cl::opt<bool> recomputeReversible(
    "recompute-reversible",
    cl::desc("With --train, recompute each reversible block's inputs from its "
             "outputs in the backward, as RevNet does (default true; false "
             "stores its activations like any block's, for comparison)"),
    cl::init(true), cl::cat(lccCategory));

cl::opt<std::string> dumpDirectory(
    "dump-ir",
    cl::desc("Write the IR after every stage to DIR, one numbered file each "
             "(00-attn.mlir, 01-linalg.mlir, ...)"),
    cl::value_desc("DIR"), cl::cat(lccCategory));

cl::opt<bool> verbose(
    "verbose",
    cl::desc("Print each part of the compilation and its time on stderr (the "
             "default when stderr is a terminal); --mlir-timing times every "
             "pass"),
    cl::init(false), cl::cat(lccCategory));

cl::opt<std::string> cacheDirectory(
    "cache-dir",
    cl::desc("Keep compiled kernels in DIR between compiles (default: "
             "$LCC_CACHE_DIR, else lcc/kernels under $XDG_CACHE_HOME or "
             "~/.cache); a kernel compiled before, by this build of lcc for "
             "this CPU, is not compiled again"),
    cl::value_desc("DIR"), cl::cat(lccCategory));

cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass, not only after each stage: "
             "slower, and names the pass when a compile fails with an "
             "internal error"),
    cl::init(false), cl::cat(lccCategory));

cl::opt<bool> noCache(
    "no-cache",
    cl::desc("Compile every kernel, reading and writing no kernel cache"),
    cl::init(false), cl::cat(lccCategory));

cl::opt<bool> printPipeline(
    "print-pipeline",
    cl::desc("Print the pass pipeline of each module stage, as lcc-opt "
             "runs it by name (with these --attention flags), and exit"),
    cl::init(false), cl::cat(lccCategory));

cl::opt<std::string> cpuName(
    "cpu",
    cl::desc("LLVM CPU the CPU code is compiled for (default 'native': this "
             "machine's features, e.g. AVX-512, which the artifact then "
             "needs: a CPU without them refuses it; 'x86-64-v3' runs on any "
             "AVX2 CPU, 'x86-64-v4' on any AVX-512 one, 'x86-64' on all)"),
    cl::value_desc("name"), cl::init("native"), cl::cat(lccCategory));

cl::list<std::string> mapInputs(
    "input",
    cl::desc("With --emit=attention-map: an input of the model's first "
             "function (.npy, repeated in argument order); LSH and routed "
             "attention are drawn for it: each token's bucket or cluster and "
             "the keys each query scores"),
    cl::value_desc("FILE.npy"), cl::cat(lccCategory));

cl::opt<std::string> mapParams(
    "params",
    cl::desc("With --emit=attention-map --input: the weights (.safetensors, "
             "by name; default: drawn as lcc-run --init-params draws them, "
             "seed 0)"),
    cl::value_desc("FILE.safetensors"), cl::cat(lccCategory));

/// --emit=attention-map: one SVG per attention op into the folder -o
/// names (created where missing), and a line per map on stdout; with
/// --input, LSH and routed attention for that input (`probeSource`: the
/// model as parsed).
int writeAttentionMaps(ModuleOp module, const lcc::CompileOptions &options,
                       ModuleOp probeSource) {
  if (outputFilename == "-") {
    lcc::reportError(kTool, "--emit=attention-map writes a folder of SVG "
                            "files: name it with -o DIR");
    return 1;
  }
  if (std::error_code error =
          llvm::sys::fs::create_directories(outputFilename)) {
    lcc::reportError(kTool, "cannot create '" + outputFilename +
                                "': " + error.message());
    return 1;
  }
  llvm::StringMap<lcc::KeySelection> selections;
  if (probeSource) {
    lcc::AttentionMapInputs given{{mapInputs.begin(), mapInputs.end()},
                                  mapParams};
    FailureOr<llvm::StringMap<lcc::KeySelection>> selected =
        lcc::selectKeysForInput(probeSource, options, given, kTool);
    if (failed(selected))
      return 1;
    selections = std::move(*selected);
  }
  std::vector<lcc::AttentionMap> maps =
      lcc::drawAttentionMaps(module, lcc::attentionTilingFor(options),
                             selections, static_cast<bool>(probeSource));
  for (const lcc::AttentionMap &map : maps) {
    llvm::SmallString<256> path(outputFilename);
    llvm::sys::path::append(path, map.fileName);
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        mlir::openOutputFile(path, &error);
    if (!file) {
      lcc::reportError(kTool, error);
      return 1;
    }
    file->os() << map.svg;
    if (file->os().has_error()) {
      lcc::reportError(kTool, "failed writing '" + path.str().str() + "'");
      file->os().clear_error();
      return 1;
    }
    file->keep();
    llvm::outs() << path << ": " << map.summary << "\n";
  }
  if (maps.empty())
    llvm::outs() << "no attention op with a compile-time map\n";
  return 0;
}

void printVersion(llvm::raw_ostream &os) {
  os << "lcc " << LCC_VERSION << " (MLIR/LLVM " << LLVM_VERSION_STRING << ")\n";
}

/// The value of `name` among `choices`, or an error naming the option.
template <typename T, size_t N>
std::optional<T> parseChoice(StringRef option, StringRef name,
                             const Choice<T> (&choices)[N]) {
  for (const Choice<T> &choice : choices)
    if (choice.name == name)
      return choice.value;
  std::string expected;
  for (const Choice<T> &choice : choices)
    expected += (expected.empty() ? "'" : ", '") + choice.name.str() + "'";
  lcc::reportError(kTool, "unknown --" + option + " value '" + name +
                              "'; expected one of " + expected);
  return std::nullopt;
}

/// Writes each stage to DIR/NN-name.ext in the order the stages run. The
/// compiler copies the dumper into each target's options; the copies share
/// one count, so the CPU and CUDA stages are numbered in one sequence.
class StageDumper {
public:
  explicit StageDumper(std::string directory)
      : directory(std::move(directory)), next(std::make_shared<unsigned>(0)) {}

  void operator()(StringRef name, StringRef text) {
    StringRef extension =
        name.ends_with(".ll") || name.ends_with(".ptx") ? "" : ".mlir";
    SmallString<256> path(directory);
    llvm::sys::path::append(
        path, llvm::formatv("{0:d2}-{1}{2}", (*next)++, name, extension).str());
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec) {
      lcc::reportError(kTool, "cannot write '" + path + "': " + ec.message());
      return;
    }
    os << text;
  }

private:
  std::string directory;
  std::shared_ptr<unsigned> next;
};

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // lcc's own attention forms, once and first: the ones plugins add come
  // after them.
  lcc::registerBuiltinAttentionForms();
  makeFormFlags();
  cl::SetVersionPrinter(printVersion);
  // MLIR's debugging flags (--mlir-timing, --mlir-print-ir-after-all,
  // --mlir-print-debuginfo, ...) work as in mlir-opt; --help lists lcc's.
  // First, so that --mlir-print-ir-after=PASS and the like, whose parsers
  // list the passes registered when they are made, can name lcc's passes.
  lcc::registerLccPasses();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(lccCategory);
  if (!lcc::parseCommandLine(
          argc, argv, kTool,
          "lcc: compiles transformer models written in the attn dialect\n\n"
          "  Reads MODEL.mlir, verifies every op, lowers it to native code "
          "and\n"
          "  writes the stage chosen by --emit (by default the .lcm artifact\n"
          "  that lcc-run runs). Errors are one 'lcc: error:' line each.\n\n"
          "  Example: lcc models/reformer-tiny.mlir -o reformer-tiny.lcm\n"))
    return 1;

  std::optional<lcc::Stage> stage = parseChoice("emit", emitName, kEmitChoices);
  if (!stage)
    return 1;
  bool targetCpu = false, targetCuda = false;
  for (llvm::StringRef device : llvm::split(targetName, ',')) {
    if (device == "cpu" && !targetCpu) {
      targetCpu = true;
    } else if (device == "cuda" && !targetCuda) {
      targetCuda = true;
    } else {
      lcc::reportError(kTool, "invalid --target '" + targetName +
                                  "'; expected 'cpu', 'cuda' or 'cpu,cuda'");
      return 1;
    }
  }
  if (targetCuda && !lcc::findCudaArch(cudaArch)) {
    lcc::reportError(kTool, "unsupported --cuda-arch '" + cudaArch +
                                "'; expected one of " +
                                lcc::supportedCudaArchs().str());
    return 1;
  }
  if (cudaTF32 && !targetCuda) {
    lcc::reportError(kTool, "--cuda-tf32 is for the CUDA kernels: add cuda "
                            "to --target");
    return 1;
  }
  if (cudaTF32 && !lcc::hasBF16TensorCores(cudaArch)) {
    lcc::reportError(kTool, "--cuda-tf32 needs tensor cores (sm_80 and up); "
                            "--cuda-arch=" +
                                cudaArch + " has none");
    return 1;
  }
  if (attentionPrecision != "f32" && attentionPrecision != "bf16" &&
      attentionPrecision != "f16") {
    lcc::reportError(kTool, "invalid --attention-precision '" +
                                attentionPrecision +
                                "'; expected 'f32', 'bf16' or 'f16'");
    return 1;
  }
  // Plugins after lcc's own forms: they add forms --attention may name.
  for (const std::string &path : pluginPaths) {
    std::string error;
    if (!lcc::loadPlugin(path, error)) {
      lcc::reportError(kTool, error);
      return 1;
    }
  }
  if (attentionName != "keep" && attentionName != "auto" &&
      !lcc::lookupAttentionForm(attentionName)) {
    lcc::reportError(kTool, "unknown --attention value '" + attentionName +
                                "'; expected one of " +
                                lcc::attentionFormNames());
    return 1;
  }
  std::optional<int64_t> memoryBudget = parseBytes(memoryBudgetText);
  if (!memoryBudget) {
    lcc::reportError(kTool, "invalid --memory-budget '" + memoryBudgetText +
                                "'; expected bytes with an optional K, M or "
                                "G suffix");
    return 1;
  }
  // Each flag out of range gets its own message, naming it.
  struct KnobFlag {
    const lcc::IntegerKnob &knob;
    const cl::opt<int64_t> &flag;
  };
  for (const KnobFlag &given :
       {KnobFlag{lcc::knobs::kSeed, seed},
        KnobFlag{lcc::knobs::kFeedForwardChunks, ffChunks},
        KnobFlag{lcc::knobs::kAttentionChunks, attentionChunks},
        KnobFlag{lcc::knobs::kQueryTile, queryTile},
        KnobFlag{lcc::knobs::kKeyTile, keyTile}}) {
    std::string problem =
        lcc::checkKnob(given.knob, ("--" + given.knob.flag).str(), given.flag);
    if (problem.empty())
      continue;
    lcc::reportError(kTool, problem);
    return 1;
  }
  if (!autoForms.empty() && attentionName != "auto") {
    lcc::reportError(kTool, "--auto-forms chooses among forms for "
                            "--attention=auto; this is --attention=" +
                                attentionName);
    return 1;
  }
  lcc::AttentionFormOptions forms;
  forms.attention = attentionName;
  if (!autoForms.empty())
    forms.autoForms.assign(autoForms.begin(), autoForms.end());
  forms.formOptions = attentionOptions;
  forms.seed = seed;
  forms.memoryBudget = *memoryBudget;
  for (const FormFlag &flag : formFlags)
    if (flag.option.getNumOccurrences())
      if (std::string problem =
              lcc::setFormFlag(forms, flag.flag, flag.option, "--");
          !problem.empty()) {
        lcc::reportError(kTool, problem);
        return 1;
      }
  std::optional<lcc::GenerateTrainStepOptions> train;
  if (trainFunction.getNumOccurrences()) {
    train.emplace();
    train->function = trainFunction.empty() ? std::string("loss")
                                            : std::string(trainFunction);
    train->optimizer = optimizerName;
    train->lr = learningRate;
    train->weightDecay = weightDecay;
    train->gradClip = gradClip;
    train->centroidDecay = centroidDecay;
    train->emitGradients = emitGradients;
    train->accumulateGradients = accumulateGradients;
    train->recomputeReversible = recomputeReversible;
    if (gradientBucketBytes < 0) {
      lcc::reportError(kTool, "expected --gradient-bucket-bytes >= 0, got " +
                                  std::to_string(gradientBucketBytes));
      return 1;
    }
    train->gradientBucketBytes = gradientBucketBytes;
  } else {
    for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
             &optimizerName, &learningRate, &weightDecay, &gradClip,
             &centroidDecay, &emitGradients, &accumulateGradients,
             &recomputeReversible, &gradientBucketBytes})
      if (flag->getNumOccurrences()) {
        lcc::reportError(kTool, "--" + flag->ArgStr.str() +
                                    " configures the train step: add --train");
        return 1;
      }
  }
  std::optional<lcc::GenerateDecodeStepOptions> decode;
  if (decodeFunction.getNumOccurrences()) {
    decode.emplace();
    decode->function = decodeFunction.empty() ? std::string("forward")
                                              : std::string(decodeFunction);
    if (maxCache.getNumOccurrences() && maxCache < 1) {
      lcc::reportError(kTool, "expected --max-cache >= 1, got " +
                                  std::to_string(maxCache));
      return 1;
    }
    decode->maxCache = maxCache;
  } else if (maxCache.getNumOccurrences()) {
    lcc::reportError(kTool, "--max-cache sizes the decode step's caches: add "
                            "--decode");
    return 1;
  }
  if (contextParallel < 1 || contextParallel > (int64_t(1) << 20)) {
    lcc::reportError(kTool, "expected --context-parallel between 1 and " +
                                std::to_string(int64_t(1) << 20) + ", got " +
                                std::to_string(contextParallel));
    return 1;
  }
  if (contextParallelOverHeads && contextParallel == 1) {
    lcc::reportError(kTool, "--context-parallel-over-heads chooses how "
                            "--context-parallel=P splits attention: add "
                            "--context-parallel");
    return 1;
  }
  if (contextParallel > 1)
    for (auto [given, flag] : {std::pair{reversible.getValue(), "--reversible"},
                               std::pair{decode.has_value(), "--decode"}})
      if (given) {
        lcc::reportError(kTool, std::string(flag) +
                                    " with --context-parallel is not "
                                    "supported yet");
        return 1;
      }
  lcc::CompileOptions options;
  static_cast<lcc::AttentionFormOptions &>(options) = forms;
  options.contextParallel = contextParallel;
  options.contextParallelOverHeads = contextParallelOverHeads;
  options.decode = decode;
  options.stopAfter = *stage;
  options.cpu = cpuName;
  options.targetCpu = targetCpu;
  options.targetCuda = targetCuda;
  options.cudaArch = cudaArch;
  options.cudaTF32 = cudaTF32;
  if (attentionPrecision != "f32") {
    options.attentionPrecision = attentionPrecision;
    // Not an error: the artifact is right, and its CUDA kernels may be
    // what the flag is for. But the CPU's half products would be loops.
    if (targetCpu && (attentionPrecision == "f16" ||
                      !lcc::cpuVectorRegisters(cpuName).bf16Dot))
      llvm::errs() << kTool
                   << ": warning: --attention-precision=" << attentionPrecision
                   << " on this CPU ("
                   << (attentionPrecision == "f16"
                           ? "no CPU has f16 dot products"
                           : "--cpu=" + cpuName + " has no avx512_bf16")
                   << ") multiplies half pairs in loops, slower than f32; "
                      "it pays on CUDA's tensor cores and on CPUs with bf16 "
                      "dot products or AMX\n";
  }
  options.cudaPath = cudaPath;
  options.train = train;
  options.reversible = reversible;
  options.ffChunks = ffChunks;
  options.attentionChunks = attentionChunks;
  options.queryTile = queryTile;
  options.keyTile = keyTile;
  if (noCache && cacheDirectory.getNumOccurrences()) {
    lcc::reportError(kTool, "--no-cache and --cache-dir contradict each "
                            "other: give one");
    return 1;
  }
  options.kernelCache.enabled = !noCache;
  lcc::setVerifyEachPass(verifyEach);
  options.kernelCache.directory = cacheDirectory;
  if (printPipeline) {
    std::string error;
    llvm::raw_string_ostream errors(error);
    FailureOr<std::string> pipelines =
        lcc::printStagePipelines(forms, lcc::attentionTilingFor(options),
                                 cpuName, cudaArch, cudaTF32, errors);
    if (failed(pipelines)) {
      lcc::reportError(kTool, error);
      return 1;
    }
    llvm::outs() << *pipelines;
    return 0;
  }
  {
    // A form's bad options are one error now, before any parsing.
    std::string error;
    llvm::raw_string_ostream errors(error);
    OpPassManager check(ModuleOp::getOperationName());
    if (failed(lcc::buildAttentionFormsPipeline(check, forms, errors))) {
      lcc::reportError(kTool, error);
      return 1;
    }
  }
  if (!mapInputs.empty() && *stage != lcc::Stage::AttentionMap) {
    lcc::reportError(kTool, "--input is for --emit=attention-map (lcc-run "
                            "runs a compiled model on inputs)");
    return 1;
  }
  if (!mapParams.empty() && mapInputs.empty()) {
    lcc::reportError(kTool, "--params is for --emit=attention-map with "
                            "--input: the weights the input runs with");
    return 1;
  }
  if (*stage == lcc::Stage::Artifact && outputFilename == "-") {
    lcc::reportError(kTool, "an artifact is binary: name the output file "
                            "with -o (or pick another --emit)");
    return 1;
  }
  // Writing the output over a file this run reads would destroy it.
  std::vector<std::pair<std::string, std::string>> reads = {
      {"the model", inputFilename}};
  for (const std::string &path : pluginPaths)
    reads.push_back({"--load-plugin", path});
  for (const std::string &path : mapInputs)
    reads.push_back({"--input", path});
  if (!mapParams.empty())
    reads.push_back({"--params", mapParams});
  for (const auto &[flag, path] : reads) {
    bool same = false;
    if (outputFilename != "-" &&
        !llvm::sys::fs::equivalent(outputFilename, path, same) && same) {
      lcc::reportError(kTool, "-o '" + outputFilename + "' is " + flag + " '" +
                                  path +
                                  "', which this run reads: writing it would "
                                  "destroy it; name another file");
      return 1;
    }
  }
  if (!dumpDirectory.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpDirectory)) {
      lcc::reportError(kTool, "cannot create --dump-ir directory '" +
                                  dumpDirectory + "': " + ec.message());
      return 1;
    }
  }

  DialectRegistry registry;
  lcc::registerLccDialects(registry);
  MLIRContext context(registry);
  lcc::OneLineDiagnosticHandler diagnostics(&context, kTool);

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    lcc::reportError(kTool, errorMessage);
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  bool parserCrashed = false;
  OwningOpRef<ModuleOp> module =
      lcc::parseModel(sourceMgr, &context, &parserCrashed);
  if (parserCrashed) {
    // What the crashed parser was building is unowned: tearing the context
    // down could crash again (and leak checkers would report those frames).
    llvm::errs().flush();
    std::_Exit(1);
  }
  if (!module)
    return 1; // The parser or a verifier reported why.

  if (!dumpDirectory.empty())
    options.dump = StageDumper(dumpDirectory);
  if (verbose || ::isatty(STDERR_FILENO))
    options.progress = [](StringRef part, double seconds) {
      llvm::errs() << llvm::formatv("{0}: {1} done in {2:F2} s\n", kTool, part,
                                    seconds);
    };
  // The probes of --input start from the model as parsed.
  OwningOpRef<ModuleOp> probeSource;
  if (!mapInputs.empty())
    probeSource = module->clone();
  FailureOr<std::string> result = lcc::compile(*module, options);
  if (failed(result)) {
    if (diagnostics.getNumErrors() == 0)
      lcc::reportError(kTool, "compilation failed");
    return 1;
  }

  if (*stage == lcc::Stage::AttentionMap)
    return writeAttentionMaps(*module, options,
                              probeSource ? *probeSource : ModuleOp());

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    lcc::reportError(kTool, errorMessage);
    return 1;
  }
  output->os() << *result;
  if (*stage != lcc::Stage::Artifact && *stage != lcc::Stage::Llvm &&
      *stage != lcc::Stage::Ptx)
    output->os() << "\n";
  if (output->os().has_error()) {
    lcc::reportError(kTool, "failed writing '" + outputFilename + "'");
    output->os().clear_error();
    return 1;
  }
  output->keep();
  return 0;
}
