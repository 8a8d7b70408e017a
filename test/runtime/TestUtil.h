//===- TestUtil.h - helpers shared by the runtime unit tests ----*- C++ -*-===//

#ifndef LCC_TEST_RUNTIME_TESTUTIL_H
#define LCC_TEST_RUNTIME_TESTUTIL_H

#include "support/Status.h"

#include <optional>
#include <string>
#include <vector>

namespace lcc::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its files.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return directory; }
  /// path() + "/" + name.
  std::string file(const std::string &name) const;

private:
  std::string directory;
};

/// The message of a failed status, or "<ok>" when it succeeded: tests
/// compare it with the exact text users see.
std::string messageOf(const runtime::Status &status);
template <typename T> std::string messageOf(const runtime::StatusOr<T> &value) {
  return messageOf(value.getStatus());
}

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes);

/// Sets (or, with null, unsets) an environment variable for a scope.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char *name, const char *value);
  ~ScopedEnvironment();
  ScopedEnvironment(const ScopedEnvironment &) = delete;
  ScopedEnvironment &operator=(const ScopedEnvironment &) = delete;

private:
  std::string name;
  std::optional<std::string> saved;
};

} // namespace lcc::test

#endif // LCC_TEST_RUNTIME_TESTUTIL_H
