// The preset table and the status strings as plain C exports, read once per instance by the
// JavaScript API (bindings/js/handles.js). Strings are NUL-terminated UTF-8 in static storage.
// (These were embind bindings: embind's runtime alone was about 17 KB of the package's 77 KB
// gzipped; see the size budget in README.md, "Bundlers".)
#include <emscripten/emscripten.h>

#include "posenc/posenc.hpp"

namespace {

const posenc::PresetInfo& info(int index) {
  return posenc::preset_info(static_cast<posenc::Preset>(index));
}

}  // namespace

extern "C" {

EMSCRIPTEN_KEEPALIVE int posenc_preset_count() {
  return posenc::kPresetCount;
}

// Name ("vaswani", ...) and source file of preset `index` (0 <= index < posenc_preset_count()).
EMSCRIPTEN_KEEPALIVE const char* posenc_preset_name(int index) {
  return info(index).name;
}

EMSCRIPTEN_KEEPALIVE const char* posenc_preset_source(int index) {
  return info(index).source;
}

// The numbers of preset `index`, written to out[0..5]: layout, frequencies, odd (the enum values
// of posenc::Spec), min_dim, first_position, uses_padding_idx (0 or 1). PRESET_FIELDS in
// bindings/js/handles.js names them in this order.
EMSCRIPTEN_KEEPALIVE void posenc_preset_numbers(int index, double* out) {
  const posenc::PresetInfo& p = info(index);
  out[0] = static_cast<double>(p.spec.layout);
  out[1] = static_cast<double>(p.spec.frequencies);
  out[2] = static_cast<double>(p.spec.odd);
  out[3] = static_cast<double>(p.spec.min_dim);
  out[4] = p.first_position;
  out[5] = p.uses_padding_idx ? 1.0 : 0.0;
}

// The argument a posenc::Status is about ("dim", ...; may be empty) and its English message.
EMSCRIPTEN_KEEPALIVE const char* posenc_status_argument(int status) {
  return posenc::status_argument(static_cast<posenc::Status>(status));
}

EMSCRIPTEN_KEEPALIVE const char* posenc_status_message(int status) {
  return posenc::status_message(static_cast<posenc::Status>(status));
}

}  // extern "C"
