// The rotary, ALiBi and 2D sin-cos families for JavaScript (embind): the classes `Rotary`,
// `Alibi` and `Sincos2d`. The JS side (bindings/js/rotary.js, alibi.js, sincos2d.js) checks
// arguments, writes each call's numbers as one record of doubles into the instance's scratch
// region and passes its address (one argument: 3.1.6's embind converts every argument through a
// generic invoker under DYNAMIC_EXECUTION=0, tens of nanoseconds each), moves rows through the
// scratch region in chunks, one call per chunk, and copies results into JS-owned arrays.
//
// Conventions: addresses are std::uintptr_t offsets into wasm memory; every fallible call returns
// 0 or a posenc::EncodingStatus code, and errorArgument() / errorMessage() describe the last
// failure of that object. No state outside the objects.
#include <emscripten/bind.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "binding_values.hpp"
#include "posenc/alibi.hpp"
#include "posenc/rotary/models.hpp"
#include "posenc/rotary/rotary.hpp"
#include "posenc/rotary/spec.hpp"
#include "posenc/sincos2d.hpp"

namespace {

template <class T>
T* at(double address) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(address));
}

// The last error of an object. Each bound class declares its own errorArgument / errorMessage:
// embind registers a member function under the class its pointer names, and a base class that is
// not bound itself would leave the method pending forever.
class Errors {
 public:
  int keep(const posenc::EncodingError& e) {
    if (!e.ok()) last_ = e;
    return static_cast<int>(e.status);
  }
  const posenc::EncodingError& last() const { return last_; }

 private:
  posenc::EncodingError last_;
};

#define POSENC_ERROR_METHODS          \
  std::string errorArgument() const { \
    return last().argument;           \
  }                                   \
  std::string errorMessage() const {  \
    return last().message;            \
  }

// The options of a rotary embedding, written by rotary.js as doubles (NaN: not given, for the
// overrides of a config).
enum RotaryField {
  kHeadDim,
  kBase,
  kRotaryDim,
  kLayout,       // 0 half, 1 interleaved
  kScalingType,  // posenc::RopeScalingType
  kFactor,
  kOriginalMax,
  kLowFreq,
  kHighFreq,
  kBetaFast,
  kBetaSlow,
  kAttention,  // NaN: HF's default
  kMscale,
  kMscaleAllDim,
  kTruncate,
  kShortFactor,  // address of kFactorCount doubles, or 0
  kLongFactor,
  kFactorCount,
  kLayer,      // the decoder layer of a config, or NaN
  kModelRule,  // 1: read an unknown model_type by Llama's rule
  kVision,     // posenc::VisionRope of an explicit spec (0: none)
  kRotaryFields
};

// What initConfig / describeConfig write about the config's layer (layerInfo).
enum LayerField {
  kLHasRope,
  kLNumLayers,
  kLLayersDiffer,
  kLSlidingWindow,
  kLAttentionChunk,
  kLLinearAttention,
  kLQueryTemperature,
  kLFloorScale,
  kLAttnScale,
  kLSoftmaxScaleFactor,
  kLMropeT,
  kLMropeH,
  kLMropeW,
  kLMropeInterleaved,
  kLBidirectional,
  kLayerFields
};

bool given(double v) {
  return !std::isnan(v);
}

// The rows of an apply / cosSin call (rotary.js writes them).
enum RowsField {
  kCount,
  kFirst,
  kPositions,
  kSequenceLength,
  kHeads,
  kOut,
  kOutLen,
  kOut2,
  kMropePositions,  // address of 3 * count doubles (t, h, w rows), or 0
  kHeadsFirst,      // apply: 1 when the rows at kOut are [heads, count, head_dim] ('bhsd')
  kRowsFields
};

class Rotary : public Errors {
 public:
  POSENC_ERROR_METHODS

