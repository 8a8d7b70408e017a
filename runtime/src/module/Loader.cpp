//===- Loader.cpp - reading and checking .lcm modules ---------------------===//

#include "module/Loader.h"

#include "module/ExecutableSelection.h"
#include "support/File.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

namespace lcc::runtime {
namespace {

template <typename T> size_t sizeOf(const flatbuffers::Vector<T> *vector) {
  return vector ? vector->size() : 0;
}

std::string quote(const flatbuffers::String *name) {
  return quoted(name ? name->str() : "");
}

/// The semantic checks that follow the FlatBuffers verifier. Each check
/// names the item by its path in the schema ("functions[0].commands[3]").
class ModuleChecker {
public:
  explicit ModuleChecker(const lcm::Module &module) : module(module) {}

  Status check() {
    if (module.version() != kModuleVersion)
      return invalidModule("unsupported module version ", module.version(),
                           "; this runtime reads version ", kModuleVersion);
    if (module.context_parallel() < 1 ||
        module.context_parallel() > lcm::kMaxContextParallel)
      return invalidModule("context_parallel is ", module.context_parallel(),
                           "; expected 1 to ", lcm::kMaxContextParallel);
    for (size_t i = 0; i < sizeOf(module.parameters()); ++i)
      LCC_RETURN_IF_ERROR(checkParameter(i));
    for (size_t i = 0; i < sizeOf(module.executables()); ++i) {
      LCC_RETURN_IF_ERROR(checkExecutable(i));
      if (i > 0)
        LCC_RETURN_IF_ERROR(checkSameEntryPoints(i));
    }
    std::map<std::string, size_t> functionNames;
    for (size_t i = 0; i < sizeOf(module.functions()); ++i) {
      const lcm::Function &function = *module.functions()->Get(i);
      std::string path = "functions[" + std::to_string(i) + "]";
      if (!function.name() || function.name()->size() == 0)
        return invalidModule(path, " has no name");
      auto [it, inserted] = functionNames.emplace(function.name()->str(), i);
      if (!inserted)
        return invalidModule(path, " and functions[", it->second,
                             "] are both named ", quote(function.name()));
      LCC_RETURN_IF_ERROR(checkFunction(function, path));
    }
    return Status();
  }

private:
  /// Checks the dtype and shape of a signature and returns its byte size.
  StatusOr<uint64_t> checkSignature(const lcm::TensorSignature *signature,
                                    const std::string &path) {
    if (!signature)
      return invalidModule(path, " has no signature");
    if (!isValidDType(signature->dtype()))
      return invalidModule(path, " has unknown dtype ",
                           int(signature->dtype()));
    std::vector<int64_t> shape = getShape(*signature);
    for (int64_t dim : shape)
      if (dim < 0)
        return invalidModule(path, " has negative dimension ", dim,
                             " in shape ", formatShape(shape));
    std::optional<uint64_t> bytes = byteSize(signature->dtype(), shape);
    if (!bytes)
      return invalidModule(
          path, " of type ", formatType(shape, signature->dtype()),
          " is larger than the ", kMaxTensorBytes, "-byte limit");
    if (const flatbuffers::Vector<int64_t> *range = signature->valid_range()) {
      bool integer = signature->dtype() == lcm::DType::I32 ||
                     signature->dtype() == lcm::DType::I64;
      if (range->size() != 2 || !integer ||
          readUnaligned(*range, 0) > readUnaligned(*range, 1))
        return invalidModule(
            path, " has a valid_range of ", range->size(),
            " values; expected [min, max] with min <= max, on an "
            "integer tensor");
    }
    int32_t split = signature->split_dim();
    if (split != -1) {
      if (split < 0 || size_t(split) >= shape.size())
        return invalidModule(path, " splits dimension ", split, " of ",
                             formatShape(shape), " over ranks");
      if (module.context_parallel() < 2)
        return invalidModule(path, " is split over ranks in a module of "
                                   "context_parallel ",
                             module.context_parallel());
      // A rank's share is two equal chunks of the positions (zigzag).
      if (shape[size_t(split)] % 2 != 0)
        return invalidModule(path, " splits dimension ", split, " of ",
                             formatShape(shape),
                             " over ranks, whose shares are two equal "
                             "chunks of positions each");
    }
    return *bytes;
  }

