//===- ReformerWeights.cpp - a Reformer's parameters, named and laid out --===//

#include "ReformerWeights.h"

#include "formats/Safetensors.h"
#include "module/ParameterInit.h"
#include "support/Tensor.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <set>

using namespace lcc::import;
using Init = ReformerParameter::Init;

std::vector<ReformerParameter>
lcc::import::reformerParameters(const ReformerConfig &c) {
  int64_t hidden = c.hiddenSize, all = c.allHeadSize();
  std::vector<ReformerParameter> out;
  auto add = [&](std::string name, std::vector<int64_t> shape, Init init,
                 bool transposed = false, std::string alias = "") {
    out.push_back({std::move(name), std::move(shape), init, transposed,
                   std::move(alias)});
  };
  add("reformer.embeddings.word_embeddings.weight", {c.vocabSize, hidden},
      Init::Normal);
  std::string positions = "reformer.embeddings.position_embeddings.";
  if (c.axialPosEmbds) {
    add(positions + "weights.0", {c.axialPosShape[0], 1, c.axialPosEmbdsDim[0]},
        Init::AxialNormal);
    add(positions + "weights.1", {1, c.axialPosShape[1], c.axialPosEmbdsDim[1]},
        Init::AxialNormal);
  } else {
    add(positions + "embedding.weight", {c.maxPositionEmbeddings, hidden},
        Init::Normal);
  }
  for (int64_t i = 0; i < c.layers(); ++i) {
    std::string layer = llvm::formatv("reformer.encoder.layers.{0}.", i).str();
    std::string attention = layer + "attention.self_attention.";
    add(layer + "attention.layer_norm.weight", {hidden}, Init::Ones);
    add(layer + "attention.layer_norm.bias", {hidden}, Init::Zeros);
    if (c.attnLayers[i] == "lsh") {
      add(attention + "query_key.weight", {hidden, all}, Init::Normal, true);
    } else {
      add(attention + "query.weight", {hidden, all}, Init::Normal, true);
      add(attention + "key.weight", {hidden, all}, Init::Normal, true);
    }
    add(attention + "value.weight", {hidden, all}, Init::Normal, true);
    add(layer + "attention.output.dense.weight", {all, hidden}, Init::Normal,
        true);
    add(layer + "feed_forward.layer_norm.weight", {hidden}, Init::Ones);
    add(layer + "feed_forward.layer_norm.bias", {hidden}, Init::Zeros);
    add(layer + "feed_forward.dense.dense.weight", {hidden, c.feedForwardSize},
        Init::Normal, true);
    add(layer + "feed_forward.dense.dense.bias", {c.feedForwardSize},
        Init::Zeros);
    add(layer + "feed_forward.output.dense.weight", {c.feedForwardSize, hidden},
        Init::Normal, true);
    add(layer + "feed_forward.output.dense.bias", {hidden}, Init::Zeros);
  }
  add("reformer.encoder.layer_norm.weight", {2 * hidden}, Init::Ones);
  add("reformer.encoder.layer_norm.bias", {2 * hidden}, Init::Zeros);
  add("lm_head.decoder.weight", {2 * hidden, c.vocabSize}, Init::Normal, true);
  add("lm_head.bias", {c.vocabSize}, Init::Zeros, false,
      "lm_head.decoder.bias");
  return out;
}

const ReformerParameter &
lcc::import::parameterNamed(const std::vector<ReformerParameter> &parameters,
                            const std::string &name) {
  for (const ReformerParameter &parameter : parameters)
    if (parameter.name == name)
      return parameter;
  llvm_unreachable("a Reformer parameter the list does not have");
}

