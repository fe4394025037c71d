// Compiled OpenCL programs, cached in memory per delegate instance and on
// disk across processes.
//
// Disk cache: one file per program in the cache directory, named by a
// 128-bit hash of (program source, build options, device name, driver
// version, platform version). The file holds a header (magic, format
// version, sizes, checksum), the full identity text and the program binary
// from CL_PROGRAM_BINARIES. It is verified on read (magic, version, sizes,
// identity, checksum); a corrupt, stale or driver-rejected file is rebuilt
// from source and overwritten. Files are written to a temporary name in the
// same directory and renamed, so readers never see a partial file.
#ifndef KILN_PLUGINS_OPENCL_PROGRAM_CACHE_H_
#define KILN_PLUGINS_OPENCL_PROGRAM_CACHE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cl_api.h"
#include "kiln/kiln_common.h"

namespace kiln::opencl {

// What, besides source and options, a compiled binary depends on.
struct DeviceIdentity {
  std::string device_name;
  std::string driver_version;
  std::string platform_version;
};

// Identity text of one program (stored in the cache file and compared on
// read) and the file name derived from its hash ("<32 hex digits>.clbin").
std::string ProgramIdentity(const std::string& source,
                            const std::string& build_options,
                            const DeviceIdentity& device);
std::string CacheFileName(const std::string& identity);

// Cache file (de)serialisation. DecodeCacheFile returns false with *why
// ("bad magic", "checksum mismatch", ...) when `file` is not a valid cache
// file for `identity`; *binary is then untouched.
std::vector<uint8_t> EncodeCacheFile(const std::string& identity,
                                     const std::vector<uint8_t>& binary);
bool DecodeCacheFile(const std::vector<uint8_t>& file,
                     const std::string& identity, std::vector<uint8_t>* binary,
                     std::string* why);

// Writes `bytes` to `path` through a temporary file in the same directory
// and rename(2), creating missing parent directories. On failure returns
// false with *error; no partial file is left under `path`.
bool WriteFileAtomically(const std::string& path,
                         const std::vector<uint8_t>& bytes, std::string* error);

struct ProgramCacheStats {
  std::atomic<uint64_t> built_from_source{0};
  std::atomic<uint64_t> loaded_from_disk{0};
  std::atomic<uint64_t> reused_from_memory{0};
  std::atomic<uint64_t> files_rejected{0};
  std::atomic<uint64_t> files_written{0};
};

// Not thread-safe except stats(); the owning delegate instance serialises
// calls (the host drives one instance from one thread at a time).
class ProgramCache {
 public:
  using LogFn = std::function<void(int32_t severity, const std::string&)>;

  // `cl`, `context` and `device` must outlive the cache. `directory` "" =
  // no disk cache.
  ProgramCache(const ClApi* cl, cl_context context, cl_device_id device,
               DeviceIdentity identity, std::string directory, LogFn log);
  ~ProgramCache();
  ProgramCache(const ProgramCache&) = delete;
  ProgramCache& operator=(const ProgramCache&) = delete;

  // A built program for (source, options), owned by the cache and valid
  // until it is destroyed. On failure returns null with *error, which for a
  // compile error contains the OpenCL build log.
  cl_program Get(const std::string& label, const std::string& source,
                 const std::string& build_options, std::string* error);

  const ProgramCacheStats& stats() const { return stats_; }
  const std::string& directory() const { return directory_; }

 private:
  cl_program BuildFromBinary(const std::vector<uint8_t>& binary,
                             const std::string& build_options,
                             std::string* why);
  cl_program BuildFromSource(const std::string& label,
                             const std::string& source,
                             const std::string& build_options,
                             std::string* error);
  std::string BuildLog(cl_program program);

  const ClApi* cl_;
  cl_context context_;
  cl_device_id device_;
  DeviceIdentity identity_;
  std::string directory_;
  LogFn log_;
  std::map<std::string, cl_program> programs_;  // by identity text
  ProgramCacheStats stats_;
};

}  // namespace kiln::opencl

#endif  // KILN_PLUGINS_OPENCL_PROGRAM_CACHE_H_