  Status checkParameter(size_t index) {
    const lcm::Parameter &parameter = *module.parameters()->Get(index);
    std::string path = "parameters[" + std::to_string(index) + "]";
    StatusOr<uint64_t> bytes = checkSignature(parameter.signature(), path);
    if (!bytes.ok())
      return bytes.getStatus();
    const lcm::TensorSignature &signature = *parameter.signature();
    if (signature.split_dim() != -1)
      return invalidModule(path, " is split over ranks: every rank holds "
                                 "the whole of a parameter");
    if (!signature.name() || signature.name()->size() == 0)
      return invalidModule(path, " has no name");
    auto [it, inserted] =
        parameterNames.emplace(signature.name()->str(), index);
    if (!inserted)
      return invalidModule(path, " and parameters[", it->second,
                           "] are both named ", quote(signature.name()));
    path += " " + quote(signature.name());
    if (parameter.init() < lcm::ParameterInit::MIN ||
        parameter.init() > lcm::ParameterInit::MAX)
      return invalidModule(path, " has unknown init ", int(parameter.init()));
    if (parameter.init() == lcm::ParameterInit::Normal &&
        !(std::isfinite(parameter.init_scale()) && parameter.init_scale() >= 0))
      return invalidModule(path, " has init_scale ", parameter.init_scale(),
                           ", expected a finite value >= 0");
    if (parameter.init() == lcm::ParameterInit::Constant &&
        !std::isfinite(parameter.init_value()))
      return invalidModule(path, " has init_value ", parameter.init_value(),
                           ", expected a finite value");
    // State starts as its init says on the device and changes with every
    // training step: embedded bytes would be a constant training overwrites.
    if (parameter.state() && parameter.data())
      return invalidModule(path, " is optimizer state but embeds ",
                           parameter.data()->size(),
                           " bytes; state starts as its init says and is never "
                           "embedded");
    if (parameter.data() && parameter.data()->size() != *bytes)
      return invalidModule(path, " embeds ", parameter.data()->size(),
                           " bytes, its type ",
                           formatType(getShape(signature), signature.dtype()),
                           " needs ", *bytes);
    return checkChecksum(parameter.data(), parameter.data_checksum(), path);
  }

  /// Embedded bytes carry their checksum (ModuleFormat.h) and match it:
  /// code or constants damaged on the way are refused here, before any of
  /// them is mapped, handed to a driver or copied to a device.
  Status checkChecksum(const flatbuffers::Vector<uint8_t> *data,
                       flatbuffers::Optional<uint64_t> recorded,
                       const std::string &path) {
    if (!data)
      return recorded ? invalidModule(path, " has a data_checksum but no data")
                      : Status();
    if (!recorded)
      return invalidModule(path, " has no data_checksum for its ", data->size(),
                           " bytes of data");
    if (lcm::checksum(data->data(), data->size()) != *recorded)
      return invalidModule(path, " is corrupted: its ", data->size(),
                           " bytes of data do not match their checksum");
    return Status();
  }

  Status checkExecutable(size_t index) {
    const lcm::Executable &executable = *module.executables()->Get(index);
    std::string path = "executables[" + std::to_string(index) + "]";
    if (executable.format() < lcm::ExecutableFormat::MIN ||
        executable.format() > lcm::ExecutableFormat::MAX)
      return invalidModule(path, " has unknown format ",
                           int(executable.format()));
    if (sizeOf(executable.data()) == 0)
      return invalidModule(path, " has no data");
    LCC_RETURN_IF_ERROR(
        checkChecksum(executable.data(), executable.data_checksum(), path));
    bool gpu = isGpuFormat(executable.format());
    if (gpu) {
      // Devices pick their executable by this name.
      const char *format = lcm::EnumNameExecutableFormat(executable.format());
      if (!executable.target() || executable.target()->size() == 0)
        return invalidModule(path, " is ", format, " but has no target");
      if (!parseCudaArchitecture(executable.target()->str()))
        return invalidModule(
            path, " is ", format, " for target ", quote(executable.target()),
            ", expected an NVIDIA architecture such as 'sm_90'");
    }
    for (size_t i = 0; i < sizeOf(executable.entry_points()); ++i) {
      const lcm::EntryPoint &entryPoint = *executable.entry_points()->Get(i);
      std::string entryPath = path + ".entry_points[" + std::to_string(i) + "]";
      if (!entryPoint.name() || entryPoint.name()->size() == 0)
        return invalidModule(entryPath, " has no name");
      entryPath += " " + quote(entryPoint.name());
      LCC_RETURN_IF_ERROR(checkRequirements(entryPoint, entryPath));
      if (gpu)
        LCC_RETURN_IF_ERROR(checkBlockSize(entryPoint, entryPath));
    }
    return Status();
  }