namespace {

using lcc::runtime::DType;

/// Elements of `shape`; lcc-import checked that the count fits.
uint64_t elements(const std::vector<int64_t> &shape) {
  return *lcc::runtime::elementCount(shape);
}

/// Hugging Face's shape of `parameter`.
std::vector<int64_t> hfShape(const ReformerParameter &parameter) {
  std::vector<int64_t> shape = parameter.shape;
  if (parameter.transposed)
    std::swap(shape[0], shape[1]);
  return shape;
}

/// Tensors a Hugging Face checkpoint may hold beside the model's weights:
/// the attention layers' mask constants, saved by older versions.
bool isMaskConstant(llvm::StringRef name) {
  return name.ends_with(".mask_value_float16") ||
         name.ends_with(".mask_value_float32") ||
         name.ends_with(".self_mask_value_float16") ||
         name.ends_with(".self_mask_value_float32");
}

/// `parameter`'s values from Hugging Face's file, in lcc's layout.
llvm::Expected<std::vector<float>>
readHFTensor(const lcc::runtime::SafetensorsReader &reader,
             const ReformerParameter &parameter) {
  auto entry = reader.find(parameter.name);
  if (!entry.ok() && !parameter.alias.empty())
    entry = reader.find(parameter.alias);
  if (!entry.ok())
    return llvm::createStringError(
        llvm::formatv("{0}: no tensor '{1}', which the model has",
                      reader.getPath(), parameter.name));
  const lcc::runtime::SafetensorsEntry &found = **entry;
  std::vector<int64_t> expected = hfShape(parameter);
  if (found.shape != expected)
    return llvm::createStringError(llvm::formatv(
        "{0}: '{1}' is {2}; the config makes it {3}", reader.getPath(),
        found.name, lcc::runtime::formatShape(found.shape),
        lcc::runtime::formatShape(expected)));
  if (found.dtype != DType::F32 && found.dtype != DType::F16 &&
      found.dtype != DType::BF16)
    return llvm::createStringError(llvm::formatv(
        "{0}: '{1}' is {2}; expected f32, f16 or bf16", reader.getPath(),
        found.name, lcc::runtime::dtypeName(found.dtype)));
  std::vector<uint8_t> bytes(found.end - found.begin);
  if (lcc::runtime::Status status = reader.read(found, bytes.data());
      !status.ok())
    return llvm::createStringError(status.getMessage());
  uint64_t count = elements(expected);
  std::vector<float> values(count);
  int64_t rows = expected[0], cols = count / std::max<int64_t>(rows, 1);
  for (uint64_t e = 0; e < count; ++e) {
    float value = static_cast<float>(
        lcc::runtime::elementAsDouble(found.dtype, bytes.data(), e));
    // Element (r, c) of Hugging Face's [out, in] is (c, r) of ours.
    uint64_t at = parameter.transposed ? (e % cols) * rows + e / cols : e;
    values[at] = value;
  }
  return values;
}

/// Fresh values of `parameter`: ParameterInit.h's Normal stream times its
/// standard deviation.
std::vector<float> freshTensor(const ReformerConfig &config,
                               const ReformerParameter &parameter,
                               uint64_t seed) {
  std::vector<float> values(elements(parameter.shape));
  if (parameter.init == Init::Ones || parameter.init == Init::Zeros) {
    std::fill(values.begin(), values.end(),
              parameter.init == Init::Ones ? 1.0f : 0.0f);
    return values;
  }
  lcc::runtime::NormalValues normal(parameter.name, seed,
                                    parameter.init == Init::AxialNormal
                                        ? config.axialNormStd
                                        : config.initializerRange);
  for (float &value : values)
    value = static_cast<float>(normal.next());
  return values;
}

/// A tensor of `reader` that is none of `parameters` (nor a mask
/// constant): the checkpoint is of another model than the config's.
llvm::Error
checkNoOtherTensors(const lcc::runtime::SafetensorsReader &reader,
                    const std::vector<ReformerParameter> &parameters) {
  llvm::StringSet<> known;
  for (const ReformerParameter &parameter : parameters) {
    known.insert(parameter.name);
    if (!parameter.alias.empty())
      known.insert(parameter.alias);
  }
  for (const lcc::runtime::SafetensorsEntry &entry : reader.getHeader().entries)
    if (!known.contains(entry.name) && !isMaskConstant(entry.name))
      return llvm::createStringError(llvm::formatv(
          "{0}: '{1}' is no parameter of the Reformer language model "
          "config.json describes",
          reader.getPath(), entry.name));
  return llvm::Error::success();
}

} // namespace

llvm::Error lcc::import::writeReformerWeights(
    const ReformerConfig &config,
    const std::vector<ReformerParameter> &parameters,
    const std::optional<std::string> &hfWeights, uint64_t seed,
    const std::string &outPath) {
  std::unique_ptr<runtime::SafetensorsReader> reader;
  if (hfWeights) {
    auto opened = runtime::SafetensorsReader::open(*hfWeights);
    if (!opened.ok())
      return llvm::createStringError(opened.getStatus().getMessage());
    reader = std::move(*opened);
    if (auto error = checkNoOtherTensors(*reader, parameters))
      return error;
  }
  std::vector<runtime::SafetensorsLayout> layouts;
  for (const ReformerParameter &parameter : parameters)
    layouts.push_back({parameter.name, DType::F32, parameter.shape,
                       elements(parameter.shape) * sizeof(float)});
  std::map<std::string, std::string> metadata = {
      {"lcc.import",
       hfWeights ? "hf-reformer " + *hfWeights
                 : llvm::formatv("hf-reformer fresh, seed {0}", seed).str()}};
  auto writer = runtime::SafetensorsWriter::create(outPath, layouts, metadata);
  if (!writer.ok())
    return llvm::createStringError(writer.getStatus().getMessage());
  for (const ReformerParameter &parameter : parameters) {
    std::vector<float> values;
    if (reader) {
      auto read = readHFTensor(*reader, parameter);
      if (!read)
        return read.takeError();
      values = std::move(*read);
    } else {
      values = freshTensor(config, parameter, seed);
    }
    if (runtime::Status status =
            (*writer).write(values.data(), values.size() * sizeof(float));
        !status.ok())
      return llvm::createStringError(status.getMessage());
  }
  if (runtime::Status status = (*writer).commit(); !status.ok())
    return llvm::createStringError(status.getMessage());
  return llvm::Error::success();
}
