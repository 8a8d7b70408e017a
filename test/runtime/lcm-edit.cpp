//===- lcm-edit.cpp - edits a compiled module, for the hostile-file tests -===//
//
// lcm-edit IN.lcm OUT.lcm EDIT...
//
// Writes IN with one or more fields changed, as a corrupted or hand-edited
// artifact would have them, so the lit tests can check that lcc-run refuses
// each with one clear error (test/tools/lcc-run-hostile.test). Edits:
//   --truncate-executable=E:BYTES     keep the first BYTES of executable E
//                                     (its checksum recomputed)
//   --flip-bit=E:BIT                  flip bit BIT of executable E's code
//                                     (its checksum kept: corruption)
//   --workgroups=F:C:X,Y,Z            command C of function F runs X*Y*Z
//   --binding-length=F:C:B:BYTES      binding B of that command
//   --rename-entry-point=I:NAME       entry point I, in every executable
//   --arena=F:BYTES                   the arena size of function F
//   --cpu-features=E:A,B,...          the CPU features executable E needs
// Test-only: not installed.
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using namespace lcc;
using namespace lcc::test;

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "lcm-edit: error: %s\n", message.c_str());
  std::exit(1);
}

std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator))
    parts.push_back(part);
  return parts;
}

uint64_t number(const std::string &text) {
  char *end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end)
    fail("'" + text + "' is not a number");
  return value;
}

template <typename T> T &at(std::vector<T> &items, uint64_t index) {
  if (index >= items.size())
    fail("index " + std::to_string(index) + " is out of range");
  return items[index];
}

CommandSpec &command(ModuleSpec &spec, const std::vector<std::string> &p) {
  return at(at(spec.functions, number(p[0])).commands, number(p[1]));
}

void edit(ModuleSpec &spec, const std::string &argument) {
  size_t equals = argument.find('=');
  if (equals == std::string::npos)
    fail("expected --EDIT=VALUE, got '" + argument + "'");
  std::string name = argument.substr(0, equals);
  std::vector<std::string> p = split(argument.substr(equals + 1), ':');
  if (name == "--truncate-executable" && p.size() == 2) {
    // As an editor would who knows the format: the checksum follows, so
    // that the loader's checks of the code itself are reached.
    ExecutableSpec &executable = at(spec.executables, number(p[0]));
    executable.data.resize(
        std::min<uint64_t>(executable.data.size(), number(p[1])));
    executable.dataChecksum.reset();
  } else if (name == "--flip-bit" && p.size() == 2) {
    // As a bad disk or a bad download would: the checksum stays.
    std::vector<uint8_t> &data = at(spec.executables, number(p[0])).data;
    uint64_t bit = number(p[1]);
    at(data, bit / 8) ^= uint8_t(1u << (bit % 8));
  } else if (name == "--workgroups" && p.size() == 3) {
    std::vector<uint32_t> counts;
    for (const std::string &count : split(p[2], ','))
      counts.push_back(uint32_t(number(count)));
    command(spec, p).workgroupCount = counts;
  } else if (name == "--binding-length" && p.size() == 4) {
    at(command(spec, p).bindings, number(p[2])).length = number(p[3]);
  } else if (name == "--rename-entry-point" && p.size() == 2) {
    for (ExecutableSpec &executable : spec.executables)
      at(executable.entryPoints, number(p[0])).name = p[1];
  } else if (name == "--cpu-features" && p.size() == 2) {
    at(spec.executables, number(p[0])).cpuFeatures = split(p[1], ',');
  } else if (name == "--arena" && p.size() == 2) {
    at(spec.functions, number(p[0])).arenaSize = number(p[1]);
  } else {
    fail("unknown edit '" + argument + "'");
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4)
    fail("usage: lcm-edit IN.lcm OUT.lcm EDIT...");
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!in || !lcm::VerifyModuleBuffer(verifier))
    fail(std::string("cannot read a valid module from '") + argv[1] + "'");
  ModuleSpec spec = describeModule(*lcm::GetModule(bytes.data()));
  for (int i = 3; i < argc; ++i)
    edit(spec, argv[i]);
  std::vector<uint8_t> out = buildModule(spec);
  std::ofstream file(argv[2], std::ios::binary);
  file.write(reinterpret_cast<const char *>(out.data()), out.size());
  if (!file)
    fail(std::string("cannot write '") + argv[2] + "'");
  return 0;
}
