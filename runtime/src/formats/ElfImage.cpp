//===- ElfImage.cpp - checks of an embedded shared object -----------------===//

#include "formats/ElfImage.h"

#include <cstring>
#include <elf.h>

namespace lcc::runtime {
namespace {

/// [offset, offset + length) inside [0, size), without wrapping.
bool inside(uint64_t offset, uint64_t length, size_t size) {
  return offset <= size && length <= size - offset;
}

#if defined(__x86_64__)
constexpr uint16_t kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kMachine = EM_AARCH64;
#else
constexpr uint16_t kMachine = EM_NONE;
#endif

} // namespace

Status checkSharedObjectImage(const uint8_t *bytes, size_t size,
                              const std::string &what) {
  std::string prefix = what + ": the shared object";
  Elf64_Ehdr header;
  if (size < sizeof(header))
    return invalidModule(prefix, " is ", size, " bytes, shorter than an ELF header");
  std::memcpy(&header, bytes, sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return invalidModule(prefix, " is not an ELF file");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB)
    return invalidModule(prefix, " is not a 64-bit little-endian ELF file");
  if (header.e_type != ET_DYN)
    return invalidModule(prefix, " has ELF type ", header.e_type,
                   ", not a shared object");
  if (header.e_machine != kMachine)
    return invalidModule(prefix, " is for ELF machine ", header.e_machine,
                   ", this machine is ", kMachine);
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 ||
      !inside(header.e_phoff, uint64_t(header.e_phnum) * sizeof(Elf64_Phdr),
              size))
    return invalidModule(prefix, " has program headers outside its ", size,
                   " bytes (truncated?)");
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, bytes + header.e_phoff + i * sizeof(Elf64_Phdr),
                sizeof(segment));
    if (segment.p_filesz > segment.p_memsz && segment.p_type == PT_LOAD)
      return invalidModule(prefix, " has segment ", i,
                     " with more file bytes than memory bytes");
    if (!inside(segment.p_offset, segment.p_filesz, size))
      return invalidModule(prefix, " has segment ", i, " at bytes [",
                     segment.p_offset, ", ",
                     segment.p_offset + segment.p_filesz,
                     ") outside its ", size, " bytes (truncated?)");
  }
  if (header.e_shoff != 0 || header.e_shnum != 0) {
    if (header.e_shentsize != sizeof(Elf64_Shdr) ||
        !inside(header.e_shoff, uint64_t(header.e_shnum) * sizeof(Elf64_Shdr),
                size))
      return invalidModule(prefix, " has section headers outside its ", size,
                     " bytes (truncated?)");
    for (uint16_t i = 0; i < header.e_shnum; ++i) {
      Elf64_Shdr section;
      std::memcpy(&section, bytes + header.e_shoff + i * sizeof(Elf64_Shdr),
                  sizeof(section));
      if (section.sh_type != SHT_NOBITS &&
          !inside(section.sh_offset, section.sh_size, size))
        return invalidModule(prefix, " has section ", i, " at bytes [",
                       section.sh_offset, ", ",
                       section.sh_offset + section.sh_size, ") outside its ",
                       size, " bytes (truncated?)");
    }
  }
  return Status();
}

} // namespace lcc::runtime
