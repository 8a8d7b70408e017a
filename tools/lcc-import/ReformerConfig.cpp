//===- ReformerConfig.cpp - a Hugging Face Reformer config.json -----------===//

#include "ReformerConfig.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <numeric>

using namespace lcc::import;

namespace {

/// Larger is no config a model of ours could come from.
constexpr uint64_t kMaxConfigBytes = 1 << 24;
/// Each size a config gives; the parameters' total is checked apart.
constexpr int64_t kMaxSize = int64_t(1) << 24;

llvm::Error fieldError(llvm::StringRef field, const llvm::Twine &what) {
  return llvm::createStringError("config.json: " + field + ": " + what);
}

/// The fields of one JSON object, each read once with its type checked.
class Fields {
public:
  explicit Fields(const llvm::json::Object &object) : object(object) {}

  llvm::Error integer(llvm::StringRef key, int64_t &out, int64_t minimum = 1) {
    const llvm::json::Value *value = object.get(key);
    if (!value || value->kind() == llvm::json::Value::Null)
      return llvm::Error::success();
    std::optional<int64_t> number = value->getAsInteger();
    if (!number)
      return fieldError(key, "expected an integer");
    if (*number < minimum || *number > kMaxSize)
      return fieldError(key, llvm::formatv("expected {0} to {1}, got {2}",
                                           minimum, kMaxSize, *number));
    out = *number;
    return llvm::Error::success();
  }

  llvm::Error boolean(llvm::StringRef key, bool &out) {
    const llvm::json::Value *value = object.get(key);
    if (!value || value->kind() == llvm::json::Value::Null)
      return llvm::Error::success();
    std::optional<bool> flag = value->getAsBoolean();
    if (!flag)
      return fieldError(key, "expected true or false");
    out = *flag;
    return llvm::Error::success();
  }

  llvm::Error number(llvm::StringRef key, double &out) {
    const llvm::json::Value *value = object.get(key);
    if (!value || value->kind() == llvm::json::Value::Null)
      return llvm::Error::success();
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number < 0)
      return fieldError(key, "expected a finite number >= 0");
    out = *number;
    return llvm::Error::success();
  }

  llvm::Error string(llvm::StringRef key, std::string &out) {
    const llvm::json::Value *value = object.get(key);
    if (!value || value->kind() == llvm::json::Value::Null)
      return llvm::Error::success();
    std::optional<llvm::StringRef> text = value->getAsString();
    if (!text)
      return fieldError(key, "expected a string");
    out = text->str();
    return llvm::Error::success();
  }

  /// A list of integers, or (`scalarToo`) one integer as a list of one.
  llvm::Error integers(llvm::StringRef key, std::vector<int64_t> &out,
                       bool scalarToo = false) {
    const llvm::json::Value *value = object.get(key);
    if (!value || value->kind() == llvm::json::Value::Null)
      return llvm::Error::success();
    if (std::optional<int64_t> number = value->getAsInteger();
        number && scalarToo) {
      if (*number < 1 || *number > kMaxSize)
        return fieldError(key, llvm::formatv("expected 1 to {0}, got {1}",
                                             kMaxSize, *number));
      out = {*number};
      return llvm::Error::success();
    }
    const llvm::json::Array *array = value->getAsArray();
    if (!array || array->empty())
      return fieldError(key, scalarToo ? "expected an integer or a list of them"
                                       : "expected a list of integers");
    out.clear();
    for (const llvm::json::Value &element : *array) {
      std::optional<int64_t> number = element.getAsInteger();
      if (!number || *number < 1 || *number > kMaxSize)
        return fieldError(
            key, llvm::formatv("expected integers 1 to {0}", kMaxSize));
      out.push_back(*number);
    }
    return llvm::Error::success();
  }

  llvm::Error strings(llvm::StringRef key, std::vector<std::string> &out) {
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return llvm::Error::success();
    const llvm::json::Array *array = value->getAsArray();
    if (!array || array->empty())
      return fieldError(key, "expected a list of strings");
    out.clear();
    for (const llvm::json::Value &element : *array) {
      std::optional<llvm::StringRef> text = element.getAsString();
      if (!text)
        return fieldError(key, "expected a list of strings");
      out.push_back(text->str());
    }
    return llvm::Error::success();
  }

