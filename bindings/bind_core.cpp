// What the core hands JavaScript besides its classes: its limits (constant), the enums of a spec
// (enum_, in the core's order and under the names the JavaScript API uses), the preset table and
// the error description (value_object). bindings/js/core.js reads them once per instance, so no
// limit, enum order or preset is restated in JavaScript.
#include <emscripten/bind.h>
#include <malloc.h>

#include <string>

#include "binding_values.hpp"
#include "posenc/sinusoidal/presets.hpp"
#include "posenc/sinusoidal/spec.hpp"

namespace posenc_bindings {

// A preset as JavaScript reads it: its spec (dim 0), first position, whether fairseq's paddingIdx
// sets that position.
struct PresetValue {
  std::string name;
  std::string source;
  SpecValue spec;
  double firstPosition = 0;
  bool usesPaddingIdx = false;
};

namespace {

PresetValue preset(int index) {
  if (index < 0 || index >= posenc::kPresetCount) return {};
  const posenc::PresetInfo& p = posenc::preset_info(static_cast<posenc::Preset>(index));
  SpecValue spec;
  spec.dim = 0;
  spec.base = p.spec.base;
  spec.minTimescale = p.spec.min_timescale;
  spec.layout = p.spec.layout;
  spec.frequencies = p.spec.frequencies;
  spec.odd = p.spec.odd;
  spec.minDim = static_cast<int>(p.spec.min_dim);
  spec.exactFrequencies = p.spec.exact_frequencies;
  return {p.name, p.source, spec, p.first_position, p.uses_padding_idx};
}

// Bytes of the wasm heap in use (mallinfo().uordblks, which emmalloc computes by walking its
// regions): lets tests check that calls and create/dispose cycles give back what they take. For
// tests only: it is linear in the number of heap regions.
int heap_in_use() {
  return static_cast<int>(mallinfo().uordblks);
}

#ifdef __EMSCRIPTEN_PTHREADS__
// threads in all, the caller's included (1..16): false if the pool could not be resized.
bool set_threads(int threads) {
  return thread_pool()->resize(threads);
}
#endif

}  // namespace

#ifdef __EMSCRIPTEN_PTHREADS__
posenc::ThreadPool* thread_pool() {
  static posenc::ThreadPool pool;
  return &pool;
}
#endif

}  // namespace posenc_bindings

EMSCRIPTEN_BINDINGS(posenc_core) {
  using namespace emscripten;
  using namespace posenc_bindings;

  constant("MAX_DIM", static_cast<double>(posenc::kMaxDim));
  constant("MAX_POSITION", posenc::kMaxPosition);
  constant("MAX_ELEMENTS", static_cast<double>(posenc::kMaxElements));
  constant("PRESET_COUNT", posenc::kPresetCount);

  enum_<posenc::Layout>("Layout")
      .value("interleaved", posenc::Layout::interleaved)
      .value("split", posenc::Layout::split);
  enum_<posenc::Frequencies>("Frequencies")
      .value("paper", posenc::Frequencies::paper)
      .value("half", posenc::Frequencies::half);
  enum_<posenc::OddDim>("OddDim")
      .value("paper", posenc::OddDim::paper)
      .value("zero-pad", posenc::OddDim::zero_pad)
      .value("reject", posenc::OddDim::reject);

  value_object<ErrorInfo>("ErrorInfo")
      .field("argument", &ErrorInfo::argument)
      .field("message", &ErrorInfo::message);

  value_object<SpecValue>("Spec")
      .field("dim", &SpecValue::dim)
      .field("base", &SpecValue::base)
      .field("minTimescale", &SpecValue::minTimescale)
      .field("layout", &SpecValue::layout)
      .field("frequencies", &SpecValue::frequencies)
      .field("odd", &SpecValue::odd)
      .field("minDim", &SpecValue::minDim)
      .field("exactFrequencies", &SpecValue::exactFrequencies);

  value_object<PresetValue>("Preset")
      .field("name", &PresetValue::name)
      .field("source", &PresetValue::source)
      .field("spec", &PresetValue::spec)
      .field("firstPosition", &PresetValue::firstPosition)
      .field("usesPaddingIdx", &PresetValue::usesPaddingIdx);
  function("preset", &preset);

  function("heapInUse", &heap_in_use);
#ifdef __EMSCRIPTEN_PTHREADS__
  function("setThreads", &set_threads);
#endif
}
