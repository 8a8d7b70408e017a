//===- TestUtil.cpp - helpers shared by the runtime unit tests ------------===//

#include "TestUtil.h"

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <stdexcept>
#include <unistd.h>

namespace lcc::test {

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/lcc-runtime-test-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    throw std::runtime_error("cannot create a temporary directory");
  directory = name.data();
}

TempDir::~TempDir() {
  if (DIR *dir = ::opendir(directory.c_str())) {
    while (dirent *entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..")
        ::unlink(file(name).c_str());
    }
    ::closedir(dir);
  }
  ::rmdir(directory.c_str());
}

std::string TempDir::file(const std::string &name) const {
  return directory + "/" + name;
}

std::string messageOf(const runtime::Status &status) {
  return status.ok() ? "<ok>" : status.getMessage();
}

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    throw std::runtime_error("cannot write " + path);
  if (!bytes.empty())
    std::fwrite(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
}

ScopedEnvironment::ScopedEnvironment(const char *name, const char *value)
    : name(name) {
  if (const char *previous = std::getenv(name))
    saved = previous;
  if (value)
    ::setenv(name, value, 1);
  else
    ::unsetenv(name);
}

ScopedEnvironment::~ScopedEnvironment() {
  if (saved)
    ::setenv(name.c_str(), saved->c_str(), 1);
  else
    ::unsetenv(name.c_str());
}

} // namespace lcc::test