  // Explicit options (float64 frequencies).
  int init(std::uintptr_t options) {
    const double* o = reinterpret_cast<const double*>(options);
    posenc::RotarySpec spec;
    spec.head_dim = static_cast<std::int64_t>(o[kHeadDim]);
    spec.base = o[kBase];
    spec.rotary_dim = static_cast<std::int64_t>(o[kRotaryDim]);
    spec.layout = static_cast<posenc::RotaryLayout>(static_cast<int>(o[kLayout]));
    apply_scaling(o, &spec);
    if (given(o[kVision]) && o[kVision] != 0) {
      // A vision tower's 2D RoPE: rows h and w of three (t unused), HF's float32 frequencies.
      spec.vision = static_cast<posenc::VisionRope>(static_cast<int>(o[kVision]));
      spec.arithmetic = posenc::FrequencyArithmetic::hf_float32;
      spec.mrope_section = {0, spec.head_dim / 4, spec.head_dim / 4};
    }
    return keep(rotary_.init(spec, posenc::ArgumentNames::options));
  }

  // Reads one layer of a config.json (UTF-8 text at `text`, `length` bytes; request: the
  // kLayer / kModelRule fields of an options record) without making a rotary embedding: what
  // layerInfo(), modelType() and layerType() then say.
  int describeConfig(std::uintptr_t text, int length, std::uintptr_t request) {
    posenc::RotarySpec spec;
    return keep(read(text, length, request, &spec));
  }

  // A Hugging Face config.json, with the options given in `overrides` (NaN fields are not given;
  // a scaling type replaces the config's rope_scaling). A layer without RoPE returns 0 with
  // layerInfo's kLHasRope 0 and no embedding made.
  int initConfig(std::uintptr_t text, int length, std::uintptr_t overrides) {
    posenc::RotarySpec spec;
    posenc::EncodingError e = read(text, length, overrides, &spec);
    if (!e.ok() || !layer_.has_rope) return keep(e);
    const double* o = reinterpret_cast<const double*>(overrides);
    // A config whose rotation covers the whole head keeps covering it under a headDim override;
    // otherwise its count of rotating channels stays (rotaryDim changes it).
    const bool whole_head = spec.rotary_dim == spec.head_dim;
    if (given(o[kHeadDim])) {
      spec.head_dim = static_cast<std::int64_t>(o[kHeadDim]);
      if (whole_head) spec.rotary_dim = spec.head_dim;
    }
    if (given(o[kBase])) spec.base = o[kBase];
    if (given(o[kRotaryDim])) spec.rotary_dim = static_cast<std::int64_t>(o[kRotaryDim]);
    if (given(o[kLayout]))
      spec.layout = static_cast<posenc::RotaryLayout>(static_cast<int>(o[kLayout]));
    if (given(o[kScalingType])) apply_scaling(o, &spec);
    // The config itself was validated with its key names: what fails now is an override.
    const bool overridden = given(o[kHeadDim]) || given(o[kBase]) || given(o[kRotaryDim]) ||
                            given(o[kLayout]) || given(o[kScalingType]);
    return keep(rotary_.init(
        spec, overridden ? posenc::ArgumentNames::options : posenc::ArgumentNames::hf_config));
  }

