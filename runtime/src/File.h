//===- File.h - whole-file reads and writes ---------------------*- C++ -*-===//

#ifndef LCC_RUNTIME_FILE_H
#define LCC_RUNTIME_FILE_H

#include "Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lcc::runtime {

/// The bytes of the file at `path`. Errors read
/// "cannot open 'PATH': REASON" or "cannot read 'PATH': REASON".
StatusOr<std::vector<uint8_t>> readFile(const std::string &path);

/// Writes `size` bytes to `path`, replacing it. Errors read
/// "cannot write 'PATH': REASON".
Status writeFile(const std::string &path, const void *data, size_t size);

} // namespace lcc::runtime

#endif // LCC_RUNTIME_FILE_H
