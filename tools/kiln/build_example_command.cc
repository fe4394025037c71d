// `kiln build-example OUT.tflite [--large-weights-mb N [--external-data]]`:
// writes a model made by Kiln's model builder, so Kiln can be tried with no
// download. The default is a small CNN (see host/src/model/example_models.h).
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "model/example_models.h"

namespace kiln::cli {

int BuildExampleCommand(std::vector<std::string> args) {
  std::string out;
  uint64_t large_mb = 0;
  bool external = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout
          << "usage: kiln build-example OUT.tflite [--large-weights-mb N "
             "[--external-data]]\n"
             "Writes a small example CNN (input 'image' [1,16,16,3] float32,\n"
             "output 'probabilities' [1,10]), or with --large-weights-mb a\n"
             "chain of FULLY_CONNECTED layers holding at least N MiB of\n"
             "weights (--external-data stores them after the FlatBuffer).\n";
      return 0;
    } else if (a == "--large-weights-mb" && i + 1 < args.size()) {
      try {
        large_mb = std::stoull(args[++i]);
      } catch (...) {
        std::cerr << "kiln build-example: --large-weights-mb needs a number\n";
        return 2;
      }
    } else if (a == "--external-data") {
      external = true;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "kiln build-example: unknown option '" << a << "'\n";
      return 2;
    } else if (out.empty()) {
      out = a;
    } else {
      std::cerr << "kiln build-example: unexpected argument '" << a << "'\n";
      return 2;
    }
  }
  if (out.empty()) {
    std::cerr << "kiln build-example: missing OUT.tflite\n";
    return 2;
  }
  absl::StatusOr<std::vector<uint8_t>> bytes =
      large_mb > 0 ? BuildLargeWeightsModel(large_mb << 20, external)
                   : BuildExampleCnnModel();
  if (!bytes.ok()) {
    std::cerr << "kiln build-example: " << bytes.status().message() << "\n";
    return 1;
  }
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes->data()),
          static_cast<std::streamsize>(bytes->size()));
  if (!f) {
    std::cerr << "kiln build-example: cannot write '" << out << "'\n";
    return 1;
  }
  std::cout << "wrote " << out << " (" << bytes->size() << " bytes)\n";
  return 0;
}

}  // namespace kiln::cli
