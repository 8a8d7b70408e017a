//===- ParameterInit.h - fresh weights for a module's parameters *- C++ -*-===//
//
// `lcc-run --init-params` writes a weights file a module can run with before
// any training: each parameter filled as its `init` says. The values are a
// documented function of the seed and the parameter's name, so the same seed
// gives the same file on every machine and in every parameter order:
//
//   state  = seed XOR fnv1a64(name)
//   u      = ((splitmix64(state) >> 11) + 1) * 2^-53         in (0, 1]
//   Normal = init_scale * Box-Muller(u1, u2), two values per pair of draws:
//            sqrt(-2 ln u1) * cos(2 pi u2), sqrt(-2 ln u1) * sin(2 pi u2)
//   Constant = init_value (a training hyper-parameter's starting value)
//
// computed in double and rounded to the parameter's dtype.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_PARAMETERINIT_H
#define LCC_RUNTIME_PARAMETERINIT_H

#include "module/Loader.h"
#include "formats/Safetensors.h"

namespace lcc::runtime {

/// Sebastiano Vigna's splitmix64: a tiny generator that passes BigCrush and
/// whose whole state is one seedable 64-bit word.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in (0, 1], never 0, so log() is always finite.
  double nextUniform();

private:
  uint64_t state;
};

/// FNV-1a, 64-bit: mixes a parameter's name into its seed.
uint64_t fnv1a64(const std::string &text);

/// The Normal values (times `scale`) of the parameter called `name` drawn
/// from `seed`, in the order the formula above gives them (Box-Muller
/// pairs, cosine first): the one stream behind Normal init, for whoever
/// writes fresh weights.
class NormalValues {
public:
  NormalValues(const std::string &name, uint64_t seed, double scale)
      : generator(seed ^ fnv1a64(name)), scale(scale) {}
  double next();

private:
  SplitMix64 generator;
  double scale;
  bool hasPending = false;
  double pending = 0; // the sine of the last Box-Muller pair
};

/// The fresh values of one parameter, produced in order a chunk at a time.
class ParameterValues {
public:
  ParameterValues(const lcm::Parameter &parameter, uint64_t seed);
  /// An error when the init cannot fill the dtype (Normal of integers).
  Status check() const;
  const std::string &getName() const { return name; }
  /// Elements in all.
  uint64_t size() const { return count; }
  /// Stores the next `elements` values, little-endian, at `out`.
  void next(uint8_t *out, uint64_t elements);

private:
  std::string name;
  DType dtype;
  lcm::ParameterInit init;
  double constant;
  NormalValues normal;
  uint64_t count;
};

/// Whether a weights file holds `parameter`: the module does not embed it
/// (embedded data is a constant) and it is no optimizer state (which starts
/// at zero on the device, and only a checkpoint holds).
bool isWeight(const lcm::Parameter &parameter);

/// Elements generated at a time by the writers of fresh values: memory does
/// not grow with the weights.
constexpr uint64_t kInitChunkElements = uint64_t(1) << 16;

/// Fresh values for every weight of `module` (isWeight), in module order.
StatusOr<std::vector<NamedTensor>> initializeParameters(const Module &module,
                                                        uint64_t seed);

/// initializeParameters() written as a .safetensors file at `path`, one
/// chunk at a time (memory does not grow with the weights), atomically.
Status writeInitialParameters(const Module &module, uint64_t seed,
                              const std::string &path);

} // namespace lcc::runtime

#endif // LCC_RUNTIME_PARAMETERINIT_H
