//===- CpuFeatures.h - which CPU features this CPU has ----------*- C++ -*-===//
//
// The features an executable was compiled for (LLVM's names, lcm.fbs
// Executable.cpu_features) against the CPU the runtime runs on, so that an
// artifact made for another CPU is refused with a message instead of
// faulting on its first instruction.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_CPUFEATURES_H
#define LCC_RUNTIME_CPUFEATURES_H

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lcc::runtime {

/// Whether `feature` is one this runtime can test (in its table of ISA
/// extensions): the names lcc-run --list shows.
bool isTestedCpuFeature(const std::string &feature);

/// Whether this CPU (and the operating system, for the vector and tile
/// registers' state) supports `feature`; nullopt for a name this runtime
/// cannot test (LLVM's tuning flags, and ISA features outside its table).
std::optional<bool> cpuSupports(const std::string &feature);

/// The features of `required` that `supports` answers false for, in order.
std::vector<std::string> lackedCpuFeatures(
    const std::vector<std::string> &required,
    const std::function<std::optional<bool>(const std::string &)> &supports);

} // namespace lcc::runtime

#endif // LCC_RUNTIME_CPUFEATURES_H
