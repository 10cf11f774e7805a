// The rotary, ALiBi and 2D families against the golden fixtures of tests/fixtures/{rotary,alibi,
// sincos2d} (written by their gen_*.py from the references' formulas with mpmath; README section
// "RoPE, ALiBi and 2D fixtures"): HF configs of real models -> resolved spec, float32 inv_freq
// bit for bit, attention scaling, cos/sin tables; explicit options; apply; slopes; biases; MAE
// and timm tables.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "fixture_json.hpp"
#include "posenc/posenc.hpp"

using namespace posenc;
using nlohmann::json;

namespace {

json load(const std::string& name) {
  return load_fixture_json(name);
}

const char* kHfConfigs[] = {"llama-2-7b",
                            "llama-3.1-8b",
                            "qwen2-7b",
                            "qwen2.5-7b-instruct-yarn",
                            "gpt-oss-20b-yarn",
                            "yarn-mscale-synthetic",
                            "mistral-7b-v0.1",
                            "mistral-nemo",
                            "gpt-neox-20b",
                            "gpt-j-6b",
                            "phi-3-mini-128k-instruct",
                            "llama-2-7b-dynamic",
                            "vicuna-7b-v1.5-16k-linear"};

RotarySpec spec_of(const json& config) {
  const std::string text = config.dump();
  RotarySpec spec;
  const EncodingError e = rotary_spec_from_hf_config(text.data(), text.size(), &spec);
  INFO(e.message);
  REQUIRE(e.ok());
  return spec;
}

// The spec of a fixture's explicit options (float64 frequencies).
RotarySpec spec_of_options(const json& o) {
  RotarySpec spec;
  spec.head_dim = o.at("headDim").get<std::int64_t>();
  spec.rotary_dim = o.at("rotaryDim").get<std::int64_t>();
  spec.base = o.at("base").get<double>();
  spec.layout =
      o.at("layout").get<std::string>() == "half" ? RotaryLayout::half : RotaryLayout::interleaved;
  return spec;
}

double seq_len_of(const json& entry) {
  return entry.at("seqLen").is_null() ? 0.0 : entry.at("seqLen").get<double>();
}

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float value_of(const json& v) {
  if (v.is_string()) return -std::numeric_limits<float>::infinity();  // "-Infinity"
  return static_cast<float>(v.get<double>());
}

}  // namespace

TEST_CASE("rotary fixtures: HF configs resolve, inv_freq bit for bit, cos/sin tables",
          "[rotary][fixtures]") {
  int buffers = 0, tables = 0;
  for (const char* id : kHfConfigs) {
    const json f = load(std::string("rotary/hf-") + id + ".json");
    INFO("config " << id);
    const RotarySpec spec = spec_of(f.at("config"));
    const json& r = f.at("resolved");
    CHECK(spec.head_dim == r.at("headDim").get<std::int64_t>());
    CHECK(spec.rotary_dim == r.at("rotaryDim").get<std::int64_t>());
    CHECK(spec.base == r.at("base").get<double>());
    CHECK((spec.layout == RotaryLayout::half ? "half" : "interleaved") ==
          r.at("layout").get<std::string>());
    CHECK(rope_scaling_name(spec.scaling.type) == r.at("ropeType").get<std::string>());
    if (spec.scaling.type != RopeScalingType::none)
      CHECK(spec.scaling.factor == r.at("factor").get<double>());
    RotaryEmbedding rot;
    REQUIRE(rot.init(spec, ArgumentNames::hf_config).ok());
    CHECK(rot.attention_scaling() == Approx(f.at("attentionScaling").get<double>()).epsilon(1e-15));
    for (const auto& item : f.at("invFreq").items()) {
      INFO("invFreq " << item.key());
      std::vector<double> inv;
      double a = 0;
      REQUIRE(rotary_frequencies(spec, seq_len_of(item.value()), &inv, &a).ok());
      const json& bits = item.value().at("bits");
      REQUIRE(inv.size() == bits.size());
      int differ = 0;
      for (std::size_t i = 0; i < inv.size(); ++i) {
        CHECK(static_cast<double>(static_cast<float>(inv[i])) == inv[i]);  // a float32 buffer
        differ += bits_of(static_cast<float>(inv[i])) != bits[i].get<std::uint32_t>();
      }
      CHECK(differ == 0);
      CHECK(a == Approx(f.at("attentionScaling").get<double>()).epsilon(1e-15));
      ++buffers;
    }
    for (const json& t : f.at("tables")) {
      const std::vector<double> positions = t.at("positions").get<std::vector<double>>();
      RotaryRows rows;
      rows.count = static_cast<std::int64_t>(positions.size());
      rows.positions = positions.data();
      rows.sequence_length = seq_len_of(t);
      const std::size_t n = positions.size() * static_cast<std::size_t>(spec.rotary_dim);
      std::vector<float> c(n), s(n);
      REQUIRE(rot.cos_sin(rows, c.data(), s.data(), n, n).ok());
      const std::vector<double> wc = t.at("cos").get<std::vector<double>>();
      const std::vector<double> ws = t.at("sin").get<std::vector<double>>();
      REQUIRE(wc.size() == n);
      double worst = 0;
      std::size_t not_nearest = 0;
      for (std::size_t i = 0; i < n; ++i) {
        worst = std::max({worst, std::fabs(c[i] - wc[i]), std::fabs(s[i] - ws[i])});
        not_nearest += (c[i] != static_cast<float>(wc[i])) + (s[i] != static_cast<float>(ws[i]));
      }
      INFO("table of " << t.at("invFreq").get<std::string>());
      CHECK(worst <= 0x1p-22);
      // Without attention scaling every value is the correctly rounded float32 (the float64
      // evaluation misses it only within ~2^-45 of a midpoint).
      if (rot.attention_scaling() == 1.0) CHECK(not_nearest == 0);
      ++tables;
    }
  }
  CHECK(buffers == 16);
  CHECK(tables == 16);
}