  /// What the kernel was compiled for: three workgroup counts (each >= 1,
  /// at most kMaxWorkgroups in all) and the bytes of each binding.
  Status checkRequirements(const lcm::EntryPoint &entryPoint,
                           const std::string &path) {
    size_t countSize = sizeOf(entryPoint.workgroup_count());
    if (countSize != 3)
      return invalidModule(path, " has ", countSize,
                           " workgroup_count values, expected 3");
    uint64_t total = 1;
    for (size_t i = 0; i < 3; ++i) {
      uint32_t count = entryPoint.workgroup_count()->Get(i);
      if (count == 0)
        return invalidModule(path, " has workgroup_count[", i,
                             "] = 0, expected >= 1");
      // Both factors are below 2^32 before the bound check: no wrap.
      total *= count;
      if (total > kMaxWorkgroups)
        return invalidModule(path, " runs more than ", kMaxWorkgroups,
                             " workgroups");
    }
    size_t byteCount = sizeOf(entryPoint.binding_bytes());
    if (byteCount != entryPoint.binding_count())
      return invalidModule(path, " has ", byteCount,
                           " binding_bytes values for ",
                           entryPoint.binding_count(), " bindings");
    for (size_t i = 0; i < byteCount; ++i)
      if (readUnaligned(*entryPoint.binding_bytes(), i) > kMaxTensorBytes)
        return invalidModule(path, " binds ",
                             readUnaligned(*entryPoint.binding_bytes(), i),
                             " bytes at binding ", i, ", more than the ",
                             kMaxTensorBytes, "-byte limit");
    return Status();
  }

  /// A GPU entry point's threads per block: three values, each >= 1, at most
  /// 1024 in all (the limit of every NVIDIA GPU since sm_20).
  Status checkBlockSize(const lcm::EntryPoint &entryPoint,
                        const std::string &path) {
    size_t size = sizeOf(entryPoint.block_size());
    if (size != 3)
      return invalidModule(path, " has ", size,
                           " block_size values, expected 3");
    uint64_t threads = 1;
    std::vector<int64_t> block;
    for (size_t i = 0; i < 3; ++i) {
      uint32_t value = entryPoint.block_size()->Get(i);
      if (value == 0)
        return invalidModule(path, " has block_size[", i,
                             "] = 0, expected >= 1");
      // Each factor is below 2^32 and the product so far <= 2^32: no wrap.
      threads = std::min<uint64_t>(threads * value, uint64_t(1) << 32);
      block.push_back(value);
    }
    if (threads > kMaxThreadsPerBlock)
      return invalidModule(path, " has block_size ", formatShape(block), " of ",
                           threads >= (uint64_t(1) << 32)
                               ? "over 4294967295"
                               : std::to_string(threads),
                           " threads, more than ", kMaxThreadsPerBlock);
    return Status();
  }

