// Thin embind layer for what is called once per instance: the preset table and status strings. The
// per-call hot path (encoders) is plain C exports in exports.cpp, which JavaScript calls without
// embind's per-call marshalling. Argument checking, options and the copies in and out live in the
// JavaScript API (bindings/js/api.js).
#include <emscripten/bind.h>

#include <cstdint>
#include <string>

#include "posenc/posenc.hpp"

namespace {

using posenc::Status;

std::string status_argument(int s) {
  return posenc::status_argument(static_cast<Status>(s));
}
std::string status_message(int s) {
  return posenc::status_message(static_cast<Status>(s));
}

struct PresetRecord {
  std::string name;
  std::string source;
  int layout;
  int frequencies;
  int odd;
  int min_dim;
  double first_position;
  bool uses_padding_idx;
};

PresetRecord preset_record(int index) {
  const posenc::PresetInfo& p = posenc::preset_info(static_cast<posenc::Preset>(index));
  return {p.name,
          p.source,
          static_cast<int>(p.spec.layout),
          static_cast<int>(p.spec.frequencies),
          static_cast<int>(p.spec.odd),
          static_cast<int>(p.spec.min_dim),
          p.first_position,
          p.uses_padding_idx};
}

int preset_count() {
  return posenc::kPresetCount;
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc) {
  using namespace emscripten;
  value_object<PresetRecord>("PresetRecord")
      .field("name", &PresetRecord::name)
      .field("source", &PresetRecord::source)
      .field("layout", &PresetRecord::layout)
      .field("frequencies", &PresetRecord::frequencies)
      .field("odd", &PresetRecord::odd)
      .field("minDim", &PresetRecord::min_dim)
      .field("firstPosition", &PresetRecord::first_position)
      .field("usesPaddingIdx", &PresetRecord::uses_padding_idx);
  function("presetCount", &preset_count);
  function("presetRecord", &preset_record);
  function("statusArgument", &status_argument);
  function("statusMessage", &status_message);
}
