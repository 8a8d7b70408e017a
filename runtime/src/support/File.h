//===- File.h - bounded file reads and atomic writes ------------*- C++ -*-===//
//
// Files are untrusted: one may be a pipe or /dev/zero that never ends, or
// claim sizes it does not hold. Every read here is bounded by what the
// caller can justify, and a caller checks a header before reading on, so a
// wrong file is refused after a few bytes instead of after gigabytes.
// Writes to a regular file go to a temporary file that is renamed into
// place: a reader never sees half a file. Writes never replace what is not
// a regular file (a device, a FIFO, a symbolic link's target elsewhere).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_FILE_H
#define LCC_RUNTIME_FILE_H

#include "support/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lcc::runtime {

/// A file opened for sequential reading (a regular file, a pipe, a device).
class InputFile {
public:
  /// Errors read "cannot open 'PATH': REASON".
  static StatusOr<InputFile> open(const std::string &path);
  InputFile(InputFile &&other) noexcept;
  InputFile &operator=(InputFile &&other) = delete;
  InputFile(const InputFile &) = delete;
  ~InputFile();

  const std::string &getPath() const { return path; }
  /// The size of a regular file; nullopt for pipes and devices.
  std::optional<uint64_t> getRegularSize() const { return regularSize; }

  /// Reads up to `size` bytes into `out`, fewer only at the end of the file.
  StatusOr<size_t> read(void *out, size_t size);
  /// Appends exactly `size` bytes to `out`, or fails naming `what` and how
  /// many bytes the file had.
  Status readExactly(std::vector<uint8_t> &out, uint64_t size,
                     const std::string &what);
  /// Succeeds when nothing follows; else an InvalidData error
  /// "unexpected bytes after WHAT".
  Status expectEnd(const std::string &what);
  /// Appends the rest of the file to `out`, which may hold at most
  /// `maxBytes` in all: more (or an endless stream) is an error naming
  /// `what` and the limit, raised before reading when the size is known.
  Status readAll(std::vector<uint8_t> &out, uint64_t maxBytes,
                 const std::string &what);

private:
  InputFile() = default;
  std::string path;
  int fd = -1;
  std::optional<uint64_t> regularSize;
};

/// The bytes of the file at `path`, at most `maxBytes` of them: a larger
/// file (or an endless stream) is an error naming `what` and the limit,
/// raised before the bytes are read where the size is known.
StatusOr<std::vector<uint8_t>> readFile(const std::string &path,
                                        uint64_t maxBytes,
                                        const std::string &what);

/// Writes `size` bytes to `path` as OutputFile does. Errors read
/// "cannot write 'PATH': REASON".
Status writeFile(const std::string &path, const void *data, size_t size);

/// An output file. What `path` names decides how it is written:
/// - a regular file, or nothing yet: through a temporary beside it
///   (`PATH.lcc-partial-PID-XXXXXX`), synced to disk and renamed over it on
///   commit() with the old file's permissions; dropped without commit(), or
///   when commit() fails, the temporary is removed and `path` is left as it
///   was. Temporaries that a killed run left beside `path` are removed
///   first (those whose process is gone and that no process has locked);
/// - a symbolic link: what it points to, by the same rules (the link stays);
/// - a character device or a FIFO (/dev/null, /dev/stdout, a named pipe
///   something reads): written in place, never replaced; a FIFO that no
///   process reads is an error rather than a wait;
/// - /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: written through
///   that descriptor of this process, whatever it is open on;
/// - anything else (a directory, a block device, a socket): refused with
///   one error naming what it is.
class OutputFile {
public:
  static StatusOr<OutputFile> create(const std::string &path);
  /// Whether create(path) could write there, without writing: the errors
  /// create() would give, and a directory or device this process may not
  /// write. A tool asks before long work whose result goes to `path`.
  static Status checkWritable(const std::string &path);
  OutputFile(OutputFile &&other) noexcept;
  OutputFile &operator=(OutputFile &&other) = delete;
  OutputFile(const OutputFile &) = delete;
  ~OutputFile();

  Status write(const void *data, size_t size);
  Status commit();

private:
  OutputFile() = default;
  Status failure(int error) const;
  std::string path;
  /// The regular file renamed into place on commit (symbolic links
  /// followed); "" when written in place.
  std::string target;
  /// The temporary written before the rename; "" when written in place or
  /// once renamed.
  std::string temporary;
  int fd = -1;
};

/// The prefix of the temporaries OutputFile writes beside `path`
/// ("PATH.lcc-partial-"), which a killed run may leave behind.
std::string partialFilePrefix(const std::string &path);

/// Bytes of memory this machine has (the default memory limit of a device).
uint64_t physicalMemoryBytes();

} // namespace lcc::runtime

#endif // LCC_RUNTIME_FILE_H
