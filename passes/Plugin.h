//===- Plugin.h - what an lcc plugin exports ---------------------*- C++
//-*-===//
//
// A plugin is a shared library loaded with `lcc --load-plugin=LIB.so` (or
// lcc-opt's) that adds attention forms and passes. It links against the
// installed lcc libraries (find_package(lcc)) and defines, once:
//
//   LCC_PLUGIN_EXPORT lcc::PluginInfo lccGetPluginInfo() {
//     return {LCC_PLUGIN_API_VERSION, LLVM_VERSION_STRING, "my-forms",
//             registerMyForms};
//   }
//
// where registerMyForms registers its passes (mlir::registerPass, or the
// GEN_PASS_REGISTRATION functions of its Passes.td) and its forms
// (registerAttentionForm), and returns false with the reason on failure.
// docs/pass-authoring.md builds one from nothing.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_PLUGIN_H
#define LCC_PASSES_PLUGIN_H

#include <cstdint>
#include <string>

/// Bumped whenever PluginInfo or the registry's definitions change shape.
#define LCC_PLUGIN_API_VERSION 1

#define LCC_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

namespace lcc {

struct PluginInfo {
  /// LCC_PLUGIN_API_VERSION as the plugin was built.
  uint32_t apiVersion;
  /// LLVM_VERSION_STRING as the plugin was built: MLIR's C++ API holds only
  /// within one version.
  const char *llvmVersion;
  /// The plugin's name, for diagnostics.
  const char *name;
  /// Registers the plugin's passes and forms; false, and `error` says why,
  /// on failure.
  bool (*registerPlugin)(std::string &error);
};

} // namespace lcc

/// The symbol lcc looks up in a plugin.
#define LCC_PLUGIN_ENTRY_POINT "lccGetPluginInfo"

#endif // LCC_PASSES_PLUGIN_H
