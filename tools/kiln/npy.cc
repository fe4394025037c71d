#include "npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"

namespace kiln::cli {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct DescrEntry {
  const char* descr;
  KilnTensorType type;
  size_t size;
};

constexpr DescrEntry kDescrs[] = {
    {"<f4", KILN_TYPE_FLOAT32, 4},   {"<f2", KILN_TYPE_FLOAT16, 2},
    {"<f8", KILN_TYPE_FLOAT64, 8},   {"<i4", KILN_TYPE_INT32, 4},
    {"<i8", KILN_TYPE_INT64, 8},     {"<i2", KILN_TYPE_INT16, 2},
    {"|i1", KILN_TYPE_INT8, 1},      {"|u1", KILN_TYPE_UINT8, 1},
    {"<u2", KILN_TYPE_UINT16, 2},    {"<u4", KILN_TYPE_UINT32, 4},
    {"<u8", KILN_TYPE_UINT64, 8},    {"|b1", KILN_TYPE_BOOL, 1},
    {"<c8", KILN_TYPE_COMPLEX64, 8},
};

}  // namespace

std::string NpyDescr(KilnTensorType type) {
  for (const DescrEntry& e : kDescrs) {
    if (e.type == type) return e.descr;
  }
  return "";
}

namespace {

// numpy writes headers of a few hundred bytes; a larger one is not a .npy
// file we read.
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;

// The fixed part before the header dict: magic, version, header length.
struct NpyPrefix {
  size_t size = 0;        // 10 (version 1) or 12 (versions 2 and 3)
  size_t header_len = 0;  // bytes of the dict and its padding
};

absl::Status BadNpy(const std::string& label, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      label, ": not a valid .npy file: ", what, ". Write it with numpy.save."));
}

// `bytes`: at least the first 12 bytes of the file, or all of a shorter one.
absl::StatusOr<NpyPrefix> ReadPrefix(absl::string_view bytes,
                                     const std::string& label) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != absl::string_view(kMagic, 6)) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": not a .npy file (missing \\x93NUMPY magic)"));
  }
  const uint8_t major = static_cast<uint8_t>(bytes[6]);
  NpyPrefix p;
  if (major == 1) {
    p.header_len = static_cast<uint8_t>(bytes[8]) |
                   (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    p.size = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return BadNpy(label, "truncated header length");
    for (int i = 0; i < 4; ++i) {
      p.header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
                      << (8 * i);
    }
    p.size = 12;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": unsupported .npy format version ", major));
  }
  if (p.header_len > kMaxHeaderBytes) {
    return BadNpy(label, absl::StrCat("its header claims ", p.header_len,
                                      " bytes (numpy writes a few hundred)"));
  }
  return p;
}

// The header dict, a Python literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// followed by spaces and a newline. Parsed strictly: exactly those three
// keys, each once, and nothing else after the closing brace.
class HeaderParser {
 public:
  HeaderParser(absl::string_view text, const std::string& label)
      : text_(text), label_(label) {}

