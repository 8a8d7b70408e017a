//===- PluginLoader.h - loading lcc plugins ---------------------*- C++ -*-===//
//
// `--load-plugin=LIB.so` for lcc and lcc-opt: opens the library, checks
// that it is an lcc plugin built for this lcc and this MLIR, and runs its
// registration (passes/Plugin.h).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_PLUGINLOADER_H
#define LCC_COMPILER_PLUGINLOADER_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace lcc {

/// Loads the plugin at `path` and registers what it adds; false, with
/// `error` naming the file and what is wrong, if it cannot.
bool loadPlugin(llvm::StringRef path, std::string &error);

} // namespace lcc

#endif // LCC_COMPILER_PLUGINLOADER_H
