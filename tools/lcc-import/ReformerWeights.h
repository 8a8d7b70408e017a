//===- ReformerWeights.h - a Reformer's parameters, named and laid out -*- C++
//-*-===//
//
// The one list of an imported Reformer's parameters: the name (Hugging
// Face's state-dict name, which the model's attn.param ops use too), the
// shape lcc holds it in (a torch Linear's [out, in] weight is held [in,
// out], as attn.linear and attn.multi_head_attention take it) and how a
// fresh one starts (Hugging Face's _init_weights). The weights file is
// either Hugging Face's model.safetensors brought to that layout or fresh
// values.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_IMPORT_REFORMERWEIGHTS_H
#define LCC_TOOLS_LCC_IMPORT_REFORMERWEIGHTS_H

#include "ReformerConfig.h"

#include <optional>
#include <string>
#include <vector>

namespace lcc::import {

struct ReformerParameter {
  enum class Init {
    Normal,      // N(0, initializer_range): Linear and Embedding weights
    AxialNormal, // N(0, axial_norm_std): the axial position embeddings
    Ones,        // LayerNorm weights
    Zeros,       // biases
  };
  std::string name;
  std::vector<int64_t> shape; // as lcc holds it
  Init init;
  /// Hugging Face holds it transposed ([out, in] of a 2-D weight).
  bool transposed = false;
  /// Another name Hugging Face may store it under (the LM head's bias,
  /// tied to lm_head.decoder.bias).
  std::string alias;
};

/// Every parameter of the model `config` describes, in model order.
std::vector<ReformerParameter> reformerParameters(const ReformerConfig &config);

/// The parameter called `name` of `parameters`; it must be there.
const ReformerParameter &
parameterNamed(const std::vector<ReformerParameter> &parameters,
               const std::string &name);

/// Writes `parameters` to the .safetensors file `outPath`, atomically:
/// from Hugging Face's `hfWeights` (a model.safetensors; each tensor
/// checked, converted to f32 and transposed where lcc's layout differs;
/// a tensor the model does not have is an error) or, without it, fresh
/// values from `seed`, each named tensor drawn as `lcc-run --init-params`
/// draws (ParameterInit.h) with its own standard deviation.
llvm::Error
writeReformerWeights(const ReformerConfig &config,
                     const std::vector<ReformerParameter> &parameters,
                     const std::optional<std::string> &hfWeights, uint64_t seed,
                     const std::string &outPath);

} // namespace lcc::import

#endif // LCC_TOOLS_LCC_IMPORT_REFORMERWEIGHTS_H
