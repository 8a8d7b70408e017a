//===- ParameterInit.cpp - fresh weights for a module's parameters --------===//

#include "ParameterInit.h"

#include <cmath>
#include <cstring>

namespace lcc::runtime {
namespace {

/// Stores `value` as element `index` of a `dtype` tensor.
void storeElement(DType dtype, uint8_t *data, size_t index, double value) {
  switch (dtype) {
  case DType::F32: {
    float element = float(value);
    std::memcpy(data + 4 * index, &element, 4);
    return;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t bits = dtype == DType::F16 ? floatToHalf(float(value))
                                        : floatToBFloat16(float(value));
    std::memcpy(data + 2 * index, &bits, 2);
    return;
  }
  case DType::I32: {
    int32_t element = int32_t(value);
    std::memcpy(data + 4 * index, &element, 4);
    return;
  }
  case DType::I64: {
    int64_t element = int64_t(value);
    std::memcpy(data + 8 * index, &element, 8);
    return;
  }
  }
}

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

} // namespace

uint64_t SplitMix64::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double SplitMix64::nextUniform() {
  return double((next() >> 11) + 1) * 0x1.0p-53;
}

uint64_t fnv1a64(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

StatusOr<std::vector<NamedTensor>> initializeParameters(const Module &module,
                                                        uint64_t seed) {
  std::vector<NamedTensor> tensors;
  for (size_t i = 0; i < module.getParameterCount(); ++i) {
    const lcm::Parameter &parameter = module.getParameter(i);
    if (parameter.data())
      continue;
    const lcm::TensorSignature &signature = *parameter.signature();
    NamedTensor named;
    named.name = getName(signature);
    named.tensor.dtype = signature.dtype();
    named.tensor.shape = getShape(signature);
    // The loader checked that the size is within bounds.
    uint64_t count = *elementCount(named.tensor.shape);
    named.tensor.data.resize(count * dtypeSize(signature.dtype()));
    uint8_t *data = named.tensor.data.data();

    switch (parameter.init()) {
    case lcm::ParameterInit::Zeros:
      break; // resize() zero-filled it; zero is all-zero bits in each dtype
    case lcm::ParameterInit::Ones:
      for (uint64_t e = 0; e < count; ++e)
        storeElement(signature.dtype(), data, e, 1.0);
      break;
    case lcm::ParameterInit::Normal: {
      if (!isFloat(signature.dtype()))
        return Status::error(StatusCode::InvalidArgument, "parameter '",
                             named.name, "' is ", dtypeName(signature.dtype()),
                             "; Normal init needs a floating-point dtype");
      SplitMix64 generator(seed ^ fnv1a64(named.name));
      double scale = parameter.init_scale();
      const double twoPi = 6.283185307179586476925286766559;
      for (uint64_t e = 0; e < count; e += 2) {
        double radius = std::sqrt(-2.0 * std::log(generator.nextUniform()));
        double angle = twoPi * generator.nextUniform();
        storeElement(signature.dtype(), data, e,
                     scale * radius * std::cos(angle));
        if (e + 1 < count)
          storeElement(signature.dtype(), data, e + 1,
                       scale * radius * std::sin(angle));
      }
      break;
    }
    }
    tensors.push_back(std::move(named));
  }
  return tensors;
}

Status writeInitialParameters(const Module &module, uint64_t seed,
                              const std::string &path) {
  StatusOr<std::vector<NamedTensor>> tensors =
      initializeParameters(module, seed);
  if (!tensors.ok())
    return tensors.getStatus();
  return writeSafetensors(
      path, *tensors,
      {{"producer", "lcc-run --init-params"}, {"seed", std::to_string(seed)}});
}

} // namespace lcc::runtime