  std::string modelType() const { return layer_.model_type; }
  std::string layerType() const { return layer_.layer_type; }
  // Writes kLayerFields doubles to out.
  void layerInfo(std::uintptr_t out) const {
    double* o = reinterpret_cast<double*>(out);
    const posenc::ModelLayer& l = layer_;
    o[kLHasRope] = l.has_rope ? 1 : 0;
    o[kLNumLayers] = static_cast<double>(l.num_layers);
    o[kLLayersDiffer] = l.layers_differ ? 1 : 0;
    o[kLSlidingWindow] = static_cast<double>(l.sliding_window);
    o[kLAttentionChunk] = static_cast<double>(l.attention_chunk);
    o[kLLinearAttention] = l.linear_attention ? 1 : 0;
    o[kLQueryTemperature] = l.query_temperature ? 1 : 0;
    o[kLFloorScale] = l.floor_scale;
    o[kLAttnScale] = l.attn_scale;
    o[kLSoftmaxScaleFactor] = l.softmax_scale_factor;
    const auto& m = rotary_.spec().mrope_section;
    const bool has_m = l.has_rope && posenc::is_multimodal(rotary_.spec());
    for (int k = 0; k < 3; ++k)
      o[kLMropeT + k] = has_m ? static_cast<double>(m[static_cast<std::size_t>(k)]) : -1;
    o[kLMropeInterleaved] = has_m && rotary_.spec().mrope_interleaved ? 1 : 0;
    o[kLBidirectional] = l.bidirectional ? 1 : 0;
  }
  int headDim() const { return static_cast<int>(rotary_.head_dim()); }
  int rotaryDim() const { return static_cast<int>(rotary_.rotary_dim()); }
  int layout() const { return static_cast<int>(rotary_.spec().layout); }
  int scalingType() const { return static_cast<int>(rotary_.spec().scaling.type); }
  double attentionScaling() const { return rotary_.attention_scaling(); }
  // Writes rotaryDim / 2 doubles to out.
  void inverseFrequencies(std::uintptr_t out) const {
    const std::vector<double>& w = rotary_.inverse_frequencies();
    double* o = reinterpret_cast<double*>(out);
    for (std::size_t i = 0; i < w.size(); ++i)
      o[i] = w[i];
  }

  // Writes rotaryDim / 2 doubles to out: the frequencies of a call whose largest position + 1 is
  // sequence_length ('dynamic' and 'longrope' change them past the original context).
  int inverseFrequenciesFor(double sequence_length, std::uintptr_t out) {
    std::vector<double> w;
    double attention = 1.0;
    const posenc::EncodingError e =
        posenc::rotary_frequencies(rotary_.spec(), sequence_length, &w, &attention);
    if (!e.ok()) return keep(e);
    double* o = reinterpret_cast<double*>(out);
    for (std::size_t i = 0; i < w.size(); ++i)
      o[i] = w[i];
    return 0;
  }

  int apply(std::uintptr_t request) { return apply_rows(request, nullptr); }
  // apply on 16-bit data (dtype 1 float16, 2 bfloat16): the rotated channels of the bits at
  // q[kOut] widened to float32, rotated, rounded back to 16 bits in place
  // (RotaryEmbedding::apply_half).
  int applyHalf(std::uintptr_t request, int dtype) {
    return apply_half_rows(request, dtype, nullptr);
  }
  int cosSin(std::uintptr_t request) { return cos_sin_rows(request, nullptr); }
#ifdef __EMSCRIPTEN_PTHREADS__
  // The threaded build's pipelined apply / cosSin (bindings/js/rotary.js): the call is checked and
  // left running on the pool's workers, which compute it while the JS side copies the previous
  // chunk out and the next one in (16-bit data: each share widened, rotated and rounded back on
  // the thread that rotates it); finish() takes the caller's share, waits and returns its code.
  int applyStart(std::uintptr_t request) {
    return apply_rows(request, &pending_);
  }
  int applyHalfStart(std::uintptr_t request, int dtype) {
    return apply_half_rows(request, dtype, &pending_);
  }
  int cosSinStart(std::uintptr_t request) {
    return cos_sin_rows(request, &pending_);
  }
  int finish() {
    return keep(posenc::RotaryEmbedding::finish(pending_));
  }
#endif

  // dtype 1 float16, 2 bfloat16: the bits at the same places (posenc/half.hpp).
  int cosSinHalf(std::uintptr_t request, int dtype) {
    const double* q = reinterpret_cast<const double*>(request);
    const posenc::RotaryRows rows = rows_of(q);
    const std::size_t len = static_cast<std::size_t>(q[kOutLen]);
    return keep(rotary_.cos_sin_half(rows, at<std::uint16_t>(q[kOut]), at<std::uint16_t>(q[kOut2]),
                                     len, len, static_cast<posenc::HalfFormat>(dtype - 1), &cache_,
                                     posenc_bindings::thread_pool()));
  }

