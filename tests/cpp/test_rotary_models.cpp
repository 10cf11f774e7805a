// Every model rule against the per-model fixtures of tests/fixtures/rotary/models (gen_models_*.py:
// PyTorch ports of each family's Hugging Face modeling file): for every decoder layer of each
// config, whether it has RoPE and its layer type; for each distinct RoPE its head and rotary dims,
// layout, HF's float32 inv_freq bit for bit, attention scaling, softmax factor, cos/sin tables
// (plain and three-row multimodal positions) and a rotation, within posenc's 2^-22 bound.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fixture_json.hpp"
#include "posenc/posenc.hpp"

using namespace posenc;
using nlohmann::json;

namespace {

const char* const kModelFixtures[] = {
#include "model_fixture_list.inc"
};

json load_model(const std::string& id) {
  return load_fixture_json("rotary/models/" + id + ".json");
}

const char* layout_name(RotaryLayout l) {
  return l == RotaryLayout::half          ? "half"
         : l == RotaryLayout::interleaved ? "interleaved"
                                          : "deinterleave";
}

// Positions of a table or apply case: plain (one row) or [t, h, w] rows (three).
struct Positions {
  std::vector<double> flat;  // plain: count values; multimodal: t row, h row, w row
  std::int64_t count = 0;
  bool multimodal = false;
};

Positions positions_of(const json& p) {
  Positions out;
  if (!p.empty() && p[0].is_array()) {
    out.multimodal = true;
    out.count = static_cast<std::int64_t>(p[0].size());
    for (const json& row : p)
      for (const json& v : row)
        out.flat.push_back(v.get<double>());
  } else {
    out.count = static_cast<std::int64_t>(p.size());
    for (const json& v : p)
      out.flat.push_back(v.get<double>());
  }
  return out;
}

RotaryRows rows_of(const Positions& p) {
  RotaryRows rows;
  rows.count = p.count;
  if (p.multimodal)
    rows.mrope_positions = p.flat.data();
  else
    rows.positions = p.flat.data();
  return rows;
}

void check_rope(const std::string& id, std::int64_t layer, const RotarySpec& spec,
                const ModelLayer& info, const json& r) {
  INFO(id << " layer " << layer);
  CHECK(spec.head_dim == r.at("headDim").get<std::int64_t>());
  CHECK(spec.rotary_dim == r.at("rotaryDim").get<std::int64_t>());
  CHECK(std::string(layout_name(spec.layout)) == r.at("layout").get<std::string>());
  CHECK(info.softmax_scale_factor == Approx(r.at("softmaxScaleFactor").get<double>()));
  const json& m = r.at("mrope");
  if (m.is_null()) {
    CHECK(!is_multimodal(spec));
  } else {
    const std::vector<std::int64_t> want = m.at("section");
    CHECK(std::vector<std::int64_t>(spec.mrope_section.begin(), spec.mrope_section.end()) == want);
    CHECK(spec.mrope_interleaved == m.at("interleaved").get<bool>());
  }
  RotaryEmbedding rot;
  const EncodingError e = rot.init(spec, ArgumentNames::hf_config);
  INFO(e.message);
  REQUIRE(e.ok());
  const std::vector<std::uint32_t> bits = r.at("invFreq").at("bits");
  const std::vector<double>& w = rot.inverse_frequencies();
  REQUIRE(w.size() == bits.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    const float f = static_cast<float>(w[i]);
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    INFO("inv_freq[" << i << "]");
    CHECK(b == bits[i]);
  }
  const double a = r.at("attentionScaling").get<double>();
  CHECK(rot.attention_scaling() == Approx(a).epsilon(1e-15));
  const double tol = std::ldexp(1.0, -22) * std::max(1.0, a);
  for (const json& t : r.at("tables")) {
    const Positions p = positions_of(t.at("positions"));
    const std::size_t n = static_cast<std::size_t>(p.count * spec.rotary_dim);
    std::vector<float> cos(n), sin(n);
    const EncodingError ce = rot.cos_sin(rows_of(p), cos.data(), sin.data(), n, n);
    INFO(ce.message);
    REQUIRE(ce.ok());
    const std::vector<double> ec = t.at("cos"), es = t.at("sin");
    REQUIRE(ec.size() == n);
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i)
      worst = std::max({worst, std::abs(cos[i] - ec[i]), std::abs(sin[i] - es[i])});
    CHECK(worst <= tol);
  }
  const json& ap = r.at("apply");
  const Positions p = positions_of(ap.at("positions"));
  std::vector<float> x = ap.at("x").get<std::vector<float>>();
  const std::vector<double> y = ap.at("y");
  const std::int64_t heads = ap.at("heads").get<std::int64_t>();
  const EncodingError ae = rot.apply(rows_of(p), heads, x.data(), x.size());
  INFO(ae.message);
  REQUIRE(ae.ok());
  REQUIRE(y.size() == x.size());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::abs(x[i] - y[i]));
  CHECK(worst <= tol * 1.5);
}

}  // namespace

TEST_CASE("every model rule gives what the model's own code computes, layer by layer",
          "[rotary][models]") {
  for (const char* id : kModelFixtures) {
    const json f = load_model(id);
    const std::string text = f.at("config").dump();
    const json& layers = f.at("layers");
    std::set<std::int64_t> checked;
    bool differ = false;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const json& l = layers[i];
      HfConfigRequest request;
      request.layer = static_cast<std::int64_t>(i);
      RotarySpec spec;
      ModelLayer info;
      const EncodingError e = read_hf_config(text.data(), text.size(), request, &spec, &info);
      INFO(id << " layer " << i << ": " << e.message);
      REQUIRE(e.ok());
      CHECK(info.model_type == f.at("modelType").get<std::string>());
      const std::string type = l.at("layerType").is_null() ? "" : l.at("layerType");
      CHECK(info.layer_type == type);
      CHECK(info.has_rope == !l.at("rope").is_null());
      if (l.at("rope") != layers[0].at("rope")) differ = true;
      if (!l.at("rope").is_null()) {
        const std::int64_t k = l.at("rope").get<std::int64_t>();
        if (checked.insert(k).second) check_rope(id, request.layer, spec, info, f.at("ropes")[k]);
      }
      const json& a = l.at("attention");
      const std::string kind = a.at("kind");
      CHECK(info.bidirectional == (kind == "bidirectional"));
      const bool windowed =
          kind == "sliding" || (kind == "bidirectional" && !a.at("window").is_null());
      CHECK(info.sliding_window == (windowed ? a.at("window").get<std::int64_t>() : 0));
      CHECK(info.attention_chunk == (kind == "chunked" ? a.at("chunk").get<std::int64_t>() : 0));
    }
    // Without a layer: refused exactly when the layers differ in RoPE.
    RotarySpec spec;
    ModelLayer info;
    const EncodingError e =
        read_hf_config(text.data(), text.size(), HfConfigRequest{}, &spec, &info);
    INFO(id << ": " << e.message);
    CHECK(e.ok() == !differ);
    if (differ) CHECK(e.argument == "layer");
  }
}
