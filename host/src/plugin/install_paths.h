// Where an installed Kiln finds its default plugin directory at run time.
//
// Nothing here depends on the configure-time install prefix: the directory is
// derived from where the host code itself was loaded from, so a .deb, a
// `cmake --install --prefix ANYWHERE` tree (moved afterwards or not) and a
// Python wheel all find the plugins installed with them.
//
//   - Host code inside a shared library (libkiln.so, as applications and the
//     Python package load it): <directory of that library>/kiln/plugins.
//     The plugins are installed under the same libdir (KILN_PLUGIN_INSTALL_DIR
//     = <libdir>/kiln/plugins).
//   - Host code linked statically into an executable (the `kiln` CLI, the
//     tests): <directory of the executable>/<bindir-to-libdir>/kiln/plugins,
//     where <bindir-to-libdir> is the RELATIVE path from the install bindir to
//     the install libdir at configure time (e.g. "../lib" or
//     "../lib/x86_64-linux-gnu"). When that directory does not exist and the
//     relative path is not "../lib", <executable dir>/../lib/kiln/plugins is
//     tried next (the build tree, which always uses bin/ and lib/).
#ifndef KILN_HOST_PLUGIN_INSTALL_PATHS_H_
#define KILN_HOST_PLUGIN_INSTALL_PATHS_H_

#include <string>

namespace kiln {

struct DefaultPluginDirectoryLookup {
  // The default plugin directory; the first candidate when none exists.
  std::string directory;
  bool exists = false;
  // How `directory` was derived, for `kiln version` and the C API, e.g.
  // "beside libkiln (/usr/lib/x86_64-linux-gnu/libkiln.so.1)".
  std::string origin;
};

// Computed on first use and then fixed for the life of the process; safe to
// call from any thread. The returned reference stays valid until exit.
const DefaultPluginDirectoryLookup& LocateDefaultPluginDirectory();

}  // namespace kiln

#endif  // KILN_HOST_PLUGIN_INSTALL_PATHS_H_
