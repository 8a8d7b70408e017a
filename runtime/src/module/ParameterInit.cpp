//===- ParameterInit.cpp - fresh weights for a module's parameters --------===//

#include "module/ParameterInit.h"

#include <algorithm>

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

bool isWeight(const lcm::Parameter &parameter) {
  return !parameter.data() && !parameter.state();
}

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

double NormalValues::next() {
  if (hasPending) {
    hasPending = false;
    return pending;
  }
  const double twoPi = 6.283185307179586476925286766559;
  double radius = std::sqrt(-2.0 * std::log(generator.nextUniform()));
  double angle = twoPi * generator.nextUniform();
  pending = scale * radius * std::sin(angle);
  hasPending = true;
  return scale * radius * std::cos(angle);
}

ParameterValues::ParameterValues(const lcm::Parameter &parameter, uint64_t seed)
    : name(runtime::getName(*parameter.signature())),
      dtype(parameter.signature()->dtype()), init(parameter.init()),
      constant(parameter.init_value()),
      normal(name, seed, parameter.init_scale()),
      // The loader checked that the size is within bounds.
      count(*elementCount(getShape(*parameter.signature()))) {}

Status ParameterValues::check() const {
  if (init == lcm::ParameterInit::Normal && !isFloat(dtype))
    return Status::error(StatusCode::InvalidArgument, "parameter ",
                         quoted(name), " is ", dtypeName(dtype),
                         "; Normal init needs a floating-point dtype");
  return Status();
}

void ParameterValues::next(uint8_t *out, uint64_t elements) {
  for (uint64_t e = 0; e < elements; ++e) {
    double value = 0;
    switch (init) {
    case lcm::ParameterInit::Zeros:
      break;
    case lcm::ParameterInit::Ones:
      value = 1.0;
      break;
    case lcm::ParameterInit::Constant:
      value = constant;
      break;
    case lcm::ParameterInit::Normal:
      value = normal.next();
      break;
    }
    storeElement(dtype, out, e, value);
  }
}

StatusOr<std::vector<NamedTensor>> initializeParameters(const Module &module,
                                                        uint64_t seed) {
  std::vector<NamedTensor> tensors;
  for (size_t i = 0; i < module.getParameterCount(); ++i) {
    const lcm::Parameter &parameter = module.getParameter(i);
    if (!isWeight(parameter))
      continue;
    ParameterValues values(parameter, seed);
    LCC_RETURN_IF_ERROR(values.check());
    NamedTensor named;
    named.name = values.getName();
    named.tensor.dtype = parameter.signature()->dtype();
    named.tensor.shape = getShape(*parameter.signature());
    named.tensor.data.resize(values.size() * dtypeSize(named.tensor.dtype));
    values.next(named.tensor.data.data(), values.size());
    tensors.push_back(std::move(named));
  }
  return tensors;
}

Status writeInitialParameters(const Module &module, uint64_t seed,
                              const std::string &path) {
  // Header first, then each parameter generated and written a chunk at a
  // time: memory does not grow with the weights (a module may declare
  // gigabytes of them).
  std::vector<SafetensorsLayout> layout;
  std::vector<const lcm::Parameter *> written;
  for (size_t i = 0; i < module.getParameterCount(); ++i) {
    const lcm::Parameter &parameter = module.getParameter(i);
    if (!isWeight(parameter))
      continue;
    const lcm::TensorSignature &signature = *parameter.signature();
    LCC_RETURN_IF_ERROR(ParameterValues(parameter, seed).check());
    layout.push_back({getName(signature), signature.dtype(),
                      getShape(signature),
                      *byteSize(signature.dtype(), getShape(signature))});
    written.push_back(&parameter);
  }
  StatusOr<SafetensorsWriter> file = SafetensorsWriter::create(
      path, layout,
      {{"producer", "lcc-run --init-params"}, {"seed", std::to_string(seed)}});
  if (!file.ok())
    return file.getStatus();
  std::vector<uint8_t> chunk;
  for (const lcm::Parameter *parameter : written) {
    ParameterValues values(*parameter, seed);
    size_t elementBytes = dtypeSize(parameter->signature()->dtype());
    for (uint64_t done = 0; done < values.size();) {
      uint64_t step = std::min(kInitChunkElements, values.size() - done);
      chunk.resize(step * elementBytes);
      values.next(chunk.data(), step);
      LCC_RETURN_IF_ERROR(file->write(chunk.data(), chunk.size()));
      done += step;
    }
  }
  return file->commit();
}

} // namespace lcc::runtime
