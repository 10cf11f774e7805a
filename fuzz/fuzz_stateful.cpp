// libFuzzer target: objects over a sequence of calls, where the other targets make one call on a
// fresh object. The first byte picks one of:
//  - a SinusoidalEncoder with an AnchorCache: 1 to 12 calls of 1 to 20 rows (encode or add_to,
//    integer or fractional offsets, a zero row), each bit for bit the uncached call and within
//    2^-22 of encode_reference; then the encoder is assigned another spec (same address) and the
//    old cache must be bypassed: the results again equal the uncached calls;
//  - a RotaryEmbedding from an explicit RotarySpec (every scaling type, both frequency
//    arithmetics) with a RotaryAnchorCache: cos_sin and apply over 1 to 8 calls (offsets,
//    fractional offsets, explicit positions, a sequence length), bit for bit the uncached calls;
//  - a TransformerEncoderLayer with a position step (none, rotary, ALiBi): forwards with explicit
//    positions or offsets, a key padding mask, the causal mask; an error may only be
//    invalid_position; the outputs are finite and attention() has rows that sum to 1 (or are all
//    0 when every key is hidden), zero at hidden keys.
// Any abort is a failure, as are ASan and UBSan reports.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_reader.hpp"
#include "posenc/posenc.hpp"

namespace {

using namespace posenc;

void check(bool ok) {
  if (!ok) std::abort();
}

Spec sinusoidal_spec(Reader& in) {
  Spec spec;
  spec.dim = 1 + in.take<std::uint16_t>() % 299;
  spec.layout = static_cast<Layout>(in.take<std::uint8_t>() % 2);
  spec.frequencies = static_cast<Frequencies>(in.take<std::uint8_t>() % 2);
  spec.odd = static_cast<OddDim>(in.take<std::uint8_t>() % 2);
  spec.base = 2.0 + in.take<std::uint16_t>();
  return spec;
}

// Calls on enc with and without the cache: the same status and bits; encode within 2^-22 of the
// float64 reference.
void sinusoidal_calls(Reader& in, const SinusoidalEncoder& enc, AnchorCache* cache) {
  const std::int64_t dim = enc.spec().dim;
  const int calls = 1 + in.take<std::uint8_t>() % 12;
  for (int k = 0; k < calls; ++k) {
    RowPositions rows;
    rows.count = 1 + in.take<std::uint8_t>() % 20;
    const std::uint32_t raw = in.take<std::uint32_t>();
    const std::uint8_t flags = in.take<std::uint8_t>();
    rows.first_position =
        static_cast<double>(raw % 3000000) + ((flags & 1) != 0 ? flags / 256.0 : 0.0);
    if ((flags & 2) != 0) rows.zero_position = rows.first_position + 1;
    const auto n = static_cast<std::size_t>(rows.count * dim);
    std::vector<float> a(n, 7.0f), b(n, 7.0f);
    const bool add = (flags & 4) != 0;
    Status sa, sb;
    if (add) {
      for (std::size_t i = 0; i < n; ++i)
        a[i] = b[i] = static_cast<float>(i % 7) - 3.0f;
      sa = enc.add_to(rows, 0.5f, a.data(), n, cache);
      sb = enc.add_to(rows, 0.5f, b.data(), n);
    } else {
      sa = enc.encode(rows, a.data(), n, cache);
      sb = enc.encode(rows, b.data(), n);
    }
    check(sa == sb);
    if (sa != Status::ok) continue;
    check(std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0);
    if (!add) {
      std::vector<float> ref(n);
      check(enc.encode_reference(rows, ref.data(), n) == Status::ok);
      for (std::size_t i = 0; i < n; ++i)
        check(std::fabs(static_cast<double>(a[i]) - ref[i]) <= 0x1p-22);
    }
  }
}

void sinusoidal(Reader& in) {
  SinusoidalEncoder enc(sinusoidal_spec(in));
  if (enc.status() != Status::ok) return;
  auto cache = enc.make_anchor_cache();
  check(cache != nullptr);
  sinusoidal_calls(in, enc, cache.get());
  // Another spec at the same address: the cache made for the first must not be used.
  enc = SinusoidalEncoder(sinusoidal_spec(in));
  if (enc.status() != Status::ok) return;
  sinusoidal_calls(in, enc, cache.get());
}

void rotary(Reader& in) {
  RotarySpec s;
  s.head_dim = 2 + in.take<std::uint8_t>() % 200;
  s.rotary_dim = 2 * (in.take<std::uint8_t>() % (s.head_dim / 2 + 1));  // 0: the whole head
  s.base = 1.0 + std::ldexp(1.0 + in.take<std::uint8_t>(), in.take<std::uint8_t>() % 40);
  s.layout = static_cast<RotaryLayout>(in.take<std::uint8_t>() % 2);
  s.arithmetic = static_cast<FrequencyArithmetic>(in.take<std::uint8_t>() % 2);
  RopeScaling& sc = s.scaling;
  sc.type = static_cast<RopeScalingType>(in.take<std::uint8_t>() % 6);
  sc.factor = 0.5 + in.take<std::uint8_t>() / 8.0;
  sc.original_max_positions = 1 + in.take<std::uint16_t>();
  sc.low_freq_factor = 0.5 + in.take<std::uint8_t>() / 16.0;
  sc.high_freq_factor = sc.low_freq_factor + 0.5 + in.take<std::uint8_t>() / 16.0;
  sc.beta_fast = 1 + in.take<std::uint8_t>();
  sc.beta_slow = 0.25 + in.take<std::uint8_t>() / 32.0;
  sc.truncate = (in.take<std::uint8_t>() & 1) != 0;
  const std::uint8_t af = in.take<std::uint8_t>();
  if ((af & 1) != 0) sc.attention_factor = 0.25 + af / 64.0;
  sc.mscale = in.take<std::uint8_t>() / 16.0;
  sc.mscale_all_dim = in.take<std::uint8_t>() / 16.0;
  const std::int64_t pairs = (s.rotary_dim == 0 ? s.head_dim : s.rotary_dim) / 2;
  sc.short_factor.assign(static_cast<std::size_t>(pairs), 1.0 + in.take<std::uint8_t>() / 64.0);
  sc.long_factor.assign(static_cast<std::size_t>(pairs), 1.0 + in.take<std::uint8_t>() / 8.0);
  RotaryEmbedding rot;
  if (!rot.init(s).ok()) return;
  RotaryAnchorCache cache;
  const std::int64_t hd = rot.head_dim(), rd = rot.rotary_dim();
  const int calls = 1 + in.take<std::uint8_t>() % 8;
  for (int k = 0; k < calls; ++k) {
    RotaryRows rows;
    rows.count = 1 + in.take<std::uint8_t>() % 40;
    const std::uint32_t raw = in.take<std::uint32_t>();
    const std::uint8_t m = in.take<std::uint8_t>();
    rows.first_position = (m & 4) != 0 ? raw % 2147483000u : raw % 200000;
    if ((m & 8) != 0) rows.first_position += 0.5;
    std::vector<double> positions;
    if ((m & 16) != 0) {
      positions.resize(static_cast<std::size_t>(rows.count));
      for (std::size_t i = 0; i < positions.size(); ++i)
        positions[i] = static_cast<double>((raw + 31 * i) % 100000);
      rows.positions = positions.data();
    }
    if ((m & 32) != 0) rows.sequence_length = 1 + (raw % 400000);
    const std::int64_t heads = 1 + (m >> 6);
    const auto nc = static_cast<std::size_t>(rows.count * rd);
    std::vector<float> c1(nc), s1(nc), c2(nc), s2(nc);
    const EncodingError e1 = rot.cos_sin(rows, c1.data(), s1.data(), nc, nc, &cache);
    const EncodingError e2 = rot.cos_sin(rows, c2.data(), s2.data(), nc, nc);
    check(e1.ok() == e2.ok());
    if (e1.ok()) {
      check(std::memcmp(c1.data(), c2.data(), nc * sizeof(float)) == 0);
      check(std::memcmp(s1.data(), s2.data(), nc * sizeof(float)) == 0);
    }
    const auto nx = static_cast<std::size_t>(rows.count * heads * hd);
    std::vector<float> x1(nx), x2(nx);
    for (std::size_t i = 0; i < nx; ++i)
      x1[i] = x2[i] = static_cast<float>(static_cast<int>(i * 2654435761u % 2001u) - 1000) / 250.0f;
    const EncodingError a1 = rot.apply(rows, heads, x1.data(), nx, &cache);
    const EncodingError a2 = rot.apply(rows, heads, x2.data(), nx);
    check(a1.ok() == a2.ok());
    if (a1.ok()) check(std::memcmp(x1.data(), x2.data(), nx * sizeof(float)) == 0);
  }
}

void layer(Reader& in) {
  LayerConfig c;
  c.heads = 1 + in.take<std::uint8_t>() % 4;
  c.d_model = c.heads * (1 + in.take<std::uint8_t>() % 6);
  c.ff_dim = 1 + in.take<std::uint8_t>() % 12;
  const std::uint8_t f = in.take<std::uint8_t>();
  c.norm_first = (f & 1) != 0;
  c.activation = (f & 2) != 0 ? Activation::gelu : Activation::relu;
  c.position.method = static_cast<PositionMethod>((f >> 2) % 3);
  c.position.rotary_dim = 2 * ((f >> 4) % 4);
  c.position.rotary_layout = static_cast<RotaryLayout>((f >> 6) & 1);
  c.position.alibi_mode = static_cast<AlibiMode>((f >> 7) & 1);
  c.position.rope_theta = 2.0 + in.take<std::uint16_t>();
  TransformerEncoderLayer L;
  if (!L.configure(c).ok()) return;
  std::uint32_t seed = in.take<std::uint32_t>();
  auto next = [&seed] {  // weights and inputs in [-1, 1]
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int>(seed >> 9) % 2001 - 1000) / 1000.0f;
  };
  for (int t = 0; t < kLayerTensorCount; ++t) {
    const LayerTensorShape sh = layer_tensor_shape(c, t);
    std::vector<float> w(static_cast<std::size_t>(sh.dims[0] * (sh.ndim == 2 ? sh.dims[1] : 1)));
    for (float& v : w)
      v = next();
    check(L.set_tensor(kLayerTensorNames[t], w.data(), w.size(), sh.dims, sh.ndim).ok());
  }
  const int calls = 1 + in.take<std::uint8_t>() % 3;
  for (int k = 0; k < calls; ++k) {
    const std::int64_t len = 1 + in.take<std::uint8_t>() % 40;
    const std::uint8_t m = in.take<std::uint8_t>();
    ForwardOptions o;
    o.causal = (m & 1) != 0;
    o.position_step = (m & 2) == 0;
    std::vector<std::uint8_t> mask;
    std::vector<double> positions;
    if ((m & 4) != 0) {
      mask.resize(static_cast<std::size_t>(len));
      for (auto& b : mask)
        b = in.take<std::uint8_t>() & 1;
      o.key_padding_mask = mask.data();
    }
    if ((m & 8) != 0) {
      positions.resize(static_cast<std::size_t>(len));
      for (auto& p : positions)
        p = static_cast<double>(in.take<std::int32_t>());
      o.positions = positions.data();
    } else {
      o.position_offset = static_cast<double>(in.take<std::int32_t>());
    }
    const auto n = static_cast<std::size_t>(len * c.d_model);
    std::vector<float> x(n), out(n);
    for (float& v : x)
      v = next();
    const LayerError e = L.forward(x.data(), n, len, o, out.data(), n);
    if (!e.ok()) {
      check(e.status == LayerStatus::invalid_position);
      continue;
    }
    for (float v : out)
      check(std::isfinite(v));
    const float* a = L.attention();
    check(a != nullptr && L.attention_length() == len);
    for (std::int64_t r = 0; r < c.heads * len; ++r) {
      const std::int64_t i = r % len;
      double sum = 0;
      for (std::int64_t j = 0; j < len; ++j) {
        const float p = a[r * len + j];
        check(p >= 0);
        sum += p;
        if (o.causal && j > i) check(p == 0);
        if (!mask.empty() && mask[static_cast<std::size_t>(j)] != 0) check(p == 0);
      }
      check(sum == 0 || std::fabs(sum - 1) < 1e-4);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader in{data, size};
  switch (in.take<std::uint8_t>() % 3) {
    case 0:
      sinusoidal(in);
      break;
    case 1:
      rotary(in);
      break;
    default:
      layer(in);
      break;
  }
  return 0;
}
