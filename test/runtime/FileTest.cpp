//===- FileTest.cpp - how outputs are written -----------------------------===//
//
// OutputFile's rule by what a path names (File.h): the cases a lit test
// cannot set up, a temporary being written by a live writer among them.
//
//===----------------------------------------------------------------------===//

#include "support/File.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace lcc::runtime;
using namespace lcc::test;

namespace {

bool exists(const std::string &path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0;
}

std::string contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void touch(const std::string &path) { std::ofstream(path) << "partial"; }

size_t countEntries(const std::string &directory) {
  size_t count = 0;
  DIR *listing = ::opendir(directory.c_str());
  while (const dirent *entry = ::readdir(listing))
    count += entry->d_name[0] != '.';
  ::closedir(listing);
  return count;
}

TEST(OutputFile, LeavesThePathAsItWasWithoutCommit) {
  TempDir dir;
  std::string path = dir.file("out.bin");
  touch(path);
  {
    StatusOr<OutputFile> file = OutputFile::create(path);
    ASSERT_EQ(messageOf(file), "<ok>");
    ASSERT_EQ(messageOf(file->write("new", 3)), "<ok>");
  }
  EXPECT_EQ(contents(path), "partial");
  // Nothing but the file itself is left behind.
  EXPECT_EQ(countEntries(dir.path()), 1u);
  ASSERT_EQ(messageOf(writeFile(path, "new", 3)), "<ok>");
  EXPECT_EQ(contents(path), "new");
}

// A temporary whose writer is gone is removed; one that some process holds
// locked, or whose process lives, is being written and stays.
TEST(OutputFile, RemovesOnlyAbandonedTemporaries) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  std::string prefix = partialFilePrefix(path);
  std::string dead = prefix + "999999999-aaaaaa";
  std::string locked = prefix + "999999998-bbbbbb";
  std::string live = prefix + std::to_string(::getpid()) + "-cccccc";
  std::string older = prefix + "dddddd"; // before the pid was in the name
  for (const std::string &partial : {dead, locked, live, older})
    touch(partial);
  int fd = ::open(locked.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  ASSERT_EQ(messageOf(writeFile(path, "w", 1)), "<ok>");
  ::close(fd);
  EXPECT_FALSE(exists(dead));
  EXPECT_FALSE(exists(older));
  EXPECT_TRUE(exists(locked));
  EXPECT_TRUE(exists(live));
  // Another name's temporaries are another output's.
  std::string other =
      partialFilePrefix(dir.file("v.safetensors")) + "999999999-eeeeee";
  touch(other);
  ASSERT_EQ(messageOf(writeFile(path, "w", 1)), "<ok>");
  EXPECT_TRUE(exists(other));
}

TEST(OutputFile, ChecksWithoutWriting) {
  TempDir dir;
  EXPECT_EQ(messageOf(OutputFile::checkWritable(dir.file("new.bin"))), "<ok>");
  EXPECT_FALSE(exists(dir.file("new.bin")));
  EXPECT_EQ(messageOf(OutputFile::checkWritable("/dev/null")), "<ok>");
  EXPECT_EQ(messageOf(OutputFile::checkWritable(dir.path())),
            "cannot write '" + dir.path() +
                "': it is a directory; name a regular file");
  EXPECT_EQ(messageOf(OutputFile::checkWritable(dir.file("no/such/x"))),
            "cannot write '" + dir.file("no/such/x") + "': directory '" +
                dir.file("no/such") + "': No such file or directory");
  std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A FIFO is only asked whether it may be written: opening it to check
  // would end what its reader reads.
  EXPECT_EQ(messageOf(OutputFile::checkWritable(fifo)), "<ok>");
  EXPECT_EQ(messageOf(OutputFile::create(fifo)),
            "cannot write '" + fifo + "': it is a FIFO that no process reads");
}

} // namespace