  /// Every executable lists the entry points of executables[0], in order:
  /// a dispatch names one by its index, whichever executable a device runs.
  Status checkSameEntryPoints(size_t index) {
    const lcm::Executable &first = *module.executables()->Get(0);
    const lcm::Executable &executable = *module.executables()->Get(index);
    std::string path = "executables[" + std::to_string(index) + "]";
    size_t count = sizeOf(executable.entry_points());
    size_t expected = sizeOf(first.entry_points());
    if (count != expected)
      return invalidModule(path, " has ", count,
                           " entry points, executables[0] has ", expected,
                           "; every executable must list the same ones");
    for (size_t i = 0; i < count; ++i) {
      const lcm::EntryPoint &entryPoint = *executable.entry_points()->Get(i);
      const lcm::EntryPoint &reference = *first.entry_points()->Get(i);
      if (entryPoint.name()->str() == reference.name()->str() &&
          entryPoint.binding_count() == reference.binding_count()) {
        if (!sameRequirements(entryPoint, reference))
          return invalidModule(path, ".entry_points[", i, "] ",
                               quote(entryPoint.name()),
                               " was compiled for other workgroups or binding "
                               "sizes than executables[0]'s");
        continue;
      }
      std::string index = "entry_points[" + std::to_string(i) + "]";
      return invalidModule(
          path, ".", index, " is ", quote(entryPoint.name()), " with ",
          entryPoint.binding_count(), " bindings, executables[0].", index,
          " is ", quote(reference.name()), " with ", reference.binding_count(),
          "; every executable must list the same entry points in "
          "the same order");
    }
    return Status();
  }

  static bool sameRequirements(const lcm::EntryPoint &a,
                               const lcm::EntryPoint &b) {
    // Both were checked: three counts, binding_count sizes.
    for (size_t i = 0; i < 3; ++i)
      if (a.workgroup_count()->Get(i) != b.workgroup_count()->Get(i))
        return false;
    for (size_t i = 0; i < sizeOf(a.binding_bytes()); ++i)
      if (readUnaligned(*a.binding_bytes(), i) !=
          readUnaligned(*b.binding_bytes(), i))
        return false;
    return true;
  }

  /// Checks that `binding` names a buffer and a byte range inside it.
  Status checkBinding(const lcm::Binding *binding,
                      const lcm::Function &function, const std::string &path) {
    if (!binding)
      return invalidModule(path, " is missing");
    size_t bufferCount = sizeOf(function.buffers());
    if (binding->buffer() >= bufferCount)
      return invalidModule(path, " binds buffer ", binding->buffer(), ", only ",
                           bufferCount, " exist");
    uint64_t size = function.buffers()->Get(binding->buffer())->size();
    // Written so that it cannot wrap: offset <= size, length <= size - offset.
    if (binding->offset() > size ||
        binding->length() > size - binding->offset())
      return invalidModule(path, " binds ", binding->length(),
                           " bytes at offset ", binding->offset(),
                           " of buffer ", binding->buffer(), ", which has ",
                           size);
    return Status();
  }

  Status checkBuffer(const lcm::Buffer &buffer, const lcm::Function &function,
                     const std::string &path) {
    // Input, output and parameter buffers hold exactly one tensor.
    auto checkSized = [&](size_t count, const char *kind,
                          const char *plural) -> Status {
      if (buffer.index() >= count)
        return invalidModule(path, " is ", kind, " ", buffer.index(), ", only ",
                             count, " ", plural, " exist");
      const lcm::TensorSignature *signature =
          buffer.kind() == lcm::BufferKind::Input
              ? function.inputs()->Get(buffer.index())
          : buffer.kind() == lcm::BufferKind::Output
              ? function.outputs()->Get(buffer.index())
              : module.parameters()->Get(buffer.index())->signature();
      // Signatures were checked before buffers, so the size is known.
      std::vector<int64_t> shape = getShape(*signature);
      uint64_t bytes = *byteSize(signature->dtype(), shape);
      if (buffer.size() != bytes)
        return invalidModule(path, " has size ", buffer.size(), ", ", kind, " ",
                             buffer.index(), " ", quote(signature->name()),
                             " (", formatType(shape, signature->dtype()),
                             ") needs ", bytes);
      return Status();
    };
    switch (buffer.kind()) {
    case lcm::BufferKind::Input:
      return checkSized(sizeOf(function.inputs()), "input", "inputs");
    case lcm::BufferKind::Output:
      return checkSized(sizeOf(function.outputs()), "output", "outputs");
    case lcm::BufferKind::Parameter:
      return checkSized(sizeOf(module.parameters()), "parameter", "parameters");
    case lcm::BufferKind::Transient: {
      if (buffer.size() > kMaxTensorBytes)
        return invalidModule(path, " has size ", buffer.size(),
                             ", more than the ", kMaxTensorBytes,
                             "-byte limit");
      if (buffer.arena_offset() % kArenaAlignment != 0)
        return invalidModule(path, " has arena_offset ", buffer.arena_offset(),
                             ", not a multiple of ", kArenaAlignment);
      uint64_t arenaSize = function.arena_size();
      if (buffer.arena_offset() > arenaSize ||
          buffer.size() > arenaSize - buffer.arena_offset())
        return invalidModule(path, " holds ", buffer.size(),
                             " bytes at arena_offset ", buffer.arena_offset(),
                             ", beyond arena_size ", arenaSize);
      return Status();
    }
    }
    return invalidModule(path, " has unknown kind ", int(buffer.kind()));
  }