  bool has(llvm::StringRef key) const {
    const llvm::json::Value *value = object.get(key);
    return value && value->kind() != llvm::json::Value::Null;
  }

private:
  const llvm::json::Object &object;
};

llvm::Error readFields(const llvm::json::Object &object, ReformerConfig &c,
                       std::vector<std::string> &warnings) {
  Fields f(object);
  int64_t hiddenLayers = 0;
  if (auto e = f.integer("vocab_size", c.vocabSize))
    return e;
  if (auto e = f.integer("hidden_size", c.hiddenSize))
    return e;
  if (auto e = f.integer("num_attention_heads", c.heads))
    return e;
  if (auto e = f.integer("attention_head_size", c.headSize))
    return e;
  if (auto e = f.integer("feed_forward_size", c.feedForwardSize))
    return e;
  if (auto e = f.string("hidden_act", c.hiddenAct))
    return e;
  if (auto e = f.number("layer_norm_eps", c.layerNormEps))
    return e;
  if (auto e = f.boolean("is_decoder", c.isDecoder))
    return e;
  c.attnLayers = {"local", "lsh", "local", "lsh", "local", "lsh"};
  if (auto e = f.strings("attn_layers", c.attnLayers))
    return e;
  if (auto e = f.integer("num_hidden_layers", hiddenLayers))
    return e;
  if (auto e = f.integer("num_hashes", c.numHashes))
    return e;
  if (auto e = f.integer("lsh_attn_chunk_length", c.lshChunkLength))
    return e;
  if (auto e = f.integer("local_attn_chunk_length", c.localChunkLength))
    return e;
  if (auto e = f.integer("lsh_num_chunks_before", c.lshChunksBefore, 0))
    return e;
  if (auto e = f.integer("lsh_num_chunks_after", c.lshChunksAfter, 0))
    return e;
  if (auto e = f.integer("local_num_chunks_before", c.localChunksBefore, 0))
    return e;
  if (auto e = f.integer("local_num_chunks_after", c.localChunksAfter, 0))
    return e;
  if (auto e = f.integers("num_buckets", c.numBuckets, /*scalarToo=*/true))
    return e;
  if (f.has("hash_seed")) {
    int64_t seed = 0;
    if (auto e = f.integer("hash_seed", seed, 0))
      return e;
    c.hashSeed = static_cast<uint64_t>(seed);
  }
  if (auto e = f.boolean("axial_pos_embds", c.axialPosEmbds))
    return e;
  if (auto e = f.integers("axial_pos_shape", c.axialPosShape))
    return e;
  if (auto e = f.integers("axial_pos_embds_dim", c.axialPosEmbdsDim))
    return e;
  if (auto e = f.integer("max_position_embeddings", c.maxPositionEmbeddings))
    return e;
  if (auto e = f.number("initializer_range", c.initializerRange))
    return e;
  if (auto e = f.number("axial_norm_std", c.axialNormStd))
    return e;
  if (hiddenLayers && hiddenLayers != c.layers())
    return fieldError("num_hidden_layers",
                      llvm::formatv("{0}, but attn_layers names {1} layers",
                                    hiddenLayers, c.layers()));
  for (const char *dropout :
       {"hidden_dropout_prob", "lsh_attention_probs_dropout_prob",
        "local_attention_probs_dropout_prob"}) {
    double rate = 0;
    if (auto e = f.number(dropout, rate))
      return e;
    if (rate > 0)
      warnings.push_back(llvm::formatv(
          "config.json: {0} {1} is not imported: lcc's model has no dropout "
          "(Hugging Face applies it in training only)",
          dropout, rate));
  }
  return llvm::Error::success();
}

