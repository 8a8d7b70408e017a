//===- File.cpp - bounded file reads and atomic writes --------------------===//

#include "support/File.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lcc::runtime {

StatusOr<InputFile> InputFile::open(const std::string &path) {
  InputFile file;
  file.path = path;
  // Non-blocking to open: a FIFO with no writer would wait forever in
  // open(); it reads as empty instead. Reads block again after.
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0)
    return Status::error(errno == ENOENT ? StatusCode::NotFound
                                         : StatusCode::InvalidArgument,
                         "cannot open ", quoted(path), ": ",
                         std::strerror(errno));
  struct stat info;
  int error = 0;
  if (::fstat(file.fd, &info) != 0)
    error = errno;
  else if (S_ISDIR(info.st_mode))
    error = EISDIR;
  if (error != 0)
    return Status::error(StatusCode::InvalidArgument, "cannot read ",
                         quoted(path), ": ", std::strerror(error));
  if (S_ISREG(info.st_mode))
    file.regularSize = uint64_t(info.st_size);
  ::fcntl(file.fd, F_SETFL, ::fcntl(file.fd, F_GETFL) & ~O_NONBLOCK);
  return file;
}

InputFile::InputFile(InputFile &&other) noexcept
    : path(std::move(other.path)), fd(other.fd),
      regularSize(other.regularSize) {
  other.fd = -1;
}

InputFile::~InputFile() {
  if (fd >= 0)
    ::close(fd);
}

StatusOr<size_t> InputFile::read(void *out, size_t size) {
  size_t done = 0;
  char *bytes = static_cast<char *>(out);
  while (done < size) {
    ssize_t got = ::read(fd, bytes + done, size - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return Status::error(StatusCode::InvalidArgument, "cannot read ",
                           quoted(path), ": ", std::strerror(errno));
    if (got == 0)
      break;
    done += size_t(got);
  }
  return done;
}

Status InputFile::readExactly(std::vector<uint8_t> &out, uint64_t size,
                              const std::string &what) {
  size_t start = out.size();
  // Grow as bytes arrive: a size the file does not back costs no memory.
  constexpr uint64_t kStep = uint64_t(1) << 24;
  uint64_t remaining = size;
  while (remaining > 0) {
    size_t step = size_t(std::min(remaining, kStep));
    size_t at = out.size();
    out.resize(at + step);
    StatusOr<size_t> got = read(out.data() + at, step);
    if (!got.ok())
      return got.getStatus();
    if (*got < step) {
      uint64_t had = at + *got - start;
      out.resize(at + *got);
      return Status::error(StatusCode::InvalidData, "truncated ", what,
                           ": it needs ", size, " bytes, the file has ", had);
    }
    remaining -= step;
  }
  return Status();
}

Status InputFile::expectEnd(const std::string &what) {
  uint8_t extra[64];
  StatusOr<size_t> got = read(extra, sizeof(extra));
  if (!got.ok())
    return got.getStatus();
  if (*got == 0)
    return Status();
  if (regularSize)
    return Status::error(StatusCode::InvalidData, "unexpected bytes after ",
                         what);
  return Status::error(StatusCode::InvalidData, "unexpected bytes after ",
                       what, " (the stream goes on)");
}

Status InputFile::readAll(std::vector<uint8_t> &out, uint64_t maxBytes,
                          const std::string &what) {
  auto tooLarge = [&](const std::string &size) {
    return Status::error(StatusCode::ResourceExhausted, quoted(path), " is ",
                         size, ", more than the ", maxBytes,
                         "-byte limit of ", what);
  };
  if (regularSize && *regularSize > maxBytes)
    return tooLarge(std::to_string(*regularSize) + " bytes");
  if (regularSize && *regularSize > out.size())
    out.reserve(size_t(*regularSize));
  // In steps, never past the limit: a pipe or a device may not end.
  uint8_t chunk[1 << 16];
  for (;;) {
    StatusOr<size_t> got = read(chunk, sizeof(chunk));
    if (!got.ok())
      return got.getStatus();
    if (*got == 0)
      return Status();
    if (out.size() + *got > maxBytes)
      return tooLarge("more than " + std::to_string(maxBytes) + " bytes");
    out.insert(out.end(), chunk, chunk + *got);
  }
}

StatusOr<std::vector<uint8_t>> readFile(const std::string &path,
                                        uint64_t maxBytes,
                                        const std::string &what) {
  StatusOr<InputFile> file = InputFile::open(path);
  if (!file.ok())
    return file.getStatus();
  std::vector<uint8_t> bytes;
  LCC_RETURN_IF_ERROR(file->readAll(bytes, maxBytes, what));
  return bytes;
}

namespace {

/// The directory part of `path`: "." for a bare name, "/" at the root.
std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "."
         : slash == 0               ? "/"
                                    : path.substr(0, slash);
}

std::string baseNameOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status cannotWrite(const std::string &path, const std::string &why) {
  return Status::error(StatusCode::InvalidArgument, "cannot write ",
                       quoted(path), ": ", why);
}

/// The name a write to `path`, which does not exist, creates: `path` itself,
/// or what a dangling symbolic link there points to, followed link by link.
StatusOr<std::string> followDanglingLinks(const std::string &path) {
  std::string current = path;
  for (int hops = 0;; ++hops) {
    struct stat info;
    if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode))
      return current;
    if (hops == 40)
      return cannotWrite(path, std::strerror(ELOOP));
    char link[4096];
    ssize_t length = ::readlink(current.c_str(), link, sizeof(link));
    if (length < 0 || size_t(length) == sizeof(link))
      return cannotWrite(path,
                         std::strerror(length < 0 ? errno : ENAMETOOLONG));
    std::string next(link, size_t(length));
    current = next[0] == '/' ? next : directoryOf(current) + "/" + next;
  }
}