  Status checkDispatch(const lcm::Dispatch &dispatch,
                       const lcm::Function &function, const std::string &path) {
    // Every executable lists the same entry points (checked above), so the
    // first one's entry point stands for all.
    size_t executableCount = sizeOf(module.executables());
    if (executableCount == 0)
      return invalidModule(path, " dispatches entry point ",
                           dispatch.entry_point(),
                           ", but the module has no executables");
    const lcm::Executable &executable = *module.executables()->Get(0);
    size_t entryPointCount = sizeOf(executable.entry_points());
    if (dispatch.entry_point() >= entryPointCount)
      return invalidModule(path, " dispatches entry point ",
                           dispatch.entry_point(), ", only ", entryPointCount,
                           " exist");
    const lcm::EntryPoint &entryPoint =
        *executable.entry_points()->Get(dispatch.entry_point());

    // The kernel indexes its buffers from the workgroup id and their static
    // shapes: any other grid or a shorter binding would make it read or
    // write outside what the dispatch binds.
    size_t countSize = sizeOf(dispatch.workgroup_count());
    if (countSize != 3)
      return invalidModule(path, " has ", countSize,
                           " workgroup_count values, expected 3");
    for (size_t i = 0; i < 3; ++i) {
      uint32_t count = dispatch.workgroup_count()->Get(i);
      uint32_t compiled = entryPoint.workgroup_count()->Get(i);
      if (count != compiled)
        return invalidModule(path, " runs workgroup_count[", i, "] = ", count,
                             ", entry point ", quote(entryPoint.name()),
                             " was compiled for ", compiled);
    }

    size_t bindingCount = sizeOf(dispatch.bindings());
    if (bindingCount != entryPoint.binding_count())
      return invalidModule(path, " has ", bindingCount,
                           " bindings, entry point ", quote(entryPoint.name()),
                           " takes ", entryPoint.binding_count());
    for (size_t i = 0; i < bindingCount; ++i) {
      std::string bindingPath = path + ".bindings[" + std::to_string(i) + "]";
      const lcm::Binding *binding = dispatch.bindings()->Get(i);
      LCC_RETURN_IF_ERROR(checkBinding(binding, function, bindingPath));
      uint64_t needed = readUnaligned(*entryPoint.binding_bytes(), i);
      if (binding->length() != needed)
        return invalidModule(bindingPath, " binds ", binding->length(),
                             " bytes, entry point ", quote(entryPoint.name()),
                             " was compiled for ", needed);
    }
    return Status();
  }

  /// Where a binding's bytes lie: transient buffers share the arena, so
  /// two of them are compared at their arena offsets.
  struct Extent {
    int64_t space; // -1: the arena; else the buffer's index
    uint64_t begin, end;
  };
  static Extent extentOf(const lcm::Binding &binding,
                         const lcm::Function &function) {
    const lcm::Buffer &buffer = *function.buffers()->Get(binding.buffer());
    if (buffer.kind() == lcm::BufferKind::Transient) {
      uint64_t begin = buffer.arena_offset() + binding.offset();
      return {-1, begin, begin + binding.length()};
    }
    return {int64_t(binding.buffer()), binding.offset(),
            binding.offset() + binding.length()};
  }