/// Checks what the model is made of, whatever the sequence length.
llvm::Error checkModel(const ReformerConfig &c) {
  for (auto [i, kind] : llvm::enumerate(c.attnLayers))
    if (kind != "lsh" && kind != "local")
      return fieldError("attn_layers",
                        llvm::formatv("layer {0} is '{1}'; Hugging Face's "
                                      "Reformer has 'lsh' and 'local' layers",
                                      i, kind));
  if (c.hiddenAct != "relu" && c.hiddenAct != "gelu")
    return fieldError("hidden_act",
                      "'" + c.hiddenAct +
                          "' is not one of lcc's activations: relu, gelu "
                          "(exact, as Hugging Face's 'gelu')");
  if (!(c.layerNormEps > 0))
    return fieldError("layer_norm_eps", "expected a number > 0");
  // ReformerModelWithLMHead asserts no look-ahead for the kinds it has.
  if (c.lshChunksAfter != 0 && llvm::is_contained(c.attnLayers, "lsh"))
    return fieldError("lsh_num_chunks_after",
                      llvm::formatv("{0}: Hugging Face's language model "
                                    "takes 0",
                                    c.lshChunksAfter));
  if (c.localChunksAfter != 0 && llvm::is_contained(c.attnLayers, "local"))
    return fieldError("local_num_chunks_after",
                      llvm::formatv("{0}: Hugging Face's language model "
                                    "takes 0",
                                    c.localChunksAfter));
  if (c.axialPosEmbds) {
    if (c.axialPosShape.size() != 2)
      return fieldError(
          "axial_pos_shape",
          llvm::formatv("{0} axes: lcc imports 2", c.axialPosShape.size()));
    if (c.axialPosEmbdsDim.size() != 2 ||
        c.axialPosEmbdsDim[0] + c.axialPosEmbdsDim[1] != c.hiddenSize)
      return fieldError("axial_pos_embds_dim",
                        llvm::formatv("expected two sizes that sum to "
                                      "hidden_size ({0})",
                                      c.hiddenSize));
  }
  return llvm::Error::success();
}

/// Hugging Face's num_buckets for `seqLen` when config.json has none
/// (LSHSelfAttention._set_num_buckets): the power of two nearest below
/// 2 * chunks, a factorized pair when that exceeds 2 * max(sqrt(max
/// positions / chunk length), chunk length).
std::vector<int64_t> defaultBuckets(const ReformerConfig &c, int64_t seqLen) {
  int64_t chunks2 = 2 * (seqLen / c.lshChunkLength);
  int power = 63 - __builtin_clzll(static_cast<uint64_t>(chunks2));
  int64_t buckets = int64_t(1) << power;
  int64_t limit =
      2 * std::max(static_cast<int64_t>(std::floor(std::sqrt(
                       double(c.maxPositionEmbeddings / c.lshChunkLength)))),
                   c.lshChunkLength);
  if (buckets <= limit)
    return {buckets};
  return {int64_t(1) << (power / 2), int64_t(1) << (power - power / 2)};
}

/// LSH's bucket count from num_buckets (given or Hugging Face's default).
llvm::Error deriveBuckets(ReformerConfig &c, int64_t seqLen) {
  std::vector<int64_t> given = c.numBuckets;
  std::vector<int64_t> buckets =
      given.empty() ? defaultBuckets(c, seqLen) : given;
  const char *field = "num_buckets";
  for (int64_t n : buckets)
    if (n % 2 != 0)
      return fieldError(field, llvm::formatv("{0} is odd: a bucket is the "
                                             "argmax over [xR; -xR]",
                                             n));
  if (buckets.size() > 2)
    return fieldError(field, llvm::formatv("{0} factors: lcc hashes into "
                                           "one or two",
                                           buckets.size()));
  c.lshBuckets = 1;
  for (int64_t n : buckets)
    c.lshBuckets *= n;
  if (c.lshBuckets > lcc::attn::kMaxLSHBuckets)
    return fieldError(field,
                      llvm::formatv("{0} buckets: at most {1}", c.lshBuckets,
                                    lcc::attn::kMaxLSHBuckets));
  c.lshFactorized = buckets.size() == 2;
  if (c.lshFactorized) {
    auto ours = lcc::attn::lshHashFactors(c.lshBuckets);
    if (!ours || ours->first != buckets[0] || ours->second != buckets[1])
      return fieldError(
          field,
          llvm::formatv(
              "[{0}, {1}]: lcc factorizes {2} buckets as {3}", buckets[0],
              buckets[1], c.lshBuckets,
              ours
                  ? llvm::formatv("[{0}, {1}]", ours->first, ours->second).str()
                  : std::string("nothing (not a multiple of 4)")));
  }
  return llvm::Error::success();
}

