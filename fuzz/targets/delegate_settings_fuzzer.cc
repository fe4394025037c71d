// Fuzz target: delegate settings, from the user's file to the plugin.
//  - the host's reader (plugin/settings_schema.h) of a --delegate-settings
//    file, text or binary, as kiln.DelegateSettings;
//  - the SDK's header-only reader plugins use (kiln/sdk/delegate_settings.h).
// Property checked besides "no crash": whatever the host accepts and hands
// to a delegate, the SDK reader decodes (a delegate must never receive
// settings its own reader refuses).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "fuzz_input.h"
#include "kiln/sdk/delegate_settings.h"
#include "plugin/settings_schema.h"

namespace {

void CheckSdkReads(const std::string& bytes) {
  kiln::sdk::DelegateSettings settings;
  std::string error;
  if (!kiln::sdk::ParseDelegateSettings(
          reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
          &settings, &error)) {
    std::abort();  // the host accepted settings the SDK cannot read
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<const kiln::SettingsSchema> schema =
      kiln::SettingsSchema::DelegateSettings();
  kiln::fuzz::FuzzInput in(data, size);
  // Which file name the settings arrive under decides text or binary.
  static const char* const kNames[] = {"s.txtpb", "s.binpb", "settings"};
  const char* name = kNames[in.Read<uint8_t>() % 3];
  const std::string contents = in.Rest();

  // The SDK reader on the raw bytes: may refuse, must not crash.
  kiln::sdk::DelegateSettings raw;
  std::string error;
  (void)kiln::sdk::ParseDelegateSettings(
      reinterpret_cast<const uint8_t*>(contents.data()), contents.size(), &raw,
      &error);

  absl::StatusOr<std::string> parsed = schema->ParseFile(name, contents);
  if (parsed.ok()) CheckSdkReads(*parsed);
  absl::StatusOr<std::string> binary = schema->ParseBinary(contents);
  if (binary.ok()) CheckSdkReads(*binary);
  return 0;
}