 private:
  int apply_rows(std::uintptr_t request, posenc::RotaryEmbedding::Pending* pending) {
    const double* q = reinterpret_cast<const double*>(request);
    return keep(rotary_.apply(rows_of(q), static_cast<std::int64_t>(q[kHeads]), at<float>(q[kOut]),
                              static_cast<std::size_t>(q[kOutLen]), &cache_,
                              posenc_bindings::thread_pool(), q[kHeadsFirst] != 0, pending));
  }
  int apply_half_rows(std::uintptr_t request, int dtype,
                      posenc::RotaryEmbedding::Pending* pending) {
    const double* q = reinterpret_cast<const double*>(request);
    return keep(rotary_.apply_half(rows_of(q), static_cast<std::int64_t>(q[kHeads]),
                                   at<std::uint16_t>(q[kOut]), static_cast<std::size_t>(q[kOutLen]),
                                   static_cast<posenc::HalfFormat>(dtype - 1), &cache_,
                                   posenc_bindings::thread_pool(), q[kHeadsFirst] != 0, pending));
  }
  int cos_sin_rows(std::uintptr_t request, posenc::RotaryEmbedding::Pending* pending) {
    const double* q = reinterpret_cast<const double*>(request);
    const std::size_t len = static_cast<std::size_t>(q[kOutLen]);
    return keep(rotary_.cos_sin(rows_of(q), at<float>(q[kOut]), at<float>(q[kOut2]), len, len,
                                &cache_, posenc_bindings::thread_pool(), pending));
  }

  static posenc::RotaryRows rows_of(const double* q) {
    posenc::RotaryRows rows;
    rows.count = static_cast<std::int64_t>(q[kCount]);
    rows.first_position = q[kFirst];
    rows.positions = at<const double>(q[kPositions]);
    rows.sequence_length = q[kSequenceLength];
    rows.mrope_positions = at<const double>(q[kMropePositions]);
    return rows;
  }

  posenc::EncodingError read(std::uintptr_t text, int length, std::uintptr_t request,
                             posenc::RotarySpec* spec) {
    const double* o = reinterpret_cast<const double*>(request);
    posenc::HfConfigRequest r;
    r.layer = given(o[kLayer]) ? static_cast<std::int64_t>(o[kLayer]) : -1;
    r.llama_rule = o[kModelRule] == 1;
    layer_ = posenc::ModelLayer();
    return posenc::read_hf_config(reinterpret_cast<const char*>(text),
                                  static_cast<std::size_t>(length), r, spec, &layer_);
  }

  static void apply_scaling(const double* o, posenc::RotarySpec* spec) {
    posenc::RopeScaling s;
    s.type = static_cast<posenc::RopeScalingType>(static_cast<int>(o[kScalingType]));
    if (given(o[kFactor])) s.factor = o[kFactor];
    if (given(o[kOriginalMax])) s.original_max_positions = o[kOriginalMax];
    if (given(o[kLowFreq])) s.low_freq_factor = o[kLowFreq];
    if (given(o[kHighFreq])) s.high_freq_factor = o[kHighFreq];
    if (given(o[kBetaFast])) s.beta_fast = o[kBetaFast];
    if (given(o[kBetaSlow])) s.beta_slow = o[kBetaSlow];
    s.attention_factor = o[kAttention];
    if (given(o[kMscale])) s.mscale = o[kMscale];
    if (given(o[kMscaleAllDim])) s.mscale_all_dim = o[kMscaleAllDim];
    if (given(o[kTruncate])) s.truncate = o[kTruncate] != 0;
    const std::size_t n = given(o[kFactorCount]) ? static_cast<std::size_t>(o[kFactorCount]) : 0;
    if (o[kShortFactor] > 0) {
      const double* f = at<const double>(o[kShortFactor]);
      s.short_factor.assign(f, f + n);
    }
    if (o[kLongFactor] > 0) {
      const double* f = at<const double>(o[kLongFactor]);
      s.long_factor.assign(f, f + n);
    }
    spec->scaling = std::move(s);
  }