TEST_CASE("rotary fixtures: explicit options (float64 frequencies)", "[rotary][fixtures]") {
  const json f = load("rotary/explicit.json");
  for (const json& c : f.at("cases")) {
    INFO("case " << c.at("id").get<std::string>());
    const RotarySpec spec = spec_of_options(c.at("options"));
    RotaryEmbedding rot;
    REQUIRE(rot.init(spec).ok());
    const std::vector<double> want = c.at("invFreq").get<std::vector<double>>();
    REQUIRE(rot.inverse_frequencies().size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      CHECK(rot.inverse_frequencies()[i] == Approx(want[i]).epsilon(1e-15));
    const std::vector<double> positions = c.at("positions").get<std::vector<double>>();
    RotaryRows rows;
    rows.count = static_cast<std::int64_t>(positions.size());
    rows.positions = positions.data();
    const std::size_t n = positions.size() * static_cast<std::size_t>(spec.rotary_dim);
    std::vector<float> cs(n), sn(n);
    REQUIRE(rot.cos_sin(rows, cs.data(), sn.data(), n, n).ok());
    const std::vector<double> wc = c.at("cos").get<std::vector<double>>();
    const std::vector<double> ws = c.at("sin").get<std::vector<double>>();
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i)
      worst = std::max({worst, std::fabs(cs[i] - wc[i]), std::fabs(sn[i] - ws[i])});
    CHECK(worst <= 0x1p-22);
  }
}

TEST_CASE("rotary fixtures: apply", "[rotary][fixtures]") {
  const json f = load("rotary/apply.json");
  for (const json& c : f.at("cases")) {
    INFO("case " << c.at("id").get<std::string>());
    const json& source = c.at("source");
    RotarySpec spec;
    double seq_len = 0;
    if (source.contains("config")) {
      const json hf = load("rotary/hf-" + source.at("config").get<std::string>() + ".json");
      spec = spec_of(hf.at("config"));
      seq_len = seq_len_of(hf.at("invFreq").at(source.at("invFreqSet").get<std::string>()));
    } else {
      spec = spec_of_options(source.at("options"));
    }
    RotaryEmbedding rot;
    REQUIRE(rot.init(spec).ok());
    const std::int64_t heads = c.at("numHeads").get<std::int64_t>();
    const std::vector<double> positions = c.at("positions").get<std::vector<double>>();
    std::vector<float> x;
    for (const json& v : c.at("x"))
      x.push_back(static_cast<float>(v.get<double>()));
    const std::vector<float> input = x;
    RotaryRows rows;
    rows.count = static_cast<std::int64_t>(positions.size());
    rows.positions = positions.data();
    rows.sequence_length = seq_len;
    REQUIRE(rot.apply(rows, heads, x.data(), x.size()).ok());
    const std::vector<double> want = c.at("expected").get<std::vector<double>>();
    REQUIRE(want.size() == x.size());
    const double a = c.at("attentionScaling").get<double>();
    const std::int64_t hd = spec.head_dim, rd = spec.rotary_dim, n = rd / 2;
    const bool half = spec.layout == RotaryLayout::half;
    for (std::int64_t row = 0; row < rows.count * heads; ++row) {
      const std::int64_t b = row * hd;
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t i0 = b + (half ? i : 2 * i), i1 = b + (half ? i + n : 2 * i + 1);
        const double norm = std::hypot(static_cast<double>(input[i0]), input[i1]);
        CHECK(std::fabs(x[i0] - want[i0]) <= 0x1p-22 * a * norm + 1e-30);
        CHECK(std::fabs(x[i1] - want[i1]) <= 0x1p-22 * a * norm + 1e-30);
      }
      for (std::int64_t k = rd; k < hd; ++k)
        CHECK(x[b + k] == static_cast<float>(want[b + k]));
    }
  }
}

