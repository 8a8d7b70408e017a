//===- File.cpp - whole-file reads and writes -----------------------------===//

#include "File.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lcc::runtime {

StatusOr<std::vector<uint8_t>> readFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::error(errno == ENOENT ? StatusCode::NotFound
                                         : StatusCode::InvalidArgument,
                         "cannot open '", path, "': ", std::strerror(errno));
  struct stat info;
  int error = 0;
  if (::fstat(fd, &info) != 0)
    error = errno;
  else if (S_ISDIR(info.st_mode))
    error = EISDIR;
  if (error != 0) {
    ::close(fd);
    return Status::error(StatusCode::InvalidArgument, "cannot read '", path,
                         "': ", std::strerror(error));
  }
  std::vector<uint8_t> bytes;
  // The size is a hint only (a pipe or /proc file reports 0): read to EOF.
  bytes.reserve(size_t(info.st_size));
  uint8_t chunk[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      error = errno;
      ::close(fd);
      return Status::error(StatusCode::InvalidArgument, "cannot read '", path,
                           "': ", std::strerror(error));
    }
    if (got == 0)
      break;
    bytes.insert(bytes.end(), chunk, chunk + got);
  }
  ::close(fd);
  return bytes;
}

Status writeFile(const std::string &path, const void *data, size_t size) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return Status::error(StatusCode::InvalidArgument, "cannot write '", path,
                         "': ", std::strerror(errno));
  size_t written = size ? std::fwrite(data, 1, size, file) : 0;
  int writeError = written == size ? 0 : errno;
  if (std::fclose(file) != 0 && writeError == 0)
    writeError = errno;
  if (written != size || writeError != 0)
    return Status::error(StatusCode::InvalidArgument, "cannot write '", path,
                         "': ", std::strerror(writeError ? writeError : EIO));
  return Status();
}

} // namespace lcc::runtime