/// Whether the temporary at `path`, whose name ends in `suffix`
/// ("PID-XXXXXX"), was left by a run that ended before renaming it: its
/// process is gone and no process holds its lock.
bool isAbandonedPartial(const std::string &path, const std::string &suffix) {
  size_t dash = suffix.find('-');
  if (dash != std::string::npos && dash > 0) {
    pid_t pid = 0;
    for (size_t i = 0; i < dash && pid >= 0; ++i)
      pid = suffix[i] >= '0' && suffix[i] <= '9'
                ? pid_t(std::min<long long>(pid * 10LL + (suffix[i] - '0'),
                                            0x7fffffff))
                : -1;
    if (pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM))
      return false;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat info;
  bool unlocked = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
                  ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return unlocked;
}

/// Removes the temporaries killed runs left beside `target`.
void removeAbandonedPartials(const std::string &target) {
  std::string directory = directoryOf(target);
  std::string prefix = baseNameOf(partialFilePrefix(target));
  DIR *listing = ::opendir(directory.c_str());
  if (!listing)
    return;
  while (const dirent *entry = ::readdir(listing)) {
    std::string name = entry->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix))
      continue;
    std::string path = directory + "/" + name;
    if (isAbandonedPartial(path, name.substr(prefix.size())))
      ::unlink(path.c_str());
  }
  ::closedir(listing);
}

const char *describeFileType(mode_t mode) {
  return S_ISDIR(mode)    ? "it is a directory"
         : S_ISBLK(mode)  ? "it is a block device"
         : S_ISSOCK(mode) ? "it is a socket"
                          : "it is not a regular file";
}

/// How OutputFile writes a path: in place (a device or a FIFO), or by
/// replacing `target`, the regular file (or new name) it leads to.
struct OutputPlan {
  bool inPlace = false;
  bool fifo = false;
  /// A descriptor of this process that `path` names (/dev/stdout,
  /// /dev/fd/N), written through a duplicate of it; -1 for none.
  int descriptor = -1;
  std::string target;
  /// The mode of the file replaced; nullopt for a new one.
  std::optional<mode_t> replacedMode;
};

/// The descriptor `path` names: 1 for /dev/stdout, N for /dev/fd/N or
/// /proc/self/fd/N; -1 for any other path.
int namedDescriptor(const std::string &path) {
  if (path == "/dev/stdout")
    return 1;
  if (path == "/dev/stderr")
    return 2;
  for (const char *prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    size_t length = std::strlen(prefix);
    if (path.compare(0, length, prefix) != 0 || path.size() == length ||
        path.size() > length + 9)
      continue;
    int fd = 0;
    for (size_t i = length; i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9')
        return -1;
      fd = fd * 10 + (path[i] - '0');
    }
    return fd;
  }
  return -1;
}

StatusOr<OutputPlan> planOutput(const std::string &path) {
  OutputPlan plan;
  // A descriptor the caller opened (stdout redirected to a file or a
  // pipe): written through it, at its offset, as a shell's `>` expects;
  // replacing the file it names would leave the descriptor on a removed
  // one, and reopening it would write from the start.
  plan.descriptor = namedDescriptor(path);
  if (plan.descriptor >= 0) {
    plan.inPlace = true;
    return plan;
  }
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode)) {
      plan.inPlace = true;
      plan.fifo = S_ISFIFO(info.st_mode);
      return plan;
    }
    if (!S_ISREG(info.st_mode))
      return cannotWrite(path, std::string(describeFileType(info.st_mode)) +
                                   "; name a regular file");

    // The regular file a symbolic link names is replaced, not the link.
    char *resolved = ::realpath(path.c_str(), nullptr);
    if (!resolved)
      return cannotWrite(path, std::strerror(errno));
    plan.target = resolved;
    std::free(resolved);
    plan.replacedMode = info.st_mode & 07777;
    return plan;
  }
  StatusOr<std::string> target = followDanglingLinks(path);
  if (!target.ok())
    return target.getStatus();
  plan.target = *target;
  return plan;
}

} // namespace

