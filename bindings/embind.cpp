// Thin embind layer: raw functions over wasm-memory pointers (passed as numbers). Argument
// checking, options, presets and the copies in and out live in the JavaScript API
// (bindings/js/api.js); every function here still validates through the core and returns a
// posenc::Status code instead of trapping.
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

// A spec held in wasm memory with its frequencies: the JS `encoder()` object and the engine
// behind the one-shot functions.
class EncoderHandle {
 public:
  EncoderHandle(int dim, double base, double min_timescale, int layout, int frequencies, int odd,
                int min_dim)
      : encoder_(make_spec(dim, base, min_timescale, layout, frequencies, odd, min_dim)) {}

  int status() const { return static_cast<int>(encoder_.status()); }

  int encode(double count, double first, double positions, double zero_rows, double out,
             double out_len, double zero_position) const {
    return static_cast<int>(
        encoder_.encode(make_rows(count, first, positions, zero_rows, zero_position),
                        pointer<float>(out), static_cast<std::size_t>(out_len)));
  }

  int add_to(double count, double first, double positions, double zero_rows, double scale,
             double embeddings, double len, double zero_position) const {
    return static_cast<int>(encoder_.add_to(
        make_rows(count, first, positions, zero_rows, zero_position), static_cast<float>(scale),
        pointer<float>(embeddings), static_cast<std::size_t>(len)));
  }

  int concat(double count, double first, double positions, double zero_rows, double embeddings,
             double embeddings_len, double embedding_dim, double out, double out_len,
             double zero_position) const {
    return static_cast<int>(
        encoder_.concat(make_rows(count, first, positions, zero_rows, zero_position),
                        pointer<const float>(embeddings), static_cast<std::size_t>(embeddings_len),
                        static_cast<std::int64_t>(embedding_dim), pointer<float>(out),
                        static_cast<std::size_t>(out_len)));
  }

  int shift_matrix(double k, double out, double out_len) const {
    return static_cast<int>(posenc::shift_matrix(encoder_.spec(), k, pointer<float>(out),
                                                 static_cast<std::size_t>(out_len)));
  }

  int shift_blocks(double k, double out, double out_len) const {
    return static_cast<int>(posenc::shift_blocks(encoder_.spec(), k, pointer<float>(out),
                                                 static_cast<std::size_t>(out_len)));
  }

  int sines() const { return static_cast<int>(encoder_.columns().sines); }

 private:
  posenc::Encoder encoder_;
};

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
  class_<EncoderHandle>("EncoderHandle")
      .constructor<int, double, double, int, int, int, int>()
      .function("status", &EncoderHandle::status)
      .function("encode", &EncoderHandle::encode)
      .function("addTo", &EncoderHandle::add_to)
      .function("concat", &EncoderHandle::concat)
      .function("shiftMatrix", &EncoderHandle::shift_matrix)
      .function("shiftBlocks", &EncoderHandle::shift_blocks)
      .function("sines", &EncoderHandle::sines);
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
