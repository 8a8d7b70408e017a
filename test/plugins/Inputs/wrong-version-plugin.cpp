// A library that exports lcc's plugin entry point but was "built" for
// another plugin API or MLIR, chosen at compile time: -DAPI=N, -DLLVM="x",
// -DREGISTER=function or nullptr.
#include "passes/Plugin.h"

[[maybe_unused]] static bool registerNothing(std::string &error) {
  error = "the test plugin refuses to register";
  return false;
}

LCC_PLUGIN_EXPORT lcc::PluginInfo lccGetPluginInfo() {
  return {API, LLVM, "wrong-version", REGISTER};
}
