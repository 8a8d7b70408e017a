//===- KernelCache.cpp - compiled kernels kept between compiles -----------===//

#include "compiler/KernelCache.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CachePruning.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstring>

using namespace llvm;

namespace {

/// An entry: this magic, the SHA-256 of the object, the object.
constexpr StringRef kEntryMagic = "LCCKOBJ1";
constexpr size_t kDigestBytes = 32;
/// No kernel's object comes near this; a larger file is not an entry.
constexpr uint64_t kMaxEntryBytes = uint64_t(256) << 20;
/// LLVM's pruning only ever removes files named so (a safeguard against a
/// cache directory that holds something else).
constexpr StringRef kEntryPrefix = "llvmcache-lcc-";

std::string sha256(StringRef bytes) {
  std::array<uint8_t, 32> digest = SHA256::hash(arrayRefFromStringRef(bytes));
  return std::string(digest.begin(), digest.end());
}

struct BuildIdSearch {
  uintptr_t address = 0;
  std::string id;
  bool found = false;
};

/// The GNU build id of the loaded object whose segments hold `address`.
int findBuildId(dl_phdr_info *info, size_t, void *data) {
  auto *search = static_cast<BuildIdSearch *>(data);
  bool holds = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &segment = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD && search->address >= start &&
        search->address < start + segment.p_memsz)
      holds = true;
  }
  if (!holds)
    return 0;
  search->found = true;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE)
      continue;
    const char *note =
        reinterpret_cast<const char *>(info->dlpi_addr + segment.p_vaddr);
    const char *end = note + segment.p_filesz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) header;
      std::memcpy(&header, note, sizeof(header));
      const char *name = note + sizeof(header);
      const char *desc = name + alignTo(header.n_namesz, 4);
      const char *next = desc + alignTo(header.n_descsz, 4);
      if (next > end)
        break;
      if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        search->id = toHex(StringRef(desc, header.n_descsz), true);
        return 1;
      }
      note = next;
    }
  }
  return 1;
}

} // namespace

std::string lcc::kernelCacheDirectory(const KernelCacheOptions &options,
                                      std::string &why) {
  if (!options.enabled)
    return "";
  if (!options.directory.empty())
    return options.directory;
  if (std::optional<std::string> fromEnvironment =
          sys::Process::GetEnv("LCC_CACHE_DIR");
      fromEnvironment && !fromEnvironment->empty())
    return *fromEnvironment;
  SmallString<128> path;
  if (!sys::path::cache_directory(path)) {
    why = "no cache directory (neither XDG_CACHE_HOME nor HOME is set; "
          "name one with --cache-dir)";
    return "";
  }
  sys::path::append(path, "lcc", "kernels");
  return std::string(path);
}

std::string lcc::libraryIdentity(const void *address) {
  BuildIdSearch search;
  search.address = reinterpret_cast<uintptr_t>(address);
  dl_iterate_phdr(findBuildId, &search);
  if (!search.id.empty())
    return search.id;
  Dl_info info;
  if (!dladdr(address, &info) || !info.dli_fname)
    return "unknown";
  sys::fs::file_status status;
  if (sys::fs::status(info.dli_fname, status))
    return info.dli_fname;
  return (Twine(info.dli_fname) + ":" + Twine(status.getSize()) + ":" +
          Twine(sys::toTimeT(status.getLastModificationTime())))
      .str();
}

StringRef lcc::codeGeneratorIdentity() {
  static const std::string identity =
      libraryIdentity(reinterpret_cast<const void *>(&kernelCacheKey)) + "/" +
      libraryIdentity(reinterpret_cast<const void *>(
          &TargetRegistry::printRegisteredTargetsForVersion));
  return identity;
}

std::string lcc::kernelCacheKey(ArrayRef<StringRef> parts) {
  SHA256 hash;
  for (StringRef part : parts) {
    uint64_t size = part.size();
    hash.update(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(&size),
                                  sizeof(size)));
    hash.update(arrayRefFromStringRef(part));
  }
  std::array<uint8_t, 32> digest = hash.final();
  return toHex(ArrayRef<uint8_t>(digest), /*LowerCase=*/true);
}

