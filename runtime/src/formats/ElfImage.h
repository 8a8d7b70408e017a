//===- ElfImage.h - checks of an embedded shared object ---------*- C++ -*-===//
//
// dlopen maps an object's segments from its file and trusts the headers: a
// truncated or edited image makes it map past the end of the file, and the
// first touch of those pages is a SIGBUS inside the dynamic loader. So the
// headers are checked against the image before it is loaded: an ELF64
// little-endian shared object for this machine whose program and section
// headers, and every segment and section with file contents, lie inside the
// image.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_ELFIMAGE_H
#define LCC_RUNTIME_ELFIMAGE_H

#include "support/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace lcc::runtime {

/// OK when `bytes` holds a loadable shared object for this machine; else an
/// InvalidModule error starting with `what` that names the header at fault.
Status checkSharedObjectImage(const uint8_t *bytes, size_t size,
                              const std::string &what);

} // namespace lcc::runtime

#endif // LCC_RUNTIME_ELFIMAGE_H
