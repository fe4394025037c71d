// libkiln.so is kiln_core linked whole; this file only gives the shared
// library target a source of its own.
namespace kiln {
void LibKilnAnchor() {}
}  // namespace kiln