lcc::KernelCache::KernelCache(const KernelCacheOptions &options) {
  std::string why;
  std::string path = kernelCacheDirectory(options, why);
  if (path.empty()) {
    if (!why.empty())
      warnOnce("kernel cache off: " + why);
    return;
  }
  if (std::error_code ec = sys::fs::create_directories(path)) {
    warnOnce("kernel cache off: cannot create '" + path + "': " + ec.message());
    return;
  }
  directory = std::move(path);
}

std::string lcc::KernelCache::entryPath(StringRef key) const {
  SmallString<128> path(directory);
  sys::path::append(path, kEntryPrefix + key);
  return std::string(path);
}

std::optional<std::string> lcc::KernelCache::lookup(StringRef key) {
  if (!enabled())
    return std::nullopt;
  std::string path = entryPath(key);
  // Only a regular file is opened: opening a FIFO would wait for a writer.
  sys::fs::file_status status;
  if (sys::fs::status(path, status) ||
      status.type() != sys::fs::file_type::regular_file)
    return std::nullopt;
  int fd;
  if (sys::fs::openFileForRead(path, fd))
    return std::nullopt;
  scope_exit closeFile(
      [&] { (void)sys::Process::SafelyCloseFileDescriptor(fd); });
  if (sys::fs::status(fd, status) || status.getSize() > kMaxEntryBytes ||
      status.getSize() < kEntryMagic.size() + kDigestBytes)
    return std::nullopt;
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getOpenFile(
      sys::fs::convertFDToNativeFile(fd), path, status.getSize(),
      /*RequiresNullTerminator=*/false);
  if (!file)
    return std::nullopt;
  StringRef bytes = (*file)->getBuffer();
  if (!bytes.consume_front(kEntryMagic))
    return std::nullopt;
  StringRef digest = bytes.take_front(kDigestBytes);
  StringRef object = bytes.drop_front(kDigestBytes);
  if (sha256(object) != digest)
    return std::nullopt;
  // Pruning removes what was least recently used.
  (void)sys::fs::setLastAccessAndModificationTime(
      fd, sys::toTimePoint(std::time(nullptr)));
  return object.str();
}

void lcc::KernelCache::store(StringRef key, StringRef object) {
  if (!enabled())
    return;
  std::string path = entryPath(key);
  // Not under the entries' prefix: pruning leaves it alone until renamed.
  SmallString<128> model(directory);
  sys::path::append(model, "tmp-" + key + "-%%%%%%%%");
  Expected<sys::fs::TempFile> file = sys::fs::TempFile::create(model);
  auto failed = [&](const Twine &why) {
    std::lock_guard<std::mutex> lock(mutex);
    if (storeFailed)
      return;
    storeFailed = true;
    warnings.push_back(
        ("kernel cache: cannot store in '" + directory + "': " + why).str());
  };
  if (!file) {
    failed(toString(file.takeError()));
    return;
  }
  {
    raw_fd_ostream os(file->FD, /*shouldClose=*/false);
    os << kEntryMagic << sha256(object) << object;
    os.flush();
    if (os.has_error()) {
      std::string why = os.error().message();
      os.clear_error();
      consumeError(file->discard());
      failed(why);
      return;
    }
  }
  if (Error error = file->keep(path))
    failed(toString(std::move(error)));
}

void lcc::KernelCache::prune() {
  if (!enabled())
    return;
  CachePruningPolicy policy;
  policy.Interval = std::chrono::hours(1);
  policy.Expiration = std::chrono::hours(30 * 24);
  policy.MaxSizeBytes = uint64_t(1) << 30;
  pruneCache(directory, policy);
}

void lcc::KernelCache::warnOnce(std::string warning) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!llvm::is_contained(warnings, warning))
    warnings.push_back(std::move(warning));
}

std::vector<std::string> lcc::KernelCache::takeWarnings() {
  std::lock_guard<std::mutex> lock(mutex);
  return std::exchange(warnings, {});
}
