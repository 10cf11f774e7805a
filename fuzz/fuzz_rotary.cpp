// libFuzzer target: the rotary, ALiBi and 2D sin-cos families. The input is 16 bytes of
// parameters followed by the text of a Hugging Face config.json (so the seeds in
// fuzz/corpus/rotary are real model configs and the JSON reader is exercised with them). Whatever
// the input, the core must return an EncodingError without crashing, reading or writing out of
// bounds (ASan) or undefined behaviour (UBSan); ok results must be bounded: |cos|, |sin| <= A,
// each rotated pair's norm within A * (1 + 2^-20) of its input's, ALiBi biases <= 0, 2D values in
// [-1, 1].
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_reader.hpp"
#include "posenc/posenc.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void rotary(Reader& in, const std::uint8_t* text, std::size_t text_size) {
  const std::uint8_t mode = in.take<std::uint8_t>();
  const std::int64_t count = 1 + in.take<std::uint8_t>() % 64;
  const std::int64_t heads = 1 + in.take<std::uint8_t>() % 4;
  const std::uint32_t raw_offset = in.take<std::uint32_t>();
  // The config read by its model's rule (read_hf_config) at a layer from the offset's top byte
  // (-1: the whole config), an unknown model_type by Llama's rule unless bit 23 says refuse.
  posenc::RotarySpec spec;
  posenc::ModelLayer layer;
  posenc::HfConfigRequest request;
  request.layer = static_cast<std::int64_t>(raw_offset >> 24) % 64 - 1;
  request.llama_rule = ((raw_offset >> 23) & 1) == 0;
  posenc::EncodingError e = posenc::read_hf_config(reinterpret_cast<const char*>(text), text_size,
                                                   request, &spec, &layer);
  if (!e.ok()) {
    check(!e.message.empty() && !e.argument.empty());
    return;
  }
  check(layer.num_layers >= 0 && layer.sliding_window >= 0 && layer.attention_chunk >= 0 &&
        std::isfinite(layer.softmax_scale_factor) && layer.softmax_scale_factor >= 1);
  if (!layer.has_rope) return;
  if (mode & 1) spec.layout = posenc::RotaryLayout::interleaved;
  if (mode & 2) spec.arithmetic = posenc::FrequencyArithmetic::float64;
  if ((raw_offset >> 22) & 1) {
    // A vision tower's 2D RoPE over the config's head (rounded down to a multiple of 4): rows h
    // and w, Qwen-VL's or Pixtral's float32 frequencies.
    spec.vision = ((raw_offset >> 21) & 1) ? posenc::VisionRope::pixtral : posenc::VisionRope::qwen;
    spec.head_dim = spec.head_dim < 4 ? 4 : spec.head_dim / 4 * 4;
    spec.rotary_dim = spec.head_dim;
    spec.layout = posenc::RotaryLayout::half;
    spec.scaling = posenc::RopeScaling();
    spec.arithmetic = posenc::FrequencyArithmetic::hf_float32;
    spec.mrope_section = {0, spec.head_dim / 4, spec.head_dim / 4};
    spec.mrope_interleaved = false;
    spec.rope_angles = 0;
  }
  posenc::RotaryEmbedding rot;
  e = rot.init(spec, posenc::ArgumentNames::hf_config);
  if (!e.ok()) return;
  const std::int64_t hd = rot.head_dim(), rd = rot.rotary_dim();
  // The frequencies of an arbitrary sequence length (rot.inverseFrequenciesFor): an error, or
  // rotary_dim / 2 finite non-negative ones.
  {
    double length = static_cast<double>(raw_offset);
    if (mode & 64) length = (mode & 128) ? -length : std::ldexp(length, 20);  // also out of range
    std::vector<double> w;
    double attention = 0;
    const posenc::EncodingError fe = posenc::rotary_frequencies(rot.spec(), length, &w, &attention);
    if (fe.ok()) {
      check(static_cast<std::int64_t>(w.size()) == rd / 2 && std::isfinite(attention));
      for (double v : w)
        check(std::isfinite(v) && v >= 0);  // an absurd base may underflow to 0
      // Qwen-VL's vision frequencies: the same list for rows and for columns.
      if (spec.vision == posenc::VisionRope::qwen)
        for (std::size_t k = 0; k < w.size() / 2; ++k)
          check(w[k] == w[w.size() / 2 + k]);
    } else {
      check(!fe.message.empty());
    }
  }
  if (count * heads * hd > (1 << 20)) return;  // keep each run fast
  posenc::RotaryRows rows;
  rows.count = count;
  rows.first_position = (mode & 4) ? raw_offset : raw_offset % 70000;
  std::vector<double> positions;
  if (mode & 8) {
    positions.resize(static_cast<std::size_t>(count));
    for (std::int64_t r = 0; r < count; ++r)
      positions[r] = static_cast<double>((raw_offset + 977u * static_cast<std::uint32_t>(r)) %
                                         ((mode & 4) ? 2147483648u : 70000u)) +
                     ((mode & 16) ? 0.25 : 0.0);
    rows.positions = positions.data();
    // A multimodal spec: three rows t, h, w (t the positions above, h and w shuffled from them).
    if (posenc::is_multimodal(spec)) {
      positions.resize(static_cast<std::size_t>(3 * count));
      for (std::int64_t r = 0; r < count; ++r) {
        positions[static_cast<std::size_t>(count + r)] =
            positions[static_cast<std::size_t>((r * 7) % count)];
        positions[static_cast<std::size_t>(2 * count + r)] =
            positions[static_cast<std::size_t>((r * 3) % count)];
      }
      rows.positions = nullptr;
      rows.mrope_positions = positions.data();
    }
  }
  if (mode & 32) rows.sequence_length = static_cast<double>(raw_offset % 300000) + 1;
  std::vector<float> c(static_cast<std::size_t>(count * rd)), s(c.size());
  e = rot.cos_sin(rows, c.data(), s.data(), c.size(), s.size());
  if (e.ok()) {
    const double limit = rot.attention_scaling() * (1 + 0x1p-20);
    for (std::size_t i = 0; i < c.size(); ++i)
      check(std::fabs(c[i]) <= limit && std::fabs(s[i]) <= limit);
  }
  std::vector<float> x(static_cast<std::size_t>(count * heads * hd));
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(static_cast<int>(i * 2654435761u % 2001u) - 1000) / 250.0f;
  const std::vector<float> before = x;
  e = rot.apply(rows, heads, x.data(), x.size());
  if (!e.ok()) {
    check(x == before);
    return;
  }
  const double a = rot.attention_scaling();
  const std::int64_t n = rd / 2;
  for (std::int64_t row = 0; row < count * heads; ++row) {
    const float* in_row = before.data() + row * hd;
    const float* out_row = x.data() + row * hd;
    for (std::int64_t i = 0; i < n; ++i) {
      const bool half = spec.layout == posenc::RotaryLayout::half;
      const std::int64_t i0 = half ? i : 2 * i, i1 = half ? i + n : 2 * i + 1;
      const double norm_in = std::hypot(in_row[i0], in_row[i1]);
      const double norm_out = std::hypot(out_row[i0], out_row[i1]);
      check(std::isfinite(norm_out) && norm_out <= a * norm_in * (1 + 0x1p-20) + 1e-30);
    }
    for (std::int64_t k = rd; k < hd; ++k)
      check(out_row[k] == in_row[k]);
  }
}