  Status checkAllReduce(const lcm::AllReduce &allReduce,
                        const lcm::Function &function,
                        const std::string &path) {
    if (allReduce.reduction() != lcm::Reduction::Sum &&
        allReduce.reduction() != lcm::Reduction::Mean)
      return invalidModule(path, " has unknown reduction ",
                           int(allReduce.reduction()));
    size_t count = sizeOf(allReduce.ranges());
    if (count == 0)
      return invalidModule(path, " is an all-reduce of no range");
    std::vector<Extent> extents;
    for (size_t i = 0; i < count; ++i) {
      std::string rangePath = path + ".ranges[" + std::to_string(i) + "]";
      const lcm::Binding *range = allReduce.ranges()->Get(i);
      LCC_RETURN_IF_ERROR(checkBinding(range, function, rangePath));
      if (range->length() % sizeof(float) != 0)
        return invalidModule(rangePath, " is ", range->length(),
                             " bytes, not whole f32 elements");
      // A module never writes its inputs: the caller's data may be read
      // where it lies.
      if (function.buffers()->Get(range->buffer())->kind() ==
          lcm::BufferKind::Input)
        return invalidModule(rangePath, " reduces in place into input buffer ",
                             range->buffer());
      Extent extent = extentOf(*range, function);
      for (size_t j = 0; j < extents.size(); ++j)
        if (extent.space == extents[j].space && extent.begin < extents[j].end &&
            extents[j].begin < extent.end && range->length() > 0)
          return invalidModule(rangePath, " overlaps range ", j);
      extents.push_back(extent);
    }
    return Status();
  }

  Status checkExchange(const lcm::Exchange &exchange,
                       const lcm::Function &function,
                       const std::string &path) {
    LCC_RETURN_IF_ERROR(checkBinding(exchange.source(), function,
                                     path + ".exchange.source"));
    LCC_RETURN_IF_ERROR(checkBinding(exchange.target(), function,
                                     path + ".exchange.target"));
    const lcm::Binding &source = *exchange.source(),
                       &target = *exchange.target();
    // The range of `blocks` blocks, and the other's length: one block, or
    // all of them.
    uint64_t blocks = exchange.blocks(), whole = source.length(),
             other = target.length(), block = whole;
    switch (exchange.pattern()) {
    case lcm::ExchangePattern::AllToAll:
      block = blocks ? whole / blocks : 0;
      break;
    case lcm::ExchangePattern::Ring:
      blocks = 1;
      break;
    case lcm::ExchangePattern::RankSlice:
      block = other;
      break;
    case lcm::ExchangePattern::RankPad:
      std::swap(whole, other);
      block = other;
      break;
    default:
      return invalidModule(path, " has unknown exchange pattern ",
                           int(exchange.pattern()));
    }
    if (blocks == 0 || whole % blocks != 0)
      return invalidModule(path, " divides ", whole, " bytes into ", blocks,
                           " blocks, not equal whole ones");
    if (block != whole / blocks)
      return invalidModule(path, " has blocks of ", whole / blocks,
                           " bytes, but its other range is ", block);
    if (exchange.pattern() == lcm::ExchangePattern::AllToAll ||
        exchange.pattern() == lcm::ExchangePattern::Ring)
      if (source.length() != target.length())
        return invalidModule(path, " exchanges ", source.length(),
                             " bytes into a target of ", target.length());
    // The caller's inputs may be read where they lie, and never written;
    // the exchange runs on memory the session owns.
    lcm::BufferKind from = function.buffers()->Get(source.buffer())->kind(),
                    to = function.buffers()->Get(target.buffer())->kind();
    if (from == lcm::BufferKind::Input)
      return invalidModule(path, " exchanges from input buffer ",
                           source.buffer());
    if (to == lcm::BufferKind::Input || to == lcm::BufferKind::Parameter)
      return invalidModule(path, " exchanges into ",
                           to == lcm::BufferKind::Input ? "input" : "parameter",
                           " buffer ", target.buffer());
    Extent a = extentOf(source, function), b = extentOf(target, function);
    if (a.space == b.space && a.begin < b.end && b.begin < a.end &&
        source.length() > 0 && target.length() > 0)
      return invalidModule(path, " exchanges between overlapping ranges");
    return Status();
  }