  absl::Status Parse() {
    SkipSpaces();
    if (!Eat('{')) return Bad("the header does not start with '{'");
    SkipSpaces();
    while (!Eat('}')) {
      std::string key;
      KILN_RETURN_IF_ERROR(ParseString(&key));
      SkipSpaces();
      if (!Eat(':')) return Bad(absl::StrCat("no ':' after '", key, "'"));
      SkipSpaces();
      if (key == "descr" && !has_descr_) {
        KILN_RETURN_IF_ERROR(ParseString(&descr));
        has_descr_ = true;
      } else if (key == "fortran_order" && !has_order_) {
        KILN_RETURN_IF_ERROR(ParseBool(&fortran_order));
        has_order_ = true;
      } else if (key == "shape" && !has_shape_) {
        KILN_RETURN_IF_ERROR(ParseShape());
        has_shape_ = true;
      } else {
        return Bad(absl::StrCat("unexpected or repeated key '", key,
                                "' in the header (numpy writes descr, "
                                "fortran_order and shape)"));
      }
      SkipSpaces();
      if (Eat(',')) {
        SkipSpaces();
      } else if (Peek() != '}') {
        return Bad("expected ',' or '}' in the header");
      }
    }
    if (!has_descr_ || !has_order_ || !has_shape_) {
      return Bad("the header lacks one of descr, fortran_order and shape");
    }
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) {
      ++pos_;
    }
    if (pos_ != text_.size()) {
      return Bad("unexpected bytes after the header dict");
    }
    return absl::OkStatus();
  }

  std::string descr;
  bool fortran_order = false;
  std::vector<int32_t> shape;

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }
  void SkipSpaces() {
    while (Peek() == ' ') ++pos_;
  }
  absl::Status Bad(absl::string_view what) const {
    return BadNpy(label_, what);
  }
  absl::Status ParseString(std::string* out) {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Bad("expected a quoted string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == absl::string_view::npos) return Bad("unterminated string");
    *out = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return absl::OkStatus();
  }
  absl::Status ParseBool(bool* out) {
    for (const auto& [word, value] :
         {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_, strlen(word)) == word) {
        pos_ += strlen(word);
        *out = value;
        return absl::OkStatus();
      }
    }
    return Bad("fortran_order is neither True nor False");
  }
  // "(2, 3)", "(4,)" or "()".
  absl::Status ParseShape() {
    if (!Eat('(')) return Bad("shape is not a tuple");
    SkipSpaces();
    while (!Eat(')')) {
      const size_t start = pos_;
      while (Peek() >= '0' && Peek() <= '9') ++pos_;
      int32_t dim = 0;
      if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), &dim)) {
        return Bad(absl::StrCat("bad shape entry '",
                                text_.substr(start, pos_ - start + 1),
                                "' (dimensions are integers below 2^31)"));
      }
      shape.push_back(dim);
      SkipSpaces();
      if (Eat(',')) {
        SkipSpaces();
      } else if (Peek() != ')') {
        return Bad("expected ',' or ')' in the shape");
      }
    }
    return absl::OkStatus();
  }

  absl::string_view text_;
  const std::string& label_;
  size_t pos_ = 0;
  bool has_descr_ = false, has_order_ = false, has_shape_ = false;
};

// The dtype table entry for a header's 'descr' value.
absl::StatusOr<const DescrEntry*> FindDescr(const std::string& descr,
                                            const std::string& label) {
  std::string d = descr;
  if (d.size() == 3 && d[0] == '=') d[0] = '<';
  if (d == "<b1" || d == "<i1" || d == "<u1") d[0] = '|';
  for (const DescrEntry& e : kDescrs) {
    if (d == e.descr) return &e;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(label, ": unsupported dtype '", descr,
                   "' (supported: little-endian float16/32/64, int8/16/32/64, "
                   "uint8/16/32/64, bool, complex64)"));
}

// Parses the header dict and checks that `file_size` bytes hold exactly
// its data after it.
absl::StatusOr<NpyHeaderInfo> ParseHeader(absl::string_view dict,
                                          uint64_t data_offset,
                                          uint64_t file_size,
                                          const std::string& label) {
  HeaderParser parser(dict, label);
  KILN_RETURN_IF_ERROR(parser.Parse());
  if (parser.fortran_order) {
    return absl::InvalidArgumentError(
        absl::StrCat(label,
                     ": Fortran-order arrays are not supported; save with "
                     "np.ascontiguousarray"));
  }
  KILN_ASSIGN_OR_RETURN(const DescrEntry* entry,
                        FindDescr(parser.descr, label));
  NpyHeaderInfo info;
  info.path = label;
  info.type = entry->type;
  info.shape = std::move(parser.shape);
  info.data_offset = data_offset;
  uint64_t need = entry->size;
  for (int32_t d : info.shape) {
    if (__builtin_mul_overflow(need, static_cast<uint64_t>(d), &need)) {
      return BadNpy(label, "its shape's size does not fit in 64 bits");
    }
  }
  const uint64_t held = file_size - data_offset;
  if (held != need) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": holds ", held, " data bytes but its shape (",
        absl::StrJoin(info.shape, ", "), ") and dtype '", parser.descr,
        "' need ", need,
        held > need ? " (trailing bytes after the data)" : " (truncated)"));
  }
  info.data_bytes = need;
  return info;
}

// A file descriptor closed when it goes out of scope.
class FileCloser {
 public:
  explicit FileCloser(int fd) : fd_(fd) {}
  ~FileCloser() {
    if (fd_ >= 0) close(fd_);
  }
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;

 private:
  int fd_;
};