TEST_CASE("ALiBi fixtures: slopes and biases", "[alibi][fixtures]") {
  const json slopes = load("alibi/slopes.json");
  for (const json& c : slopes.at("cases")) {
    const std::int64_t n = c.at("numHeads").get<std::int64_t>();
    std::vector<double> m(static_cast<std::size_t>(n));
    REQUIRE(alibi_slopes(n, m.data(), m.size()).ok());
    const std::vector<double> want = c.at("slopes").get<std::vector<double>>();
    INFO("heads " << n);
    for (std::size_t i = 0; i < m.size(); ++i)
      CHECK(m[i] == Approx(want[i]).epsilon(1e-15));  // start * ratio**i, libm pow's last bit
  }
  const json bias = load("alibi/bias.json");
  for (const json& c : bias.at("cases")) {
    AlibiSpec s;
    s.heads = c.at("numHeads").get<std::int64_t>();
    s.query_length = c.at("queryLength").get<std::int64_t>();
    s.key_length = c.at("keyLength").get<std::int64_t>();
    s.offset = c.at("offset").get<std::int64_t>();
    s.mode = c.at("mode").get<std::string>() == "causal" ? AlibiMode::causal : AlibiMode::symmetric;
    std::vector<float> out(static_cast<std::size_t>(s.heads * s.query_length * s.key_length));
    REQUIRE(alibi_bias(s, out.data(), out.size()).ok());
    const json& want = c.at("bias");
    REQUIRE(want.size() == out.size());
    int differ = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const float w = value_of(want[i]);
      // float32 of the float64 value: equal, or 1 ulp where the slopes' last bit differs
      if (out[i] != w && !(std::fabs(out[i] - w) <= std::fabs(w) * 0x1p-23)) ++differ;
    }
    INFO("mode " << c.at("mode") << " heads " << s.heads);
    CHECK(differ == 0);
  }
}

TEST_CASE("2D sin-cos fixtures: MAE and timm", "[sincos2d][fixtures]") {
  for (const char* name : {"mae", "timm"}) {
    const json f = load(std::string("sincos2d/") + name + ".json");
    const bool mae = std::string(name) == "mae";
    for (const json& c : f.at("cases")) {
      Sincos2dSpec s;
      s.preset = mae ? Sincos2dPreset::mae : Sincos2dPreset::timm;
      s.height = c.at("height").get<std::int64_t>();
      s.width = c.at("width").get<std::int64_t>();
      if (mae) {
        s.dim = c.at("embedDim").get<std::int64_t>();
        s.cls_token = c.at("clsToken").get<bool>();
      } else {
        s.dim = c.at("dim").get<std::int64_t>();
        const json& o = c.at("options");
        s.base = o.at("temperature").get<double>();
        s.reverse_coord = o.at("reverseCoord").get<bool>();
        s.interleave_sin_cos = o.at("interleaveSinCos").get<bool>();
      }
      Sincos2dTable t;
      REQUIRE(t.init(s).ok());
      REQUIRE(t.rows() == c.at("rows").get<std::int64_t>());
      std::vector<float> out(static_cast<std::size_t>(t.rows() * s.dim));
      REQUIRE(t.write_rows(0, t.rows(), out.data(), out.size()).ok());
      const std::vector<double> want = c.at("expected").get<std::vector<double>>();
      REQUIRE(want.size() == out.size());
      // MAE's frequencies are float64 (as MAE's numpy code); timm's are its float32 bands, in the
      // fixtures as in posenc: for timm every value is the float32 nearest to the expected one.
      if (!mae) {
        for (std::size_t i = 0; i < out.size(); ++i) {
          const double w = want[i];
          const double half_ulp = w == 0 ? 0x1p-150 : std::ldexp(1.0, std::ilogb(w) - 24);
          INFO(name << " " << s.height << "x" << s.width << "x" << s.dim << " [" << i << "]");
          CHECK(std::fabs(out[i] - w) <= half_ulp * (1 + 0x1p-20));
        }
      }
      double worst = 0;
      for (std::size_t i = 0; i < out.size(); ++i)
        worst = std::max(worst, std::fabs(out[i] - want[i]));
      INFO(name << " " << s.height << "x" << s.width << "x" << s.dim);
      CHECK(worst <= 0x1p-22);
    }
    // 14 x 14 x 768 (ViT-B/16) with checksums
    for (const json& b : f.at("big")) {
      Sincos2dSpec s;
      s.preset = mae ? Sincos2dPreset::mae : Sincos2dPreset::timm;
      s.height = b.value("height", 14);
      s.width = b.value("width", 14);
      s.dim = b.value(mae ? "embedDim" : "dim", 768);
      s.cls_token = mae ? b.value("clsToken", true) : false;
      Sincos2dTable t;
      REQUIRE(t.init(s).ok());
      std::vector<float> out(static_cast<std::size_t>(t.rows() * s.dim));
      REQUIRE(t.write_rows(0, t.rows(), out.data(), out.size()).ok());
      for (const json& sel : b.at("selected")) {
        const std::int64_t row = sel.at("row").get<std::int64_t>(),
                           col = sel.at("col").get<std::int64_t>();
        const double v = sel.at("value").get<double>();
        INFO(name << " big row " << row << " col " << col);
        CHECK(std::fabs(out[static_cast<std::size_t>(row * s.dim + col)] - v) <= 0x1p-22);
      }
    }
  }
}
