//===- Status.cpp - fallible results of runtime calls ---------------------===//

#include "Status.h"

namespace lcc::runtime {

Status Status::withContext(const std::string &context) const {
  if (ok())
    return *this;
  return Status(code, context + ": " + message);
}

} // namespace lcc::runtime