  Status checkCommand(const lcm::Command &command,
                      const lcm::Function &function, const std::string &path) {
    int tables = bool(command.dispatch()) + bool(command.copy()) +
                 bool(command.all_reduce()) + bool(command.exchange());
    if (tables > 1)
      return invalidModule(path, " has ", tables,
                           " command tables; a command has the one its kind "
                           "names");
    switch (command.kind()) {
    case lcm::CommandKind::Dispatch:
      if (!command.dispatch())
        return invalidModule(path, " is a dispatch without a dispatch table");
      return checkDispatch(*command.dispatch(), function, path);
    case lcm::CommandKind::AllReduce:
      if (!command.all_reduce())
        return invalidModule(path,
                             " is an all-reduce without an all_reduce table");
      return checkAllReduce(*command.all_reduce(), function, path);
    case lcm::CommandKind::Exchange:
      if (!command.exchange())
        return invalidModule(path, " is an exchange without an exchange table");
      return checkExchange(*command.exchange(), function, path);
    case lcm::CommandKind::Copy: {
      const lcm::Copy *copy = command.copy();
      if (!copy)
        return invalidModule(path, " is a copy without a copy table");
      LCC_RETURN_IF_ERROR(
          checkBinding(copy->source(), function, path + ".copy.source"));
      LCC_RETURN_IF_ERROR(
          checkBinding(copy->target(), function, path + ".copy.target"));
      if (copy->source()->length() != copy->target()->length())
        return invalidModule(path, " copies ", copy->source()->length(),
                             " bytes into a target of ",
                             copy->target()->length());
      return Status();
    }
    }
    return invalidModule(path, " has unknown kind ", int(command.kind()));
  }

  Status checkFunction(const lcm::Function &function, const std::string &path) {
    for (size_t i = 0; i < sizeOf(function.inputs()); ++i) {
      StatusOr<uint64_t> bytes =
          checkSignature(function.inputs()->Get(i),
                         path + ".inputs[" + std::to_string(i) + "]");
      if (!bytes.ok())
        return bytes.getStatus();
    }
    for (size_t i = 0; i < sizeOf(function.outputs()); ++i) {
      StatusOr<uint64_t> bytes =
          checkSignature(function.outputs()->Get(i),
                         path + ".outputs[" + std::to_string(i) + "]");
      if (!bytes.ok())
        return bytes.getStatus();
    }
    if (function.arena_size() % kArenaAlignment != 0)
      return invalidModule(path, " has arena_size ", function.arena_size(),
                           ", not a multiple of ", kArenaAlignment);
    if (function.arena_size() > kMaxTensorBytes)
      return invalidModule(path, " has arena_size ", function.arena_size(),
                           ", more than the ", kMaxTensorBytes, "-byte limit");
    for (size_t i = 0; i < sizeOf(function.buffers()); ++i)
      LCC_RETURN_IF_ERROR(
          checkBuffer(*function.buffers()->Get(i), function,
                      path + ".buffers[" + std::to_string(i) + "]"));
    for (size_t i = 0; i < sizeOf(function.commands()); ++i)
      LCC_RETURN_IF_ERROR(
          checkCommand(*function.commands()->Get(i), function,
                       path + ".commands[" + std::to_string(i) + "]"));
    return Status();
  }

  static constexpr uint64_t kArenaAlignment = 64;
  static constexpr uint64_t kMaxThreadsPerBlock = 1024;