  posenc::RotaryEmbedding rotary_;
  posenc::ModelLayer layer_;
  posenc::RotaryAnchorCache cache_;  // the last block anchor: one-row decoding calls skip it
#ifdef __EMSCRIPTEN_PTHREADS__
  posenc::RotaryEmbedding::Pending pending_;  // applyStart / cosSinStart until finish()
#endif
};

// ALiBi: slopes, and rows of the bias tensor (alibi.js writes the request).
enum AlibiField {
  kAHeads,
  kAQueries,
  kAKeys,
  kAMode,
  kAOffset,
  kAFirstRow,
  kARowCount,
  kAOut,
  kAOutLen,
  kAlibiFields
};

class Alibi : public Errors {
 public:
  POSENC_ERROR_METHODS

  int slopes(int heads, std::uintptr_t out) {
    return keep(posenc::alibi_slopes(heads, reinterpret_cast<double*>(out),
                                     static_cast<std::size_t>(heads < 0 ? 0 : heads)));
  }
  int biasRows(std::uintptr_t request) {
    const double* q = reinterpret_cast<const double*>(request);
    posenc::AlibiSpec s;
    s.heads = static_cast<std::int64_t>(q[kAHeads]);
    s.query_length = static_cast<std::int64_t>(q[kAQueries]);
    s.key_length = static_cast<std::int64_t>(q[kAKeys]);
    s.mode = static_cast<posenc::AlibiMode>(static_cast<int>(q[kAMode]));
    s.offset = static_cast<std::int64_t>(q[kAOffset]);
    return keep(posenc::alibi_bias_rows(
        s, static_cast<std::int64_t>(q[kAFirstRow]), static_cast<std::int64_t>(q[kARowCount]),
        at<float>(q[kAOut]), static_cast<std::size_t>(q[kAOutLen])));
  }
};

// A 2D sin-cos table (sincos2d.js writes the spec).
enum Sincos2dField {
  kSHeight,
  kSWidth,
  kSDim,
  kSPreset,
  kSBase,
  kSCls,
  kSReverse,
  kSInterleave,
  kSincos2dFields
};

class Sincos2d : public Errors {
 public:
  POSENC_ERROR_METHODS

  int init(std::uintptr_t request) {
    const double* q = reinterpret_cast<const double*>(request);
    posenc::Sincos2dSpec s;
    s.height = static_cast<std::int64_t>(q[kSHeight]);
    s.width = static_cast<std::int64_t>(q[kSWidth]);
    s.dim = static_cast<std::int64_t>(q[kSDim]);
    s.preset = static_cast<posenc::Sincos2dPreset>(static_cast<int>(q[kSPreset]));
    s.base = q[kSBase];
    s.cls_token = q[kSCls] != 0;
    s.reverse_coord = q[kSReverse] != 0;
    s.interleave_sin_cos = q[kSInterleave] != 0;
    return keep(table_.init(s));
  }
  double rows() const { return static_cast<double>(table_.rows()); }
  // dtype 0: float32 rows; 1 float16, 2 bfloat16 bits (posenc/half.hpp).
  int writeRows(double first, double count, std::uintptr_t out, double len, int dtype) {
    const auto r0 = static_cast<std::int64_t>(first), n = static_cast<std::int64_t>(count);
    const auto size = static_cast<std::size_t>(len);
    if (dtype == 0) return keep(table_.write_rows(r0, n, reinterpret_cast<float*>(out), size));
    return keep(table_.write_rows(r0, n, reinterpret_cast<std::uint16_t*>(out), size,
                                  static_cast<posenc::HalfFormat>(dtype - 1)));
  }

 private:
  posenc::Sincos2dTable table_;
};

