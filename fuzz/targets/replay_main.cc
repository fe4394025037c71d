// Runs a fuzz target's LLVMFuzzerTestOneInput over files, for the CTest
// replay of checked-in seeds and crash regressions in builds without
// libFuzzer:  replay DIR_OR_FILE...  (a missing directory is skipped).
// Exits 0 when every input ran; a crash or sanitizer report fails the test.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

int RunFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::printf("replay %s (%zu bytes)\n", path.c_str(), bytes.size());
  std::fflush(stdout);
  // A copy of exactly the file's size, so reads past the end are caught.
  std::vector<uint8_t> exact(bytes.begin(), bytes.end());
  static uint8_t empty = 0;  // libFuzzer never passes NULL
  LLVMFuzzerTestOneInput(exact.empty() ? &empty : exact.data(), exact.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(arg, ec)) {
        if (entry.is_regular_file(ec)) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) ran += RunFile(f);
    } else if (fs::is_regular_file(arg, ec)) {
      ran += RunFile(arg);
    }
  }
  std::printf("%d input(s) replayed\n", ran);
  return 0;
}
