#include "npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
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

// Value of 'key': ... in the header dict (a Python literal).
absl::StatusOr<std::string> DictValue(const std::string& header,
                                      const std::string& key,
                                      const std::string& label) {
  const std::string needle = "'" + key + "':";
  size_t pos = header.find(needle);
  if (pos == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": .npy header has no '", key, "' entry"));
  }
  pos += needle.size();
  while (pos < header.size() && header[pos] == ' ') ++pos;
  if (pos >= header.size()) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": bad .npy header"));
  }
  if (header[pos] == '\'') {
    size_t end = header.find('\'', pos + 1);
    if (end == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": bad .npy header"));
    }
    return header.substr(pos + 1, end - pos - 1);
  }
  if (header[pos] == '(') {
    size_t end = header.find(')', pos);
    if (end == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": bad .npy header"));
    }
    return header.substr(pos, end - pos + 1);
  }
  size_t end = header.find_first_of(",}", pos);
  return header.substr(pos, end - pos);
}

}  // namespace

std::string NpyDescr(KilnTensorType type) {
  for (const DescrEntry& e : kDescrs) {
    if (e.type == type) return e.descr;
  }
  return "";
}

namespace {

// The header dict text of a .npy file and the offset of its data.
struct NpyHeader {
  std::string dict;
  size_t data_offset = 0;
};

absl::StatusOr<NpyHeader> ReadHeader(const std::string& bytes,
                                     const std::string& label) {
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": not a .npy file (missing \\x93NUMPY magic)"));
  }
  const uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) |
                 (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      return absl::InvalidArgumentError(absl::StrCat(label, ": truncated"));
    }
    for (int i = 0; i < 4; ++i) {
      header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
                    << (8 * i);
    }
    offset = 12;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": unsupported .npy format version ", major));
  }
  if (offset + header_len > bytes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": truncated .npy header"));
  }
  return NpyHeader{bytes.substr(offset, header_len), offset + header_len};
}

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

// "(2, 3)" -> {2, 3}.
absl::StatusOr<std::vector<int32_t>> ParseShape(const std::string& shape,
                                                const std::string& label) {
  const std::string dims = std::string(absl::StripSuffix(
      absl::StripPrefix(absl::StripAsciiWhitespace(shape), "("), ")"));
  std::vector<int32_t> out;
  for (absl::string_view part :
       absl::StrSplit(dims, ',', absl::SkipWhitespace())) {
    int32_t v = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &v) || v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": bad shape entry '", part, "'"));
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

absl::StatusOr<NpyArray> ParseNpy(const std::string& bytes,
                                  const std::string& label) {
  KILN_ASSIGN_OR_RETURN(const NpyHeader header, ReadHeader(bytes, label));
  KILN_ASSIGN_OR_RETURN(const std::string descr,
                        DictValue(header.dict, "descr", label));
  KILN_ASSIGN_OR_RETURN(const std::string order,
                        DictValue(header.dict, "fortran_order", label));
  KILN_ASSIGN_OR_RETURN(const std::string shape,
                        DictValue(header.dict, "shape", label));
  if (absl::StripAsciiWhitespace(order) != "False") {
    return absl::InvalidArgumentError(
        absl::StrCat(label,
                     ": Fortran-order arrays are not supported; save with "
                     "np.ascontiguousarray"));
  }
  KILN_ASSIGN_OR_RETURN(const DescrEntry* entry, FindDescr(descr, label));
  NpyArray out;
  out.type = entry->type;
  KILN_ASSIGN_OR_RETURN(out.shape, ParseShape(shape, label));
  int64_t count = 1;
  for (int32_t d : out.shape) count *= d;
  const size_t need = static_cast<size_t>(count) * entry->size;
  if (bytes.size() - header.data_offset != need) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": holds ", bytes.size() - header.data_offset,
                     " data bytes but its shape and dtype need ", need));
  }
  out.data.assign(
      bytes.begin() + static_cast<std::ptrdiff_t>(header.data_offset),
      bytes.end());
  return out;
}

absl::StatusOr<NpyArray> ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  }
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  return ParseNpy(bytes, path);
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
