//===- PluginLoader.cpp - loading lcc plugins -----------------------------===//

#include "compiler/PluginLoader.h"

#include "passes/AttentionForms.h"
#include "passes/Plugin.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"

using namespace lcc;

bool lcc::loadPlugin(llvm::StringRef path, std::string &error) {
  std::string quoted = "'" + path.str() + "'";
  if (!llvm::sys::fs::exists(path)) {
    error = "cannot load plugin " + quoted + ": no such file";
    return false;
  }
  // The built-in forms first, so a plugin that reuses one of their names is
  // refused rather than shadowing it.
  registerBuiltinAttentionForms();
  std::string why;
  llvm::sys::DynamicLibrary library =
      llvm::sys::DynamicLibrary::getPermanentLibrary(path.str().c_str(), &why);
  if (!library.isValid()) {
    error = "cannot load plugin " + quoted + ": " + why;
    return false;
  }
  void *entry = library.getAddressOfSymbol(LCC_PLUGIN_ENTRY_POINT);
  if (!entry) {
    error = quoted + " is not an lcc plugin: it defines no " +
            std::string(LCC_PLUGIN_ENTRY_POINT) + "()";
    return false;
  }
  PluginInfo info = reinterpret_cast<PluginInfo (*)()>(entry)();
  if (info.apiVersion != LCC_PLUGIN_API_VERSION) {
    error = "plugin " + quoted + " was built for lcc plugin API " +
            std::to_string(info.apiVersion) + "; this lcc has " +
            std::to_string(LCC_PLUGIN_API_VERSION) +
            ": rebuild it against this lcc";
    return false;
  }
  if (!info.llvmVersion || llvm::StringRef(info.llvmVersion) !=
                               llvm::StringRef(LLVM_VERSION_STRING)) {
    error = "plugin " + quoted + " was built against MLIR/LLVM " +
            (info.llvmVersion ? info.llvmVersion : "(unknown)") +
            "; this lcc uses " + LLVM_VERSION_STRING;
    return false;
  }
  if (!info.registerPlugin) {
    error = "plugin " + quoted + " has no registration function";
    return false;
  }
  std::string failure;
  if (!info.registerPlugin(failure)) {
    error = "plugin " + quoted + " (" + (info.name ? info.name : "unnamed") +
            ") failed to register: " + failure;
    return false;
  }
  return true;
}
