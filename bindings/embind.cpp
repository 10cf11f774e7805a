// Thin embind layer for what is called once per instance: the preset table, status strings and
// fairseq positions. The per-call hot path (encoders) is plain C exports in exports.cpp, which
// JavaScript calls without embind's per-call marshalling. Argument checking, options and the
// copies in and out live in the JavaScript API (bindings/js/api.js).
#include <emscripten/bind.h>

#include <cstdint>
#include <memory>
#include <string>

#include "posenc/posenc.hpp"

namespace {

using posenc::Status;

template <class T>
T* pointer(double address) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(address));
}

posenc::Spec make_spec(int dim, double base, double min_timescale, int layout, int frequencies,
                       int odd, int min_dim) {
  posenc::Spec s;
  s.dim = dim;
  s.base = base;
  s.min_timescale = min_timescale;
  s.layout = static_cast<posenc::Layout>(layout);
  s.frequencies = static_cast<posenc::Frequencies>(frequencies);
  s.odd = static_cast<posenc::OddDim>(odd);
  s.min_dim = min_dim;
  return s;
}

posenc::RowPositions make_rows(double count, double first_position, double positions_ptr,
                               double zero_rows_ptr, double zero_position) {
  posenc::RowPositions rows;
  rows.count = static_cast<std::int64_t>(count);
  rows.first_position = first_position;
  rows.positions = pointer<const double>(positions_ptr);
  rows.zero_rows = pointer<const std::uint8_t>(zero_rows_ptr);
  rows.zero_position = zero_position;
  return rows;
}

int positions_from_padding_mask(double mask, double count, double padding_idx, double previous,
                                double out) {
  return static_cast<int>(posenc::positions_from_padding_mask(
      pointer<const std::uint8_t>(mask), static_cast<std::int64_t>(count),
      static_cast<std::int64_t>(padding_idx), static_cast<std::int64_t>(previous),
      pointer<double>(out)));
}

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
  function("positionsFromPaddingMask", &positions_from_padding_mask);
  function("statusArgument", &status_argument);
  function("statusMessage", &status_message);
}
