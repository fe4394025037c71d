#include "cli_common.h"

namespace kiln::cli {

bool ParsePluginFlags(std::vector<std::string>& args,
                      PluginSearchConfig* config, std::string* error) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--plugin" || a == "--plugin-dir") {
      if (i + 1 >= args.size()) {
        *error = a + " needs a value";
        return false;
      }
      (a == "--plugin" ? config->paths : config->directories)
          .push_back(args[++i]);
    } else if (a.rfind("--plugin=", 0) == 0) {
      config->paths.push_back(a.substr(9));
    } else if (a.rfind("--plugin-dir=", 0) == 0) {
      config->directories.push_back(a.substr(13));
    } else if (a == "--no-default-plugins") {
      config->use_default_locations = false;
    } else {
      rest.push_back(a);
    }
  }
  args = std::move(rest);
  return true;
}

}  // namespace kiln::cli
