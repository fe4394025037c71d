#include "program_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

namespace kiln::opencl {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'C', 'L', 'P', '\0'};
constexpr uint32_t kFormatVersion = 1;
// magic, format version, identity size, binary size, checksum.
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8;

uint64_t Fnv1a64(const void* data, size_t size, uint64_t hash) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}
constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(v));
  return buf;
}

template <typename T>
void Put(std::vector<uint8_t>* out, T value) {
  const auto* p = reinterpret_cast<const uint8_t*>(&value);
  out->insert(out->end(), p, p + sizeof(T));
}
template <typename T>
T Get(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

uint64_t Checksum(const std::string& identity, const uint8_t* binary,
                  size_t size) {
  return Fnv1a64(binary, size,
                 Fnv1a64(identity.data(), identity.size(), kFnvBasis));
}

bool MakeDirectories(const std::string& dir, std::string* error) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      *error =
          "cannot create directory '" + path + "': " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

bool ReadFile(const std::string& path, std::vector<uint8_t>* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes->assign(std::istreambuf_iterator<char>(in),
                std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

std::string ProgramIdentity(const std::string& source,
                            const std::string& build_options,
                            const DeviceIdentity& device) {
  const uint64_t h1 = Fnv1a64(source.data(), source.size(), kFnvBasis);
  const uint64_t h2 =
      Fnv1a64(source.data(), source.size(), 0x84222325cbf29ce4ULL);
  return "kiln-opencl-program/1\nsource=" + Hex64(h1) + Hex64(h2) +
         " bytes=" + std::to_string(source.size()) +
         "\noptions=" + build_options + "\ndevice=" + device.device_name +
         "\ndriver=" + device.driver_version +
         "\nplatform=" + device.platform_version + "\n";
}

std::string CacheFileName(const std::string& identity) {
  return Hex64(Fnv1a64(identity.data(), identity.size(), kFnvBasis)) +
         Hex64(
             Fnv1a64(identity.data(), identity.size(), 0x84222325cbf29ce4ULL)) +
         ".clbin";
}

std::vector<uint8_t> EncodeCacheFile(const std::string& identity,
                                     const std::vector<uint8_t>& binary) {
  std::vector<uint8_t> out(kMagic, kMagic + sizeof(kMagic));
  Put<uint32_t>(&out, kFormatVersion);
  Put<uint32_t>(&out, static_cast<uint32_t>(identity.size()));
  Put<uint64_t>(&out, binary.size());
  Put<uint64_t>(&out, Checksum(identity, binary.data(), binary.size()));
  out.insert(out.end(), identity.begin(), identity.end());
  out.insert(out.end(), binary.begin(), binary.end());
  return out;
}

bool DecodeCacheFile(const std::vector<uint8_t>& file,
                     const std::string& identity, std::vector<uint8_t>* binary,
                     std::string* why) {
  if (file.size() < kHeaderSize ||
      std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0) {
    *why = "bad magic (not a Kiln OpenCL cache file)";
    return false;
  }
  const uint8_t* p = file.data() + sizeof(kMagic);
  const uint32_t version = Get<uint32_t>(p);
  const uint32_t identity_size = Get<uint32_t>(p + 4);
  const uint64_t binary_size = Get<uint64_t>(p + 8);
  const uint64_t checksum = Get<uint64_t>(p + 16);
  if (version != kFormatVersion) {
    *why = "format version " + std::to_string(version) + ", expected " +
           std::to_string(kFormatVersion);
    return false;
  }
  if (binary_size == 0 ||
      file.size() != kHeaderSize + identity_size + binary_size) {
    *why = "size mismatch (truncated or extended file)";
    return false;
  }
  const uint8_t* stored_identity = file.data() + kHeaderSize;
  if (identity_size != identity.size() ||
      std::memcmp(stored_identity, identity.data(), identity_size) != 0) {
    *why = "stale (built for another source, options, device or driver)";
    return false;
  }
  const uint8_t* payload = stored_identity + identity_size;
  if (Checksum(identity, payload, binary_size) != checksum) {
    *why = "checksum mismatch (corrupt file)";
    return false;
  }
  binary->assign(payload, payload + binary_size);
  return true;
}

bool WriteFileAtomically(const std::string& path,
                         const std::vector<uint8_t>& bytes,
                         std::string* error) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0 &&
      !MakeDirectories(path.substr(0, slash), error)) {
    return false;
  }
  static std::atomic<uint64_t> counter{0};
  const std::string temp = path + ".tmp." + std::to_string(getpid()) + "." +
                           std::to_string(counter.fetch_add(1));
  const int fd =
      open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot create '" + temp + "': " + std::strerror(errno);
    return false;
  }
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = "cannot write '" + temp + "': " + std::strerror(errno);
      close(fd);
      unlink(temp.c_str());
      return false;
    }
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    *error = "cannot flush '" + temp + "': " + std::strerror(errno);
    unlink(temp.c_str());
    return false;
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename '" + temp + "' to '" + path +
             "': " + std::strerror(errno);
    unlink(temp.c_str());
    return false;
  }
  return true;
}

