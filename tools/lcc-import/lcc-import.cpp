//===- lcc-import.cpp - models of other frameworks as attn IR -------------===//
//
// `lcc-import hf-reformer DIR --seq-len=N -o MODEL.mlir [--params=W]`:
// a Hugging Face Reformer (DIR/config.json, and DIR/model.safetensors when
// there) as an attn model for sequences of N tokens, and its weights in
// lcc's layout (Hugging Face's, converted, or fresh ones as the config
// initialises them). The model is parsed and verified before it is
// written: what lcc-import writes, lcc compiles.
//
//===----------------------------------------------------------------------===//

#include "ReformerConfig.h"
#include "ReformerModel.h"
#include "ReformerWeights.h"

#include "compiler/Diagnostics.h"
#include "compiler/ModelParser.h"
#include "compiler/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>

using namespace lcc::import;
namespace cl = llvm::cl;

namespace {

constexpr llvm::StringLiteral kTool = "lcc-import";

/// The most parameter values an import writes (16 GiB of f32).
constexpr uint64_t kMaxParameterValues = uint64_t(1) << 32;

cl::OptionCategory importCategory("lcc-import hf-reformer options");

cl::opt<std::string> directory(cl::Positional, cl::Required,
                               cl::desc("<checkpoint directory>"),
                               cl::cat(importCategory));
cl::opt<int64_t> seqLen("seq-len", cl::Required,
                        cl::desc("Tokens per sequence the model takes"),
                        cl::value_desc("N"), cl::cat(importCategory));
cl::opt<std::string> outputFilename("o", cl::Required,
                                    cl::desc("The model's attn IR (.mlir)"),
                                    cl::value_desc("MODEL.mlir"),
                                    cl::cat(importCategory));
cl::opt<std::string> paramsFilename(
    "params",
    cl::desc("Also write the weights: DIR/model.safetensors converted to "
             "lcc's layout, or fresh ones (initialised as config.json "
             "says) when DIR has none"),
    cl::value_desc("WEIGHTS.safetensors"), cl::cat(importCategory));
cl::opt<int64_t> batch("batch", cl::init(1),
                       cl::desc("Sequences per call (default 1)"),
                       cl::value_desc("B"), cl::cat(importCategory));
cl::opt<uint64_t>
    seed("seed", cl::init(0),
         cl::desc("Fresh weights' seed, and LSH layer i's hash seed + i unless "
                  "config.json sets hash_seed (default 0)"),
         cl::value_desc("S"), cl::cat(importCategory));

/// Fails on a model too large to write, naming its size.
llvm::Error checkSize(const std::vector<ReformerParameter> &parameters) {
  uint64_t total = 0;
  for (const ReformerParameter &parameter : parameters) {
    uint64_t count = 1;
    for (int64_t size : parameter.shape) {
      if (count > kMaxParameterValues / static_cast<uint64_t>(size))
        return llvm::createStringError(
            llvm::formatv("'{0}' has more than {1} values", parameter.name,
                          kMaxParameterValues));
      count *= size;
    }
    total += count;
    if (total > kMaxParameterValues)
      return llvm::createStringError(llvm::formatv(
          "the model has more than {0} parameter values", kMaxParameterValues));
  }
  return llvm::Error::success();
}

/// Parses and verifies `text`: a model lcc-import writes must compile.
llvm::Error verifyModel(const std::string &text) {
  mlir::DialectRegistry registry;
  lcc::registerLccDialects(registry);
  mlir::MLIRContext context(registry);
  lcc::OneLineDiagnosticHandler diagnostics(&context, kTool);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, outputFilename),
      llvm::SMLoc());
  bool crashed = false;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      lcc::parseModel(sourceMgr, &context, &crashed);
  if (crashed || !module)
    return llvm::createStringError(
        "the imported model does not verify (a bug of lcc-import's)");
  return llvm::Error::success();
}