  const lcm::Module &module;
  std::map<std::string, size_t> parameterNames;
};

} // namespace

Module::~Module() { std::free(bytes); }

size_t Module::getFunctionCount() const { return sizeOf(root->functions()); }

const lcm::Function &Module::getFunction(size_t index) const {
  return *root->functions()->Get(index);
}

size_t Module::getParameterCount() const { return sizeOf(root->parameters()); }

const lcm::Parameter &Module::getParameter(size_t index) const {
  return *root->parameters()->Get(index);
}

const lcm::Executable &Module::getExecutable(size_t index) const {
  return *root->executables()->Get(index);
}

StatusOr<size_t> Module::findFunction(const std::string &name) const {
  std::string names;
  for (size_t i = 0; i < getFunctionCount(); ++i) {
    const std::string candidate = getFunction(i).name()->str();
    if (candidate == name)
      return i;
    names += (i ? ", " : "") + quoted(candidate);
  }
  if (names.empty())
    return Status::error(StatusCode::NotFound, "no function ", quoted(name),
                         ": the module has no functions");
  return Status::error(StatusCode::NotFound, "no function ", quoted(name),
                       " in the module; it has ", names);
}

StatusOr<std::shared_ptr<const Module>> loadModuleFromMemory(const void *data,
                                                             size_t size) {
  if (size == 0)
    return invalidModule("empty file, not an lcc module");
  // The root offset and the file identifier take 8 bytes.
  if (size < 8)
    return invalidModule("file of ", size,
                         " bytes is too small to be an lcc module");
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return invalidModule("module of ", size,
                         " bytes is larger than FlatBuffers' 2 GiB limit");
  const uint8_t *input = static_cast<const uint8_t *>(data);
  if (!lcm::ModuleBufferHasIdentifier(input))
    return invalidModule(
        "not an lcc module: file identifier ",
        quoted(std::string(reinterpret_cast<const char *>(input) + 4, 4)),
        ", expected ", quoted(lcm::ModuleIdentifier()));

  // The verifier checks alignment against real addresses, and embedded
  // data is aligned to 64 relative to the start of the file.
  std::shared_ptr<Module> module(new Module());
  if (posix_memalign(reinterpret_cast<void **>(&module->bytes), 64, size) != 0)
    return Status::error(StatusCode::ResourceExhausted, "cannot allocate ",
                         size, " bytes for the module");
  std::memcpy(module->bytes, input, size);
  module->size = size;

  // A table reached twice counts twice, which bounds the work of a file
  // whose offsets all point at one big table; the checker below visits no
  // more than the verifier. 16M tables leave room for the largest models.
  flatbuffers::Verifier::Options options;
  options.max_tables = 1u << 24;
  flatbuffers::Verifier verifier(module->bytes, size, options);
  if (!lcm::VerifyModuleBuffer(verifier))
    return invalidModule(
        "corrupted or truncated module (FlatBuffers verification "
        "failed)");
  module->root = lcm::GetModule(module->bytes);
  LCC_RETURN_IF_ERROR(ModuleChecker(*module->root).check());
  return std::shared_ptr<const Module>(std::move(module));
}

StatusOr<std::shared_ptr<const Module>>
loadModuleFromFile(const std::string &path) {
  StatusOr<InputFile> file = InputFile::open(path);
  if (!file.ok())
    return file.getStatus();
  auto load = [&](const std::vector<uint8_t> &bytes) {
    StatusOr<std::shared_ptr<const Module>> module =
        loadModuleFromMemory(bytes.data(), bytes.size());
    if (!module.ok())
      return StatusOr<std::shared_ptr<const Module>>(
          module.getStatus().withContext(path));
    return module;
  };
  // The identifier first: a file that is not a module (/dev/zero, a pipe
  // of anything) is refused after 8 bytes, whatever follows.
  std::vector<uint8_t> bytes(8);
  StatusOr<size_t> head = file->read(bytes.data(), bytes.size());
  if (!head.ok())
    return head.getStatus();
  bytes.resize(*head);
  if (bytes.size() < 8 || !lcm::ModuleBufferHasIdentifier(bytes.data()))
    return load(bytes);
  Status rest = file->readAll(bytes, FLATBUFFERS_MAX_BUFFER_SIZE - 1,
                              "a module (FlatBuffers' 2 GiB)");
  if (!rest.ok())
    return rest;
  return load(bytes);
}

std::vector<int64_t> getShape(const lcm::TensorSignature &signature) {
  std::vector<int64_t> shape;
  if (const flatbuffers::Vector<int64_t> *dims = signature.shape())
    for (size_t i = 0; i < dims->size(); ++i)
      shape.push_back(readUnaligned(*dims, i));
  return shape;
}

std::string getName(const lcm::TensorSignature &signature) {
  return signature.name() ? signature.name()->str() : std::string();
}

std::string getCommandName(const lcm::Command &command, size_t index) {
  if (command.name() && command.name()->size() > 0)
    return command.name()->str();
  return "command" + std::to_string(index);
}

} // namespace lcc::runtime
