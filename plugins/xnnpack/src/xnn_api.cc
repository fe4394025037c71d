// Loads libXNNPACK and libpthreadpool with dlopen (see xnn_api.h).
#define KILN_XNN_NO_REDIRECT
#include "xnn_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

namespace kiln::xnnpack {
namespace {

struct Loaded {
  XnnApi api;
  bool ok = false;
  std::string error;
};

// The library file: $KILN_XNNPACK_LIBRARY (for tests and unusual
// installs), else the runtime package's soname.
std::string LibraryPath(const char* variable, const char* soname) {
  const char* path = std::getenv(variable);
  return path != nullptr && path[0] != '\0' ? path : soname;
}

void* Open(const std::string& path, std::string* error) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = "cannot load " + path + " (" + (why != nullptr ? why : "?") +
             "); install Debian's libxnnpack0 and libpthreadpool0 (or set "
             "KILN_XNNPACK_LIBRARY / KILN_PTHREADPOOL_LIBRARY to the "
             "libraries' paths)";
  }
  return handle;
}

template <typename F>
bool Resolve(void* handle, const char* name, const std::string& path, F* f,
             std::string* error) {
  *f = reinterpret_cast<F>(dlsym(handle, name));
  if (*f == nullptr) {
    *error = path + " has no symbol " + name +
             "; the xnnpack plugin needs libXNNPACK's subgraph API of "
             "2022-02 or newer";
    return false;
  }
  return true;
}

Loaded Load() {
  Loaded l;
  // pthreadpool first: libXNNPACK needs it, and the plugin calls it too.
  const std::string pool_path =
      LibraryPath("KILN_PTHREADPOOL_LIBRARY", "libpthreadpool.so.0");
  void* pool = Open(pool_path, &l.error);
  if (pool == nullptr) return l;
  const std::string xnn_path =
      LibraryPath("KILN_XNNPACK_LIBRARY", "libXNNPACK.so.0");
  void* xnn = Open(xnn_path, &l.error);
  if (xnn == nullptr) return l;
    // The handles stay open for the life of the process: runtimes of other
    // interpreters may still run their code.
#define KILN_XNN_RESOLVE(name) \
  if (!Resolve(xnn, #name, xnn_path, &l.api.name, &l.error)) return l;
  KILN_XNN_FUNCTIONS(KILN_XNN_RESOLVE)
#undef KILN_XNN_RESOLVE
#define KILN_POOL_RESOLVE(name) \
  if (!Resolve(pool, #name, pool_path, &l.api.name, &l.error)) return l;
  KILN_PTHREADPOOL_FUNCTIONS(KILN_POOL_RESOLVE)
#undef KILN_POOL_RESOLVE
  l.ok = true;
  return l;
}

const Loaded& Library() {
  static const Loaded loaded = Load();  // thread-safe, once per process
  return loaded;
}

}  // namespace

bool LoadXnnApi(std::string* error) {
  const Loaded& l = Library();
  if (!l.ok) *error = l.error;
  return l.ok;
}

const XnnApi& Xnn() { return Library().api; }

}  // namespace kiln::xnnpack
