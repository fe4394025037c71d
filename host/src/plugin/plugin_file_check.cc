#include "plugin/plugin_file_check.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

#if defined(__LP64__)
using Ehdr = Elf64_Ehdr;
using Phdr = Elf64_Phdr;
constexpr unsigned char kHostClass = ELFCLASS64;
#else
using Ehdr = Elf32_Ehdr;
using Phdr = Elf32_Phdr;
constexpr unsigned char kHostClass = ELFCLASS32;
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char kHostData = ELFDATA2LSB;
#else
constexpr unsigned char kHostData = ELFDATA2MSB;
#endif

// More program headers than any real shared object has; bounds the reads.
constexpr uint32_t kMaxProgramHeaders = 4096;

const char* SegmentName(uint32_t type) {
  switch (type) {
    case PT_LOAD:
      return "PT_LOAD";
    case PT_DYNAMIC:
      return "PT_DYNAMIC";
    case PT_INTERP:
      return "PT_INTERP";
    case PT_NOTE:
      return "PT_NOTE";
    case PT_TLS:
      return "PT_TLS";
    case PT_GNU_EH_FRAME:
      return "PT_GNU_EH_FRAME";
    case PT_GNU_RELRO:
      return "PT_GNU_RELRO";
    default:
      return "segment";
  }
}

absl::Status Truncated(const std::string& what) {
  return absl::FailedPreconditionError(absl::StrCat(
      "it is not a complete ELF shared object (", what,
      "); the file is probably truncated or damaged: reinstall or rebuild the "
      "plugin"));
}

// The ownership and permission rules for the file (`st`) or its directory.
absl::Status CheckOwnerAndMode(const struct stat& st, const std::string& what,
                               bool directory) {
  const uid_t me = geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        what, " is owned by uid ", st.st_uid, ", neither you (uid ", me,
        ") nor root, so that user could replace the plugin; install plugins "
        "in a directory you or root own, or pass --allow-insecure-plugins "
        "(KilnInterpreterOptionsSetAllowInsecurePlugins) if you trust it"));
  }
  const bool sticky = (st.st_mode & S_ISVTX) != 0;
  if ((st.st_mode & S_IWOTH) != 0 && !(directory && sticky)) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s is writable by every user (mode %04o), so anyone could replace "
        "the plugin; fix it with 'chmod o-w', or pass --allow-insecure-plugins "
        "(KilnInterpreterOptionsSetAllowInsecurePlugins) if you trust it",
        what, st.st_mode & 07777));
  }
  return absl::OkStatus();
}

absl::Status CheckDirectory(const fs::path& dir) {
  struct stat st;
  const std::string name = dir.empty() ? std::string(".") : dir.string();
  if (stat(name.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot stat its directory '", name,
                                            "': ", std::strerror(errno)));
  }
  return CheckOwnerAndMode(st, absl::StrCat("its directory '", name, "'"),
                           /*directory=*/true);
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

uint16_t ElfHostMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__i386__)
  return EM_386;
#elif defined(__arm__)
  return EM_ARM;
#elif defined(__riscv)
  return EM_RISCV;
#elif defined(__powerpc64__)
  return EM_PPC64;
#else
  return EM_NONE;
#endif
}

std::string ElfMachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86-64";
    case EM_AARCH64:
      return "AArch64";
    case EM_386:
      return "i386";
    case EM_ARM:
      return "ARM";
    case EM_RISCV:
      return "RISC-V";
    case EM_PPC64:
      return "PowerPC64";
    default:
      return "machine " + std::to_string(machine);
  }
}