ProgramCache::ProgramCache(const ClApi* cl, cl_context context,
                           cl_device_id device, DeviceIdentity identity,
                           std::string directory, LogFn log)
    : cl_(cl),
      context_(context),
      device_(device),
      identity_(std::move(identity)),
      directory_(std::move(directory)),
      log_(std::move(log)) {}

ProgramCache::~ProgramCache() {
  for (auto& entry : programs_) cl_->clReleaseProgram(entry.second);
}

std::string ProgramCache::BuildLog(cl_program program) {
  size_t size = 0;
  if (cl_->clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0,
                                 nullptr, &size) != CL_SUCCESS ||
      size == 0) {
    return "(no build log)";
  }
  std::string log(size, '\0');
  cl_->clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, size,
                             log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
    log.pop_back();
  }
  return log.empty() ? "(empty build log)" : log;
}

cl_program ProgramCache::BuildFromBinary(const std::vector<uint8_t>& binary,
                                         const std::string& build_options,
                                         std::string* why) {
  const size_t size = binary.size();
  const unsigned char* data = binary.data();
  cl_int binary_status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  cl_program program = cl_->clCreateProgramWithBinary(
      context_, 1, &device_, &size, &data, &binary_status, &err);
  if (program == nullptr || err != CL_SUCCESS || binary_status != CL_SUCCESS) {
    *why = "driver rejected the binary: " +
           ClErrorName(err != CL_SUCCESS ? err : binary_status);
    if (program != nullptr) cl_->clReleaseProgram(program);
    return nullptr;
  }
  err = cl_->clBuildProgram(program, 1, &device_, build_options.c_str(),
                            nullptr, nullptr);
  if (err != CL_SUCCESS) {
    *why = "building from the binary failed: " + ClErrorName(err);
    cl_->clReleaseProgram(program);
    return nullptr;
  }
  return program;
}

cl_program ProgramCache::BuildFromSource(const std::string& label,
                                         const std::string& source,
                                         const std::string& build_options,
                                         std::string* error) {
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int err = CL_SUCCESS;
  cl_program program =
      cl_->clCreateProgramWithSource(context_, 1, &text, &length, &err);
  if (program == nullptr || err != CL_SUCCESS) {
    *error = "clCreateProgramWithSource failed for OpenCL program '" + label +
             "': " + ClErrorName(err);
    return nullptr;
  }
  err = cl_->clBuildProgram(program, 1, &device_, build_options.c_str(),
                            nullptr, nullptr);
  stats_.built_from_source.fetch_add(1);
  if (err != CL_SUCCESS) {
    *error = "building OpenCL program '" + label + "' (options '" +
             build_options + "') for " + identity_.device_name +
             " failed with " + ClErrorName(err) + "; build log:\n" +
             BuildLog(program);
    cl_->clReleaseProgram(program);
    return nullptr;
  }
  return program;
}

cl_program ProgramCache::Get(const std::string& label,
                             const std::string& source,
                             const std::string& build_options,
                             std::string* error) {
  const std::string identity =
      ProgramIdentity(source, build_options, identity_);
  auto found = programs_.find(identity);
  if (found != programs_.end()) {
    stats_.reused_from_memory.fetch_add(1);
    return found->second;
  }
  const std::string path =
      directory_.empty() ? "" : directory_ + "/" + CacheFileName(identity);
  cl_program program = nullptr;
  if (!path.empty()) {
    std::vector<uint8_t> file;
    if (ReadFile(path, &file)) {
      std::vector<uint8_t> binary;
      std::string why;
      if (DecodeCacheFile(file, identity, &binary, &why)) {
        program = BuildFromBinary(binary, build_options, &why);
      }
      if (program != nullptr) {
        stats_.loaded_from_disk.fetch_add(1);
      } else {
        stats_.files_rejected.fetch_add(1);
        log_(KILN_LOG_WARNING,
             "OpenCL program cache file '" + path + "' for program '" + label +
                 "' is unusable (" + why + "); rebuilding it from source");
      }
    }
  }
  if (program == nullptr) {
    program = BuildFromSource(label, source, build_options, error);
    if (program == nullptr) return nullptr;
    if (!path.empty()) {
      size_t size = 0;
      std::vector<uint8_t> binary;
      if (cl_->clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size),
                                &size, nullptr) == CL_SUCCESS &&
          size > 0) {
        binary.resize(size);
        unsigned char* data = binary.data();
        if (cl_->clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(data),
                                  &data, nullptr) != CL_SUCCESS) {
          binary.clear();
        }
      }
      std::string write_error;
      if (binary.empty()) {
        log_(KILN_LOG_WARNING,
             "the OpenCL driver returned no binary for program '" + label +
                 "'; it will be compiled again in the next process");
      } else if (!WriteFileAtomically(path, EncodeCacheFile(identity, binary),
                                      &write_error)) {
        log_(KILN_LOG_WARNING,
             "cannot write the OpenCL program cache (" + write_error +
                 "); set the delegate option cache_dir to a writable "
                 "directory, or cache_dir=none");
      } else {
        stats_.files_written.fetch_add(1);
      }
    }
  }
  programs_.emplace(identity, program);
  return program;
}

}  // namespace kiln::opencl
