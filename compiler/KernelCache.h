//===- KernelCache.h - compiled kernels kept between compiles ---*- C++ -*-===//
//
// A directory of object files, one per kernel, named by a SHA-256 of
// everything that decides the kernel's machine code: its LLVM IR before
// optimisation (names made canonical, so the same kernel of another model
// or another layer hits), the target triple, CPU and features, and the
// build of lcc's code generator and of LLVM. Recompiling after a change
// that leaves a kernel alone then skips its optimisation and code
// generation, as IREE skips an executable it has seen and ccache a source.
//
// An entry is written whole or not at all (a temporary file renamed over
// it) and carries a checksum of its object: a truncated or edited entry is
// a miss, never code. The directory is pruned as LLVM prunes the ThinLTO
// cache (llvm/Support/CachePruning.h): entries unused for 30 days go, and
// the oldest go first past 1 GiB.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_KERNELCACHE_H
#define LCC_COMPILER_KERNELCACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace lcc {

struct KernelCacheOptions {
  /// False: compile every kernel (`--no-cache`).
  bool enabled = true;
  /// Empty: $LCC_CACHE_DIR, else `lcc/kernels` under the user's cache
  /// directory ($XDG_CACHE_HOME, else ~/.cache).
  std::string directory;
};

/// The directory a cache with `options` uses, or an empty string and why in
/// `why` when there is none (no home directory).
std::string kernelCacheDirectory(const KernelCacheOptions &options,
                                 std::string &why);

/// What identifies the code generator: the GNU build ids of the libraries
/// that hold lcc's compiler and LLVM (their path, size and time where a
/// library has none). A kernel cached by another build is never reused.
llvm::StringRef codeGeneratorIdentity();

/// What identifies the library holding `address`: its GNU build id, else
/// its path, size and modification time.
std::string libraryIdentity(const void *address);

/// The cache key of `parts`: a hex SHA-256 of their lengths and bytes.
std::string kernelCacheKey(llvm::ArrayRef<llvm::StringRef> parts);

class KernelCache {
public:
  /// A cache that keeps nothing.
  KernelCache() = default;
  /// The cache `options` name, created if missing. A cache that cannot be
  /// used keeps nothing and says why once in warnings().
  explicit KernelCache(const KernelCacheOptions &options);

  bool enabled() const { return !directory.empty(); }
  llvm::StringRef path() const { return directory; }

  /// The object stored under `key`, if an intact one is.
  std::optional<std::string> lookup(llvm::StringRef key);
  /// Stores `object` under `key`; a failure only costs the next compile
  /// its hit and is said once in warnings(). Safe from several threads and
  /// several processes.
  void store(llvm::StringRef key, llvm::StringRef object);
  /// Removes old entries past the size limit (at most once an hour).
  void prune();

  /// What went wrong, each once: for the compiler to print as warnings.
  std::vector<std::string> takeWarnings();

private:
  std::string entryPath(llvm::StringRef key) const;
  void warnOnce(std::string warning);

  std::string directory;
  std::mutex mutex;
  std::vector<std::string> warnings;
  bool storeFailed = false;
};

} // namespace lcc

#endif // LCC_COMPILER_KERNELCACHE_H