absl::Status CheckElfSharedObject(const ElfByteReader& read,
                                  uint64_t file_size) {
  unsigned char ident[EI_NIDENT];
  if (file_size < EI_NIDENT || !read(0, ident, sizeof(ident)) ||
      std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return absl::FailedPreconditionError(
        "it is not an ELF file; a plugin is a shared library built with "
        "kiln_add_plugin (add_library(... MODULE ...))");
  }
  if (ident[EI_CLASS] != kHostClass || ident[EI_DATA] != kHostData) {
    return absl::FailedPreconditionError(absl::StrCat(
        "it is a ", ident[EI_CLASS] == ELFCLASS64 ? "64-bit" : "32-bit", " ",
        ident[EI_DATA] == ELFDATA2MSB ? "big" : "little",
        "-endian ELF file, which this host cannot load; rebuild it for this "
        "machine"));
  }
  Ehdr ehdr;
  if (file_size < sizeof(ehdr) || !read(0, &ehdr, sizeof(ehdr))) {
    return Truncated(absl::StrCat("the file has ", file_size,
                                  " bytes, less than an ELF header"));
  }
  if (ehdr.e_type != ET_DYN) {
    return absl::FailedPreconditionError(
        absl::StrCat("it is an ELF ",
                     ehdr.e_type == ET_EXEC  ? "executable"
                     : ehdr.e_type == ET_REL ? "object file (.o)"
                                             : "file of another kind",
                     ", not a shared object; build it with kiln_add_plugin "
                     "(add_library(... MODULE ...))"));
  }
  if (ehdr.e_machine != ElfHostMachine()) {
    return absl::FailedPreconditionError(
        absl::StrCat("it is built for ", ElfMachineName(ehdr.e_machine),
                     ", but this host is ", ElfMachineName(ElfHostMachine()),
                     "; rebuild it for this machine"));
  }
  if (ehdr.e_phentsize != sizeof(Phdr) || ehdr.e_phnum == 0 ||
      ehdr.e_phnum > kMaxProgramHeaders) {
    return Truncated(absl::StrCat("its program header table has ", ehdr.e_phnum,
                                  " entries of ", ehdr.e_phentsize, " bytes"));
  }
  const uint64_t table_size = uint64_t{ehdr.e_phnum} * sizeof(Phdr);
  if (ehdr.e_phoff > file_size || file_size - ehdr.e_phoff < table_size) {
    return Truncated(absl::StrCat(
        "its program header table ends at byte ", ehdr.e_phoff + table_size,
        " but the file has only ", file_size, " bytes"));
  }
  bool has_load = false, has_dynamic = false;
  for (uint32_t i = 0; i < ehdr.e_phnum; ++i) {
    Phdr ph;
    if (!read(ehdr.e_phoff + uint64_t{i} * sizeof(Phdr), &ph, sizeof(ph))) {
      return Truncated(absl::StrCat("program header ", i, " cannot be read"));
    }
    has_load |= ph.p_type == PT_LOAD;
    has_dynamic |= ph.p_type == PT_DYNAMIC;
    if (ph.p_filesz == 0) continue;
    if (ph.p_offset > file_size || file_size - ph.p_offset < ph.p_filesz) {
      return Truncated(absl::StrCat(
          "program header ", i, " (", SegmentName(ph.p_type), ") covers bytes ",
          ph.p_offset, " to ", uint64_t{ph.p_offset} + ph.p_filesz,
          " but the file has only ", file_size, " bytes"));
    }
    if (ph.p_type == PT_LOAD && ph.p_filesz > ph.p_memsz) {
      return Truncated(absl::StrCat(
          "program header ", i, " (PT_LOAD) has more bytes in the file (",
          ph.p_filesz, ") than in memory (", ph.p_memsz, ")"));
    }
  }
  if (!has_load || !has_dynamic) {
    return Truncated(has_load ? "it has no PT_DYNAMIC segment"
                              : "it has no PT_LOAD segment");
  }
  return absl::OkStatus();
}

absl::Status CheckPluginFile(const std::string& path, bool allow_insecure) {
  // O_NONBLOCK: a FIFO given as a plugin must not block the open.
  const FileDescriptor fd(
      open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    return absl::NotFoundError(absl::StrCat(
        "cannot open it: ", std::strerror(errno), "; check the path"));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot stat it: ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        "it is not a regular file; give the path of a shared library");
  }
  if (!allow_insecure) {
    if (absl::Status s = CheckOwnerAndMode(st, "the file", false); !s.ok()) {
      return s;
    }
    // The directory it was named in and, through symbolic links, the one
    // it really lives in: whoever can write to either can swap the plugin.
    const fs::path given(path);
    if (absl::Status s = CheckDirectory(given.parent_path()); !s.ok()) {
      return s;
    }
    std::error_code ec;
    const fs::path real = fs::canonical(given, ec);
    if (!ec && real.parent_path() != given.parent_path()) {
      if (absl::Status s = CheckDirectory(real.parent_path()); !s.ok()) {
        return s;
      }
    }
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const int raw = fd.get();
  return CheckElfSharedObject(
      [raw](uint64_t offset, void* out, size_t n) {
        size_t done = 0;
        while (done < n) {
          const ssize_t got =
              pread(raw, static_cast<char*>(out) + done, n - done,
                    static_cast<off_t>(offset + done));
          if (got < 0 && errno == EINTR) continue;
          if (got <= 0) return false;
          done += static_cast<size_t>(got);
        }
        return true;
      },
      size);
}

}  // namespace kiln