// Reads `size` bytes at `offset` of `fd` into `out`.
absl::Status ReadAt(int fd, uint64_t offset, size_t size, char* out,
                    const std::string& label) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n =
        pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::DataLossError(absl::StrCat(
          "cannot read '", label,
          "': ", n < 0 ? std::strerror(errno) : "the file shrank while read"));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Opens `path` for reading if it is a regular file; its size in *size.
absl::StatusOr<int> OpenRegularFile(const std::string& path, uint64_t* size) {
  // O_NONBLOCK: a FIFO must not block the open.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("'", path,
                     "' is not a regular file (a directory, FIFO or device); "
                     "pass a .npy file"));
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace

absl::StatusOr<NpyArray> ParseNpy(const std::string& bytes,
                                  const std::string& label) {
  KILN_ASSIGN_OR_RETURN(const NpyPrefix prefix, ReadPrefix(bytes, label));
  if (prefix.size + prefix.header_len > bytes.size()) {
    return BadNpy(label, "truncated header");
  }
  KILN_ASSIGN_OR_RETURN(
      const NpyHeaderInfo info,
      ParseHeader(
          absl::string_view(bytes).substr(prefix.size, prefix.header_len),
          prefix.size + prefix.header_len, bytes.size(), label));
  NpyArray out;
  out.type = info.type;
  out.shape = info.shape;
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(info.data_offset),
                  bytes.end());
  return out;
}

absl::StatusOr<NpyHeaderInfo> ReadNpyHeader(const std::string& path) {
  uint64_t size = 0;
  KILN_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path, &size));
  FileCloser closer(fd);
  std::string prefix_bytes(static_cast<size_t>(std::min<uint64_t>(size, 12)),
                           '\0');
  KILN_RETURN_IF_ERROR(
      ReadAt(fd, 0, prefix_bytes.size(), prefix_bytes.data(), path));
  KILN_ASSIGN_OR_RETURN(const NpyPrefix prefix, ReadPrefix(prefix_bytes, path));
  if (prefix.size + prefix.header_len > size) {
    return BadNpy(path, "truncated header");
  }
  std::string dict(prefix.header_len, '\0');
  KILN_RETURN_IF_ERROR(ReadAt(fd, prefix.size, dict.size(), dict.data(), path));
  return ParseHeader(dict, prefix.size + prefix.header_len, size, path);
}

absl::StatusOr<NpyArray> ReadNpyData(const NpyHeaderInfo& header) {
  uint64_t size = 0;
  KILN_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(header.path, &size));
  FileCloser closer(fd);
  if (size != header.data_offset + header.data_bytes) {
    return absl::DataLossError(
        absl::StrCat("'", header.path, "' changed while it was read"));
  }
  NpyArray out;
  out.type = header.type;
  out.shape = header.shape;
  out.data.resize(static_cast<size_t>(header.data_bytes));
  KILN_RETURN_IF_ERROR(ReadAt(fd, header.data_offset, out.data.size(),
                              reinterpret_cast<char*>(out.data.data()),
                              header.path));
  return out;
}

absl::StatusOr<NpyArray> ReadNpy(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(const NpyHeaderInfo header, ReadNpyHeader(path));
  return ReadNpyData(header);
}

std::string SerializeNpy(const NpyArray& array) {
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i) {
    absl::StrAppend(&shape, array.shape[i], ",");
    if (i + 1 < array.shape.size()) shape += " ";
  }
  if (array.shape.size() > 1) shape.pop_back();
  shape += ")";
  std::string header =
      absl::StrCat("{'descr': '", NpyDescr(array.type),
                   "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad with spaces so that magic + len + header + '\n' is 64-aligned.
  const bool v2 = header.size() + 11 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const size_t len = header.size();
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>((len >> 8) & 0xFF);
  if (v2) {
    out += static_cast<char>((len >> 16) & 0xFF);
    out += static_cast<char>((len >> 24) & 0xFF);
  }
  out += header;
  out.append(reinterpret_cast<const char*>(array.data.data()),
             array.data.size());
  return out;
}

absl::Status WriteNpy(const std::string& path, const NpyArray& array) {
  if (NpyDescr(array.type).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write '", path, "': tensor type ", array.type,
                     " has no .npy dtype"));
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write '", path, "'"));
  }
  const std::string bytes = SerializeNpy(array);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    return absl::DataLossError(absl::StrCat("short write to '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace kiln::cli