llvm::Error writeText(const std::string &path, const std::string &text) {
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(path, &message);
  if (!output)
    return llvm::createStringError(message);
  output->os() << text;
  if (output->os().has_error()) {
    output->os().clear_error();
    return llvm::createStringError("failed writing '" + path + "'");
  }
  output->keep();
  return llvm::Error::success();
}

llvm::Error importReformer() {
  if (batch < 1 || batch > (int64_t(1) << 20))
    return llvm::createStringError(llvm::formatv(
        "--batch={0}: expected 1 to {1}", batch.getValue(), int64_t(1) << 20));
  std::string configPath = (llvm::Twine(directory) + "/config.json").str();
  std::string weightsPath =
      (llvm::Twine(directory) + "/model.safetensors").str();
  if (!llvm::sys::fs::is_directory(directory))
    return llvm::createStringError("'" + directory +
                                   "' is not a directory (a Hugging Face "
                                   "checkpoint: config.json and "
                                   "model.safetensors)");
  std::vector<std::string> warnings;
  llvm::Expected<ReformerConfig> config =
      readReformerConfig(configPath, seqLen, warnings);
  if (!config)
    return config.takeError();
  for (const std::string &warning : warnings)
    llvm::errs() << kTool << ": warning: " << warning << "\n";
  std::vector<ReformerParameter> parameters = reformerParameters(*config);
  if (auto error = checkSize(parameters))
    return error;
  ReformerModelOptions options;
  options.batch = batch;
  options.seed = seed;
  options.source = configPath;
  std::string text = writeReformerModel(*config, parameters, options);
  if (auto error = verifyModel(text))
    return error;
  if (auto error = writeText(outputFilename, text))
    return error;
  if (paramsFilename.empty())
    return llvm::Error::success();
  std::optional<std::string> hfWeights;
  if (llvm::sys::fs::exists(weightsPath))
    hfWeights = weightsPath;
  return writeReformerWeights(*config, parameters, hfWeights, seed,
                              paramsFilename);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  const char *usage =
      "usage: lcc-import hf-reformer DIR --seq-len=N -o MODEL.mlir "
      "[--params=WEIGHTS.safetensors] [--batch=B] [--seed=S]";
  if (argc < 2 || llvm::StringRef(argv[1]) == "--help" ||
      llvm::StringRef(argv[1]) == "-h") {
    llvm::outs() << usage
                 << "\n\n  Brings models of other frameworks into the attn "
                    "dialect. Importers:\n"
                    "    hf-reformer   a Hugging Face Reformer language "
                    "model (config.json,\n"
                    "                  model.safetensors); "
                    "`lcc-import hf-reformer --help` for its flags\n";
    return argc < 2 ? 1 : 0;
  }
  if (llvm::StringRef(argv[1]) != "hf-reformer") {
    lcc::reportError(kTool, llvm::Twine("unknown importer '") + argv[1] +
                                "'; expected hf-reformer");
    return 1;
  }
  cl::HideUnrelatedOptions(importCategory);
  // argv[1] is the importer: the flags follow it.
  std::string program = std::string(kTool) + " hf-reformer";
  std::vector<char *> arguments = {program.data()};
  for (int i = 2; i < argc; ++i)
    arguments.push_back(argv[i]);
  if (!lcc::parseCommandLine(
          static_cast<int>(arguments.size()), arguments.data(), kTool,
          "lcc-import hf-reformer: a Hugging Face Reformer language model "
          "(ReformerModelWithLMHead) as attn IR\n\n"
          "  Reads DIR/config.json (and DIR/model.safetensors, if there) and\n"
          "  writes the model for sequences of N tokens: its @forward maps\n"
          "  token ids to logits, its @loss is what `lcc --train` trains.\n"
          "  A config field lcc cannot honour is an error naming it.\n\n"
          "  Example: lcc-import hf-reformer reformer-enwik8 --seq-len=4096 "
          "-o enwik8.mlir --params=enwik8.safetensors\n"))
    return 1;
  if (auto error = importReformer()) {
    lcc::reportError(kTool, llvm::toString(std::move(error)));
    return 1;
  }
  return 0;
}