// Row i of the model rules as "model_type family layout head rope types multimodal partial"
// (the enums' values; rotary.js words them for pe.rotaryModelTypes).
int rotaryModelRuleCount() {
  return static_cast<int>(posenc::rotary_model_rule_count());
}
std::string rotaryModelRule(int i) {
  if (i < 0 || static_cast<std::size_t>(i) >= posenc::rotary_model_rule_count()) return "";
  const posenc::RotaryModelRule& r = posenc::rotary_model_rules()[i];
  auto code = [](auto v) { return posenc::integer_text(static_cast<std::int64_t>(v)); };
  return std::string(r.model_type) + " " + r.family + " " + code(r.layout) + " " +
         code(r.head_dim) + " " + code(r.rope) + " " + code(r.layer_types) + " " +
         code(r.multimodal) + " " + posenc::format_number(r.partial_default);
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_rotary) {
  using namespace emscripten;
  class_<Rotary>("Rotary")
      .constructor<>()
      .function("init", &Rotary::init)
      .function("initConfig", &Rotary::initConfig)
      .function("describeConfig", &Rotary::describeConfig)
      .function("modelType", &Rotary::modelType)
      .function("layerType", &Rotary::layerType)
      .function("layerInfo", &Rotary::layerInfo)
      .function("headDim", &Rotary::headDim)
      .function("rotaryDim", &Rotary::rotaryDim)
      .function("layout", &Rotary::layout)
      .function("scalingType", &Rotary::scalingType)
      .function("attentionScaling", &Rotary::attentionScaling)
      .function("inverseFrequencies", &Rotary::inverseFrequencies)
      .function("inverseFrequenciesFor", &Rotary::inverseFrequenciesFor)
      .function("apply", &Rotary::apply)
      .function("applyHalf", &Rotary::applyHalf)
      .function("cosSin", &Rotary::cosSin)
      .function("cosSinHalf", &Rotary::cosSinHalf)
#ifdef __EMSCRIPTEN_PTHREADS__
      .function("applyStart", &Rotary::applyStart)
      .function("applyHalfStart", &Rotary::applyHalfStart)
      .function("cosSinStart", &Rotary::cosSinStart)
      .function("finish", &Rotary::finish)
#endif
      .function("errorArgument", &Rotary::errorArgument)
      .function("errorMessage", &Rotary::errorMessage);
  class_<Alibi>("Alibi")
      .constructor<>()
      .function("slopes", &Alibi::slopes)
      .function("biasRows", &Alibi::biasRows)
      .function("errorArgument", &Alibi::errorArgument)
      .function("errorMessage", &Alibi::errorMessage);
  class_<Sincos2d>("Sincos2d")
      .constructor<>()
      .function("init", &Sincos2d::init)
      .function("rows", &Sincos2d::rows)
      .function("writeRows", &Sincos2d::writeRows)
      .function("errorArgument", &Sincos2d::errorArgument)
      .function("errorMessage", &Sincos2d::errorMessage);
  // The record layouts the JS writes (field counts; the indices are the enums above).
  constant("ROTARY_OPTION_FIELDS", static_cast<int>(kRotaryFields));
  constant("ROTARY_ROWS_FIELDS", static_cast<int>(kRowsFields));
  constant("ROTARY_LAYER_FIELDS", static_cast<int>(kLayerFields));
  function("rotaryModelRuleCount", &rotaryModelRuleCount);
  function("rotaryModelRule", &rotaryModelRule);
  constant("ALIBI_FIELDS", static_cast<int>(kAlibiFields));
  constant("SINCOS2D_FIELDS", static_cast<int>(kSincos2dFields));
  constant("ROTARY_MAX_POSITION", posenc::kMaxRotaryPosition);
  constant("ROTARY_MAX_HEAD_DIM", static_cast<int>(posenc::kMaxRotaryHeadDim));
  constant("ALIBI_MAX_HEADS", static_cast<int>(posenc::kMaxAlibiHeads));
}
