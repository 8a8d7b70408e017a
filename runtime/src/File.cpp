//===- File.cpp - bounded file reads and atomic writes --------------------===//

#include "File.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lcc::runtime {

StatusOr<InputFile> InputFile::open(const std::string &path) {
  InputFile file;
  file.path = path;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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

StatusOr<OutputFile> OutputFile::create(const std::string &path) {
  OutputFile file;
  file.path = path;
  file.temporary = path + ".lcc-partial-XXXXXX";
  std::vector<char> pattern(file.temporary.begin(), file.temporary.end());
  pattern.push_back('\0');
  file.fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (file.fd < 0)
    return Status::error(StatusCode::InvalidArgument, "cannot write ",
                         quoted(path), ": ", std::strerror(errno));
  file.temporary = pattern.data();
  // mkostemp makes the file 0600; give it the permissions fopen would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(file.fd, 0666 & ~mask);
  return file;
}

OutputFile::OutputFile(OutputFile &&other) noexcept
    : path(std::move(other.path)), temporary(std::move(other.temporary)),
      fd(other.fd) {
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
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    return failure(errno);
  temporary.clear();
  // The rename itself is durable once the directory is; a directory that
  // cannot be synced (some file systems refuse) does not undo the write.
  size_t slash = path.rfind('/');
  std::string directory = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  int directoryFd =
      ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
