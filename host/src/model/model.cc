#include "model/model.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "model/model_reader.h"

namespace kiln {

Model::~Model() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_size_);
}

absl::StatusOr<std::shared_ptr<const Model>> Model::FromFile(
    const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not block (it is refused below); it
  // changes nothing for a regular file.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(
        "cannot open model file '", path, "': ", std::strerror(errno),
        ". Check the path and permissions."));
  }
  struct stat st {};
  const bool stat_failed = fstat(fd, &st) != 0;
  if (stat_failed || !S_ISREG(st.st_mode)) {
    const int error = errno;
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read model file '", path, "': ",
        stat_failed ? std::strerror(error)
                    : "not a regular file (a directory, FIFO or device)",
        ". Pass the path of a .tflite file."));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": the file is empty (0 bytes), so it is not a "
                     "TFLite model. The file is truncated or was never "
                     "written; convert or download it again."));
  }
  // Read-only private mapping: weights are used in place, never copied.
  void* mapping = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_error = errno;
  close(fd);
  if (mapping == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot memory-map model file '", path, "' (", size, " bytes): ",
        std::strerror(map_error), ". Check free address space and ulimit -v."));
  }
  return ModelReader::Read(static_cast<const uint8_t*>(mapping), size, path,
                           mapping, size);
}

absl::StatusOr<std::shared_ptr<const Model>> Model::FromBuffer(
    const void* data, size_t size, std::string label) {
  if (data == nullptr && size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": model buffer is null but its size is ", size));
  }
  return ModelReader::Read(static_cast<const uint8_t*>(data), size,
                           std::move(label), nullptr, 0);
}

}  // namespace kiln