void alibi(Reader& in) {
  posenc::AlibiSpec s;
  s.heads = static_cast<std::int8_t>(in.take<std::uint8_t>());
  s.query_length = in.take<std::uint8_t>() % 40;
  s.key_length = in.take<std::uint8_t>() % 80;
  s.mode = static_cast<posenc::AlibiMode>(in.take<std::uint8_t>() % 3);
  s.offset = static_cast<std::int32_t>(in.take<std::uint32_t>());
  const std::int64_t first = in.take<std::uint8_t>();
  const std::int64_t rows_wanted = in.take<std::uint8_t>();
  if (s.heads <= 0 || s.query_length <= 0 || s.key_length <= 0) {
    float dummy = 0;
    check(!posenc::alibi_bias(s, &dummy, 1).ok());
    return;
  }
  std::vector<float> out(static_cast<std::size_t>(rows_wanted * s.key_length) + 1);
  const posenc::EncodingError e =
      posenc::alibi_bias_rows(s, first, rows_wanted, out.data(), out.size() - 1);
  if (!e.ok()) return;
  for (std::size_t i = 0; i + 1 < out.size(); ++i)
    check(out[i] <= 0.0f);
}

void sincos2d(Reader& in) {
  posenc::Sincos2dSpec s;
  s.height = static_cast<std::int8_t>(in.take<std::uint8_t>());
  s.width = in.take<std::uint8_t>() % 40;
  s.dim = static_cast<std::int16_t>(in.take<std::uint16_t>() % 600);
  s.preset = static_cast<posenc::Sincos2dPreset>(in.take<std::uint8_t>() % 3);
  s.cls_token = in.take<std::uint8_t>() & 1;
  posenc::Sincos2dTable t;
  if (!t.init(s).ok()) return;
  std::vector<float> out(static_cast<std::size_t>(t.rows() * s.dim));
  check(t.write_rows(0, t.rows(), out.data(), out.size()).ok());
  for (float v : out)
    check(std::fabs(v) <= 1.0f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::size_t header = size < 16 ? size : 16;
  Reader params{data, header};
  const std::uint8_t which = params.take<std::uint8_t>();
  if (which % 4 == 0) {
    Reader r{data + 1, header - (header > 0 ? 1 : 0)};
    alibi(r);
  } else if (which % 4 == 1) {
    Reader r{data + 1, header - (header > 0 ? 1 : 0)};
    sincos2d(r);
  } else {
    rotary(params, data + header, size - header);
  }
  return 0;
}