std::string partialFilePrefix(const std::string &path) {
  return path + ".lcc-partial-";
}

Status OutputFile::checkWritable(const std::string &path) {
  StatusOr<OutputPlan> plan = planOutput(path);
  if (!plan.ok())
    return plan.getStatus();
  if (plan->descriptor >= 0)
    return ::fcntl(plan->descriptor, F_GETFL) >= 0
               ? Status()
               : cannotWrite(path, std::strerror(errno));
  if (plan->inPlace)
    return ::access(path.c_str(), W_OK) == 0
               ? Status()
               : cannotWrite(path, std::strerror(errno));
  std::string directory = directoryOf(plan->target);
  if (::access(directory.c_str(), W_OK | X_OK) != 0)
    return cannotWrite(path, "directory " + quoted(directory) + ": " +
                                 std::strerror(errno));
  return Status();
}

StatusOr<OutputFile> OutputFile::create(const std::string &path) {
  StatusOr<OutputPlan> plan = planOutput(path);
  if (!plan.ok())
    return plan.getStatus();
  OutputFile file;
  file.path = path;
  if (plan->inPlace) {
    // Renaming a regular file over a device or a pipe would destroy it. A
    // FIFO nobody reads is refused, not waited on.
    file.fd = plan->descriptor >= 0
                  ? ::fcntl(plan->descriptor, F_DUPFD_CLOEXEC, 0)
                  : ::open(path.c_str(), O_WRONLY | O_CLOEXEC |
                                             (plan->fifo ? O_NONBLOCK : 0));
    if (file.fd < 0)
      return cannotWrite(path, plan->fifo && errno == ENXIO
                                   ? "it is a FIFO that no process reads"
                                   : std::strerror(errno));
    if (plan->fifo)
      ::fcntl(file.fd, F_SETFL, ::fcntl(file.fd, F_GETFL) & ~O_NONBLOCK);
    return file;
  }
  file.target = plan->target;
  removeAbandonedPartials(file.target);
  std::string temporary =
      partialFilePrefix(file.target) + std::to_string(::getpid()) + "-XXXXXX";
  std::vector<char> pattern(temporary.begin(), temporary.end());
  pattern.push_back('\0');
  file.fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (file.fd < 0)
    return cannotWrite(path, std::strerror(errno));
  file.temporary = pattern.data();
  // The lock tells a run that cleans up after killed ones that this
  // temporary is being written (it goes with the descriptor).
  (void)::flock(file.fd, LOCK_EX);
  // mkostemp makes the file 0600: keep the permissions of the file it
  // replaces, else give those fopen would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(file.fd, plan->replacedMode ? *plan->replacedMode : 0666 & ~mask);
  return file;
}

OutputFile::OutputFile(OutputFile &&other) noexcept
    : path(std::move(other.path)), target(std::move(other.target)),
      temporary(std::move(other.temporary)), fd(other.fd) {
  other.fd = -1;
  other.temporary.clear();
}

OutputFile::~OutputFile() {
  if (fd >= 0)
    ::close(fd);
  if (!temporary.empty())
    ::unlink(temporary.c_str());
}

Status OutputFile::failure(int error) const {
  return Status::error(StatusCode::InvalidArgument, "cannot write ",
                       quoted(path), ": ", std::strerror(error ? error : EIO));
}

Status OutputFile::write(const void *data, size_t size) {
  const char *bytes = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return failure(errno);
    bytes += written;
    size -= size_t(written);
  }
  return Status();
}

Status OutputFile::commit() {
  if (temporary.empty()) {
    // Written in place: a device or a pipe has nothing to sync or rename.
    int result = ::close(fd);
    fd = -1;
    return result == 0 ? Status() : failure(errno);
  }
  // The bytes reach the disk before the name does: after a crash, `path`
  // holds the old file or the whole new one, never a prefix of it.
  int result = ::fsync(fd);
  int error = errno;
  if (::close(fd) != 0 && result == 0) {
    result = -1;
    error = errno;
  }
  fd = -1;
  if (result != 0)
    return failure(error);
  if (::rename(temporary.c_str(), target.c_str()) != 0)
    return failure(errno);
  temporary.clear();
  // The rename itself is durable once the directory is; a directory that
  // cannot be synced (some file systems refuse) does not undo the write.
  int directoryFd =
      ::open(directoryOf(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directoryFd >= 0) {
    (void)::fsync(directoryFd);
    ::close(directoryFd);
  }
  return Status();
}

Status writeFile(const std::string &path, const void *data, size_t size) {
  StatusOr<OutputFile> file = OutputFile::create(path);
  if (!file.ok())
    return file.getStatus();
  LCC_RETURN_IF_ERROR(file->write(data, size));
  return file->commit();
}

uint64_t physicalMemoryBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX;
  return uint64_t(pages) * uint64_t(pageSize);
}

} // namespace lcc::runtime