/// What the model is at `seqLen`: each layer's form, the buckets, the
/// local window; errors where Hugging Face would pad or refuse.
llvm::Error deriveForLength(ReformerConfig &c, int64_t seqLen) {
  c.seqLen = seqLen;
  if (seqLen > c.maxPositionEmbeddings)
    return fieldError("max_position_embeddings",
                      llvm::formatv("{0}, below --seq-len={1}",
                                    c.maxPositionEmbeddings, seqLen));
  if (c.axialPosEmbds && c.axialPosShape[0] * c.axialPosShape[1] < seqLen)
    return fieldError("axial_pos_shape",
                      llvm::formatv("[{0}, {1}] has {2} positions, below "
                                    "--seq-len={3}",
                                    c.axialPosShape[0], c.axialPosShape[1],
                                    c.axialPosShape[0] * c.axialPosShape[1],
                                    seqLen));
  bool hasLSH = llvm::is_contained(c.attnLayers, "lsh");
  bool hasLocal = llvm::is_contained(c.attnLayers, "local");
  int64_t multiple = hasLSH && hasLocal
                         ? std::lcm(c.lshChunkLength, c.localChunkLength)
                     : hasLSH ? c.lshChunkLength
                              : c.localChunkLength;
  int64_t shortest = std::min(hasLSH ? c.lshChunkLength : kMaxSize,
                              hasLocal ? c.localChunkLength : kMaxSize);
  // Hugging Face pads such a sequence with masked tokens, which LSH then
  // hashes into a bucket of their own: another model than the sequence's.
  if (seqLen % multiple != 0 && seqLen > shortest)
    return llvm::createStringError(llvm::formatv(
        "--seq-len={0}: Hugging Face pads a sequence longer than {1} to a "
        "multiple of {2} (the chunk lengths' least common multiple) and "
        "masks the padding; give a multiple of {2}",
        seqLen, shortest, multiple));
  c.forms.clear();
  bool chunkedLSH = false;
  for (const std::string &kind : c.attnLayers) {
    if (kind == "lsh") {
      chunkedLSH |= seqLen > c.lshChunkLength;
      c.forms.push_back(seqLen > c.lshChunkLength ? ReformerAttention::LSH
                                                  : ReformerAttention::LSHFull);
    } else {
      c.forms.push_back(seqLen > c.localChunkLength
                            ? ReformerAttention::Local
                            : ReformerAttention::LocalFull);
    }
  }
  if (chunkedLSH) {
    if (c.lshChunksBefore != 1)
      return fieldError("lsh_num_chunks_before",
                        llvm::formatv("{0}: lcc's LSH attention looks back "
                                      "one chunk",
                                      c.lshChunksBefore));
    if (auto e = deriveBuckets(c, seqLen))
      return e;
  }
  if (hasLocal && seqLen > c.localChunkLength) {
    c.localChunks = seqLen / c.localChunkLength;
    // Hugging Face concatenates the chunks around a chunk; more than there
    // are would repeat one, whose keys then count twice.
    if (c.localChunksBefore + 1 > c.localChunks)
      return fieldError(
          "local_num_chunks_before",
          llvm::formatv("{0}: at --seq-len={1} there are {2} chunks of {3}, "
                        "and Hugging Face would attend to one of them twice",
                        c.localChunksBefore, seqLen, c.localChunks,
                        c.localChunkLength));
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<ReformerConfig>
lcc::import::readReformerConfig(const std::string &path, int64_t seqLen,
                                std::vector<std::string> &warnings) {
  uint64_t size = 0;
  if (std::error_code error = llvm::sys::fs::file_size(path, size))
    return llvm::createStringError(path + ": " + error.message());
  if (size > kMaxConfigBytes)
    return llvm::createStringError(
        llvm::formatv("{0}: {1} bytes; a config.json has at most {2}", path,
                      size, kMaxConfigBytes));
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(path + ": " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return llvm::createStringError(
        path + ": not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return llvm::createStringError(path + ": expected a JSON object");
  if (const llvm::json::Value *type = object->get("model_type")) {
    std::optional<llvm::StringRef> name = type->getAsString();
    if (!name || *name != "reformer")
      return fieldError("model_type", "expected \"reformer\"");
  }
  if (seqLen < 1 || seqLen > kMaxSize)
    return llvm::createStringError(
        llvm::formatv("--seq-len={0}: expected 1 to {1}", seqLen, kMaxSize));
  ReformerConfig config;
  if (auto e = readFields(*object, config, warnings))
    return std::move(e);
  if (auto e = checkModel(config))
    return std::move(e);
  if (auto e = deriveForLength(config, seqLen))
    return std::move(e);
  return config;
}
