//===- PluginLoader.cpp - loading lcc plugins -----------------------------===//

#include "compiler/PluginLoader.h"

#include "passes/AttentionForms.h"
#include "passes/Plugin.h"

#include "formats/ElfImage.h" // runtime/src: the checks dlopen does not make
#include "support/File.h"

#include "llvm/Config/llvm-config.h"

#include <dlfcn.h>
#include <sys/stat.h>

using namespace lcc;

/// The most bytes of a plugin read to check its headers: far more than any
/// plugin (they link MLIR's shared library, not its code).
static constexpr uint64_t kMaxPluginBytes = uint64_t(1) << 30;

/// `path` as dlopen must see it to open that file: a name without a slash
/// would be searched for on the library path instead.
static std::string asFilePath(llvm::StringRef path) {
  return path.contains('/') ? path.str() : "./" + path.str();
}

/// Empty when the file at `path` is a shared object for this machine whose
/// headers lie inside it; else why not. dlopen trusts the headers: a
/// truncated library is a SIGBUS inside it.
static std::string checkLibraryFile(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return "no such file";
  if (!S_ISREG(info.st_mode))
    return "not a regular file";
  runtime::StatusOr<std::vector<uint8_t>> bytes =
      runtime::readFile(path, kMaxPluginBytes, "a plugin");
  if (!bytes.ok())
    return bytes.getStatus().getMessage();
  runtime::Status image =
      runtime::checkSharedObjectImage(bytes->data(), bytes->size(), "it");
  return image.ok() ? "" : image.getMessage();
}

bool lcc::loadPlugin(llvm::StringRef path, std::string &error) {
  std::string quoted = "'" + path.str() + "'";
  std::string file = asFilePath(path);
  std::string wrong = checkLibraryFile(file);
  if (!wrong.empty()) {
    error = "cannot load plugin " + quoted + ": " + wrong;
    return false;
  }
  // The tool registers the built-in forms first (at its start), so a plugin
  // that reuses one of their names is refused rather than shadowing them.
  if (!lookupAttentionForm("dense")) {
    error = "cannot load plugin " + quoted +
            " before lcc's own attention forms are registered (call "
            "lcc::registerBuiltinAttentionForms() first)";
    return false;
  }
  // Never unloaded (RTLD_NODELETE, whatever the plugin was linked with):
  // lcc's registries keep its passes, forms and types until the process
  // exits, after every static destructor that could dlclose it has run.
  // RTLD_NOW: a missing symbol is this error, not a crash mid-compile.
  void *library =
      ::dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  if (!library) {
    const char *why = ::dlerror();
    error = "cannot load plugin " + quoted + ": " +
            (why ? why : "unknown dlopen error");
    return false;
  }
  void *entry = ::dlsym(library, LCC_PLUGIN_ENTRY_POINT);
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
