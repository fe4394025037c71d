// Checks of a plugin file made before it is handed to dlopen():
//
//  - where it lives (unless the caller allows insecure plugins): the file
//    must be a regular file owned by the user or root and not writable by
//    every user, and its directory must not be writable by every user
//    (unless sticky, where only a file's owner can replace it) and must be
//    owned by the user or root (the rules of ld.so and the Vulkan loader);
//  - that it is a complete ELF shared object for this machine: the ELF
//    header and every program header lie inside the file, and so does every
//    segment's file image. dlopen() maps segments without checking them
//    against the file size, and touching a page past the end of a
//    truncated file kills the process with SIGBUS.
#ifndef KILN_HOST_PLUGIN_PLUGIN_FILE_CHECK_H_
#define KILN_HOST_PLUGIN_PLUGIN_FILE_CHECK_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace kiln {

// The ELF e_machine of this host (EM_X86_64, ...), EM_NONE when unknown.
uint16_t ElfHostMachine();
// "x86-64", "AArch64", ... or "machine N".
std::string ElfMachineName(uint16_t machine);

// Reads `size` bytes at `offset` into `out`; false when they are not there.
using ElfByteReader =
    std::function<bool(uint64_t offset, void* out, size_t size)>;

// Checks the ELF header and program headers of a file of `file_size` bytes
// read through `read`. The error says what is wrong ("it is truncated:
// ...") without naming the file.
absl::Status CheckElfSharedObject(const ElfByteReader& read,
                                  uint64_t file_size);

// Both checks above for the plugin at `path`. The error says what is wrong
// and what to do; the caller names the plugin.
absl::Status CheckPluginFile(const std::string& path, bool allow_insecure);

}  // namespace kiln

#endif  // KILN_HOST_PLUGIN_PLUGIN_FILE_CHECK_H_
