// The safetensors reader and the demo model (tests/fixtures/model/train_tagger.py): parity with
// PyTorch, accuracy with and without the positional encoding, the permutation property, and
// bad files.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/io/safetensors.hpp"
#include "posenc/nn/model.hpp"
#include "test_layer_util.hpp"

using namespace posenc;

namespace {

std::vector<std::uint8_t> make_file(const std::string& header, std::size_t data_bytes,
                                    std::uint8_t fill = 0) {
  std::vector<std::uint8_t> f(8 + header.size() + data_bytes, fill);
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    f[i] = static_cast<std::uint8_t>(n >> (8 * i));
  std::memcpy(f.data() + 8, header.data(), header.size());
  return f;
}

struct Tagged {
  int correct = 0, total = 0;
  double accuracy() const { return total ? double(correct) / total : 0.0; }
};

std::vector<float> run(Model& model, const std::vector<std::int32_t>& tokens, bool pe) {
  std::vector<float> logits(tokens.size() * 3);
  ModelForwardOptions o;
  o.positional_encoding = pe;
  const LayerError e = model.forward(tokens.data(), static_cast<std::int64_t>(tokens.size()), o,
                                     logits.data(), logits.size());
  INFO(e.message());
  REQUIRE(e.ok());
  return logits;
}

// The demo tagger's file with the metadata entry "positional_encoding":"vaswani" replaced by
// `entries` (JSON members, e.g. "\"positional_encoding\":\"rotary\"").
std::vector<std::uint8_t> tagger_with(const std::string& entries) {
  const auto bytes = layer_test::load_bytes("model/tagger.safetensors");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | bytes[i];
  std::string h(reinterpret_cast<const char*>(bytes.data() + 8), n);
  const std::string from = "\"positional_encoding\":\"vaswani\"";
  const auto at = h.find(from);
  REQUIRE(at != std::string::npos);
  h.replace(at, from.size(), entries);
  std::vector<std::uint8_t> f = make_file(h, 0);
  f.insert(f.end(), bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n), bytes.end());
  return f;
}

int argmax3(const float* v) {
  return v[1] > v[0] ? (v[2] > v[1] ? 2 : 1) : (v[2] > v[0] ? 2 : 0);
}

}  // namespace

TEST_CASE("safetensors: F16 and BF16 convert exactly", "[layer][safetensors]") {
  CHECK(half_to_float(0x3C00) == 1.0f);
  CHECK(half_to_float(0xC000) == -2.0f);
  CHECK(half_to_float(0x7BFF) == 65504.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(half_to_float(0x03FF) == std::ldexp(1023.0f, -24));
  CHECK(std::isinf(half_to_float(0x7C00)));
  CHECK(std::isnan(half_to_float(0x7E00)));
  CHECK(std::signbit(half_to_float(0x8000)));
  CHECK(bfloat16_to_float(0x3F80) == 1.0f);
  CHECK(bfloat16_to_float(0xC0A0) == -5.0f);

  // A file with one tensor of each dtype.
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F16","shape":[1,2],"data_offsets":[8,12]},)"
      R"("c":{"dtype":"BF16","shape":[2],"data_offsets":[12,16]},"__metadata__":{"k":"v"}})";
  auto f = make_file(header, 16);
  std::uint8_t* data = f.data() + 8 + header.size();
  const float a[2] = {1.5f, -3.25f};
  std::memcpy(data, a, 8);
  const std::uint8_t rest[8] = {0x00, 0x3C, 0x00, 0xC0, 0x80, 0x3F, 0xA0, 0xC0};
  std::memcpy(data + 8, rest, 8);
  SafetensorsFile file;
  REQUIRE(file.parse(f.data(), f.size()).ok());
  REQUIRE(file.tensors().size() == 3);
  REQUIRE(*file.metadata("k") == "v");
  float out[2];
  REQUIRE(file.read_f32(*file.find("a"), out, 2).ok());
  CHECK((out[0] == 1.5f && out[1] == -3.25f));
  REQUIRE(file.read_f32(*file.find("b"), out, 2).ok());
  CHECK((out[0] == 1.0f && out[1] == -2.0f));
  REQUIRE(file.read_f32(*file.find("c"), out, 2).ok());
  CHECK((out[0] == 1.0f && out[1] == -5.0f));
}

TEST_CASE("safetensors: bad headers give errors naming the tensor", "[layer][safetensors]") {
  struct Bad {
    std::string header;
    std::size_t data;
    LayerStatus status;
    std::string name;
  };
  const Bad cases[] = {
      {R"({"w":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", 8, LayerStatus::wrong_dtype,
       "w"},
      {R"({"w":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})", 4, LayerStatus::invalid_header,
       "w"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 8, LayerStatus::invalid_offsets,
       "w"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4, LayerStatus::invalid_offsets,
       "w"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 8, LayerStatus::invalid_offsets,
       "w"},
      {R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 8, LayerStatus::invalid_header,
       "w"},
      {R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 8,
       LayerStatus::invalid_offsets, "w"},
      {R"({"w":{"dtype":"F32","shape":[1]}})", 8, LayerStatus::invalid_header, "w"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", 8,
       LayerStatus::invalid_header, "w"},
      {R"({"w":[1,2]})", 8, LayerStatus::invalid_header, "w"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
       12, LayerStatus::invalid_offsets, "b"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       8, LayerStatus::invalid_header, "a"},
      {R"({"__metadata__":{"k":1}})", 0, LayerStatus::invalid_header, "__metadata__.k"},
      {R"({"w":)", 0, LayerStatus::malformed_file, "header"},
      {R"([1,2])", 0, LayerStatus::malformed_file, "header"},
      {"{\"w\":\"\\ud800\"}", 0, LayerStatus::malformed_file, "header"},
      {std::string(40, '[') + std::string(40, ']'), 0, LayerStatus::malformed_file, "header"},
  };
  for (const Bad& b : cases) {
    auto f = make_file(b.header, b.data);
    SafetensorsFile file;
    const LayerError e = file.parse(f.data(), f.size());
    INFO(b.header << " -> " << e.message());
    CHECK(e.status == b.status);
    CHECK(e.name == b.name);
    CHECK(file.tensors().empty());
  }
  // Header length beyond the file, and files too short to hold one.
  auto f = make_file(R"({})", 0);
  f[0] = 200;
  SafetensorsFile file;
  CHECK(file.parse(f.data(), f.size()).name == "header length");
  CHECK(file.parse(f.data(), 5).status == LayerStatus::malformed_file);
  CHECK(file.parse(nullptr, 0).status == LayerStatus::malformed_file);
  f = make_file(R"({})", 0);
  CHECK(file.parse(f.data(), f.size()).ok());
}

TEST_CASE("model: the trained tagger matches PyTorch; accuracy with and without PE",
          "[layer][model]") {
  const auto bytes = layer_test::load_bytes("model/tagger.safetensors");
  const auto fx = layer_test::load_json("model/tagger.json");
  REQUIRE(!bytes.empty());
  REQUIRE(fx.is_object());
  Model model;
  const LayerError e = model.load(bytes.data(), bytes.size());
  INFO(e.message());
  REQUIRE(e.ok());
  CHECK(model.config().layer.d_model == 32);
  CHECK(model.config().num_classes == 3);
  CHECK(model.config().positional_encoding == "vaswani");

  Tagged with_pe, without_pe;
  double err_pe = 0.0, err_no_pe = 0.0;
  for (const auto& c : fx.at("cases")) {
    const auto tokens = c.at("tokens").get<std::vector<std::int32_t>>();
    const auto tags = c.at("tags").get<std::vector<int>>();
    const auto a = run(model, tokens, true);
    const auto b = run(model, tokens, false);
    err_pe = std::max(err_pe,
                      layer_test::max_abs_diff(a, c.at("logitsWithPE").get<std::vector<double>>()));
    err_no_pe = std::max(
        err_no_pe, layer_test::max_abs_diff(b, c.at("logitsWithoutPE").get<std::vector<double>>()));
    for (std::size_t i = 0; i < tags.size(); ++i) {
      if (tags[i] == 0) continue;  // the noun roles: acts / acted upon
      with_pe.correct += argmax3(&a[i * 3]) == tags[i];
      ++with_pe.total;
      without_pe.correct += argmax3(&b[i * 3]) == tags[i];
      ++without_pe.total;
    }
  }
  std::printf(
      "[model] %s held-out who-acts/acted-upon accuracy: with PE %.3f (%d/%d), without PE "
      "%.3f; max|logits - torch| with PE %.2e, without %.2e\n",
      gemm_uses_simd() ? "simd" : "scalar", with_pe.accuracy(), with_pe.correct, with_pe.total,
      without_pe.accuracy(), err_pe, err_no_pe);
  CHECK(with_pe.accuracy() >= 0.98);
  CHECK(without_pe.accuracy() <= 0.55);  // a bag of words: each swapped pair scores 1 of 2
  CHECK(err_pe <= 2e-5);
  CHECK(err_no_pe <= 2e-5);
}

TEST_CASE("model: without PE permuting the tokens permutes the outputs; with PE it does not",
          "[layer][model]") {
  const auto bytes = layer_test::load_bytes("model/tagger.safetensors");
  const auto fx = layer_test::load_json("model/tagger.json");
  Model model;
  REQUIRE(model.load(bytes.data(), bytes.size()).ok());
  const auto vocab = fx.at("vocab").get<std::vector<std::string>>();
  auto id = [&](const std::string& w) {
    return static_cast<std::int32_t>(std::find(vocab.begin(), vocab.end(), w) - vocab.begin());
  };
  // "the dog bit the man" and "the man bit the dog": the same tokens, positions 1 and 4 swapped.
  const std::vector<std::int32_t> s1 = {id("the"), id("dog"), id("bit"), id("the"), id("man")};
  std::vector<std::int32_t> s2 = s1;
  std::swap(s2[1], s2[4]);
  // Any permutation: reversed.
  std::vector<std::int32_t> s3(s1.rbegin(), s1.rend());

  const auto a = run(model, s1, false), b = run(model, s2, false), r = run(model, s3, false);
  double worst = 0.0;
  const int perm_swap[] = {0, 4, 2, 3, 1};
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 3; ++k) {
      worst = std::max(worst, double(std::fabs(a[i * 3 + k] - b[perm_swap[i] * 3 + k])));
      worst = std::max(worst, double(std::fabs(a[i * 3 + k] - r[(4 - i) * 3 + k])));
    }
  // Exactly equal: attention sums over keys in an order set by their content, not their
  // positions (test_layer_permutation.cpp checks this bit for bit, attention included).
  std::printf("[model] without PE: max |out(perm x) - perm out(x)| = %.2e\n", worst);
  CHECK(worst == 0.0);
  CHECK(argmax3(&a[1 * 3]) == argmax3(&b[4 * 3]));  // "dog" gets the same tag either way

  const auto pa = run(model, s1, true), pb = run(model, s2, true);
  // With PE: the dog acts in s1 and is acted upon in s2.
  CHECK(argmax3(&pa[1 * 3]) == 1);
  CHECK(argmax3(&pa[4 * 3]) == 2);
  CHECK(argmax3(&pb[4 * 3]) == 2);
  CHECK(argmax3(&pb[1 * 3]) == 1);
  double moved = 0.0;
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 3; ++k)
      moved = std::max(moved, double(std::fabs(pa[i * 3 + k] - pb[perm_swap[i] * 3 + k])));
  CHECK(moved > 1.0);
}

TEST_CASE("model: bad files and bad tokens give named errors; the model keeps working",
          "[layer][model]") {
  const auto bytes = layer_test::load_bytes("model/tagger.safetensors");
  Model model;
  REQUIRE(model.load(bytes.data(), bytes.size()).ok());
  const std::vector<std::int32_t> tokens = {1, 2, 3};
  const auto before = run(model, tokens, true);

  // Every truncation fails cleanly.
  for (std::size_t n = 0; n < bytes.size(); n += (n < 600 ? 1 : 97))
    CHECK(!model.load(bytes.data(), n).ok());
  // Random corruption of the header never crashes (most are rejected, a few may still load).
  std::uint32_t state = 12345;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<std::uint8_t> copy = bytes;
    for (int k = 0; k < 3; ++k) {
      state = state * 1664525u + 1013904223u;
      const std::size_t at = (state >> 8) % 2048;
      state = state * 1664525u + 1013904223u;
      copy[at] = static_cast<std::uint8_t>(state >> 24);
    }
    Model other;
    (void)other.load(copy.data(), copy.size());
  }

  // Tokens out of range, bad lengths.
  std::vector<float> logits(9);
  const std::int32_t bad[] = {1, 999, 2};
  LayerError e = model.forward(bad, 3, {}, logits.data(), logits.size());
  CHECK(e.status == LayerStatus::invalid_token);
  CHECK(e.name == "tokens[1]");
  const std::int32_t negative[] = {-1, 1, 2};
  CHECK(model.forward(negative, 3, {}, logits.data(), logits.size()).name == "tokens[0]");
  CHECK(model.forward(tokens.data(), 0, {}, logits.data(), logits.size()).name == "length");
  CHECK(model.forward(tokens.data(), 3, {}, logits.data(), 8).name == "logits");
  CHECK(run(model, tokens, true) == before);

  // A tensor missing, an extra one, a wrong shape, a bad metadata value: rebuild the header.
  SafetensorsFile file;
  REQUIRE(file.parse(bytes.data(), bytes.size()).ok());
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | bytes[i];
  const std::string header(reinterpret_cast<const char*>(bytes.data() + 8), n);
  auto with_header = [&](std::string h) {
    std::vector<std::uint8_t> f = make_file(h, 0);
    f.insert(f.end(), bytes.begin() + 8 + n, bytes.end());
    return f;
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string h = header;
    const auto at = h.find(from);
    REQUIRE(at != std::string::npos);
    h.replace(at, from.size(), to);
    return with_header(h);
  };
  struct Edit {
    std::string from, to;
    LayerStatus status;
    std::string name;
  };
  const Edit edits[] = {
      {"\"head.bias\"", "\"head.bias2\"", LayerStatus::missing_tensor, "head.bias"},
      {"\"layers.1.norm2.bias\"", "\"layers.1.norm3.bias\"", LayerStatus::missing_tensor,
       "layers.1.norm2.bias"},
      {"\"num_layers\":\"2\"", "\"num_layers\":\"1\"", LayerStatus::unknown_tensor, ""},
      {"\"heads\":\"2\"", "\"heads\":\"3\"", LayerStatus::invalid_metadata, "__metadata__.heads"},
      {"\"positional_encoding\":\"vaswani\"", "\"positional_encoding\":\"nope\"",
       LayerStatus::invalid_metadata, "__metadata__.positional_encoding"},
      {"\"dtype\":\"F16\"", "\"dtype\":\"I16\"", LayerStatus::wrong_dtype, ""},
  };
  for (const Edit& ed : edits) {
    const auto f = replace(ed.from, ed.to);
    e = model.load(f.data(), f.size());
    INFO(ed.to << " -> " << e.message());
    CHECK(e.status == ed.status);
    if (!ed.name.empty()) CHECK(e.name == ed.name);
    if (ed.name.empty()) CHECK(!e.name.empty());
  }
  CHECK(run(model, tokens, true) == before);
}

TEST_CASE("model: rotary and ALiBi from __metadata__, checked as strictly as the other keys",
          "[layer][model][position]") {
  // The tagger (d 32, 2 heads) with its positional_encoding entry replaced.
  auto with_position = [](const std::string& entries) { return tagger_with(entries); };
  const std::vector<std::int32_t> tokens = {26, 3, 4, 26, 19, 0, 12};
  auto logits = [&](Model& m, const ModelForwardOptions& o) {
    std::vector<float> out(tokens.size() * 3);
    const LayerError e = m.forward(tokens.data(), static_cast<std::int64_t>(tokens.size()), o,
                                   out.data(), out.size());
    INFO(e.message());
    REQUIRE(e.ok());
    return out;
  };

  Model none, rotary, alibi;
  auto f = with_position("\"positional_encoding\":\"none\"");
  REQUIRE(none.load(f.data(), f.size()).ok());
  f = with_position(
      "\"positional_encoding\":\"rotary\",\"rope_theta\":\"500\",\"partial_rotary_factor\":"
      "\"0.5\",\"rotary_layout\":\"interleaved\",\"rope_scaling\":\"null\",\"copy_distance\":"
      "\"3\",\"symbols\":\"a b c\",\"train_max_length\":\"64\"");
  LayerError e = rotary.load(f.data(), f.size());
  INFO(e.message());
  REQUIRE(e.ok());
  const PositionConfig& rp = rotary.config().layer.position;
  CHECK(rp.method == PositionMethod::rotary);
  CHECK(rp.rope_theta == 500.0);
  CHECK(rp.rotary_dim == 8);
  CHECK(rp.rotary_layout == RotaryLayout::interleaved);
  CHECK(rotary.config().task == "tag who acts (1), who is acted upon (2), neither (0)");
  CHECK(rotary.config().symbols == "a b c");
  CHECK(rotary.config().copy_distance == 3);
  CHECK(rotary.config().train_max_length == 64);
  CHECK(none.config().copy_distance == -1);
  f = with_position("\"positional_encoding\":\"alibi\",\"alibi_mode\":\"symmetric\"");
  REQUIRE(alibi.load(f.data(), f.size()).ok());
  CHECK(alibi.config().layer.position.method == PositionMethod::alibi);
  CHECK(alibi.config().layer.position.alibi_mode == AlibiMode::symmetric);

  ModelForwardOptions o;
  const auto plain = logits(none, o);
  CHECK(layer_test::max_abs_diff(logits(rotary, o), plain) > 1e-3);
  CHECK(layer_test::max_abs_diff(logits(alibi, o), plain) > 1e-3);
  o.position_offset = 100.0;  // ALiBi sees only distances: the same to rounding
  const auto shifted = logits(alibi, o);
  o.position_offset = 0.0;
  CHECK(layer_test::max_abs_diff(shifted, logits(alibi, o)) < 1e-4);
  o.positional_encoding = false;  // the layers without their step: the model without PE, exactly
  CHECK(logits(rotary, o) == plain);
  CHECK(logits(alibi, o) == plain);
  o.positional_encoding = true;
  o.position_offset = -1.0;
  std::vector<float> out(tokens.size() * 3);
  e = alibi.forward(tokens.data(), 7, o, out.data(), out.size());
  CHECK(e.status == LayerStatus::invalid_position);
  CHECK(e.name == "positionOffset");

  struct Bad {
    std::string entries;
    LayerStatus status;
    std::string name;
  };
  const Bad bad[] = {
      {"\"positional_encoding\":\"rope\"", LayerStatus::invalid_metadata,
       "__metadata__.positional_encoding"},
      {"\"positional_encoding\":\"rotary\",\"rope_theta\":\"1\"", LayerStatus::invalid_metadata,
       "__metadata__.rope_theta"},
      {"\"positional_encoding\":\"rotary\",\"rope_theta\":\"1e999\"", LayerStatus::invalid_metadata,
       "__metadata__.rope_theta"},
      {"\"positional_encoding\":\"rotary\",\"rope_theta\":\"ten\"", LayerStatus::invalid_metadata,
       "__metadata__.rope_theta"},
      {"\"positional_encoding\":\"rotary\",\"rope_scaling\":\"{\\\"type\\\":\"",
       LayerStatus::invalid_metadata, "__metadata__.rope_scaling"},
      {"\"positional_encoding\":\"rotary\",\"rope_scaling\":\"{\\\"type\\\":\\\"linear\\\","
       "\\\"factor\\\":2.0}\"",
       LayerStatus::unsupported_metadata, "__metadata__.rope_scaling"},
      {"\"positional_encoding\":\"rotary\",\"partial_rotary_factor\":\"0.1\"",
       LayerStatus::invalid_metadata, "__metadata__.partial_rotary_factor"},
      {"\"positional_encoding\":\"rotary\",\"partial_rotary_factor\":\"1.5\"",
       LayerStatus::invalid_metadata, "__metadata__.partial_rotary_factor"},
      {"\"positional_encoding\":\"rotary\",\"partial_rotary_factor\":\"0\"",
       LayerStatus::invalid_metadata, "__metadata__.partial_rotary_factor"},
      {"\"positional_encoding\":\"rotary\",\"rotary_layout\":\"neox\"",
       LayerStatus::invalid_metadata, "__metadata__.rotary_layout"},
      {"\"positional_encoding\":\"alibi\",\"alibi_mode\":\"both\"", LayerStatus::invalid_metadata,
       "__metadata__.alibi_mode"},
      {"\"positional_encoding\":\"vaswani\",\"rope_theta\":\"0.5\"", LayerStatus::invalid_metadata,
       "__metadata__.rope_theta"},
      {"\"positional_encoding\":\"alibi\",\"copy_distance\":\"-2\"", LayerStatus::invalid_metadata,
       "__metadata__.copy_distance"},
      {"\"positional_encoding\":\"alibi\",\"train_max_length\":\"0\"",
       LayerStatus::invalid_metadata, "__metadata__.train_max_length"},
  };
  for (const Bad& b : bad) {
    f = with_position(b.entries);
    Model m;
    e = m.load(f.data(), f.size());
    INFO(b.entries << " -> " << e.message());
    CHECK(e.status == b.status);
    CHECK(e.name == b.name);
  }
  f = with_position("\"positional_encoding\":\"rotary\",\"rope_scaling\":\"{}\"");
  Model m;
  e = m.load(f.data(), f.size());
  CHECK(e.message() == "__metadata__.rope_scaling: not supported in the layer yet");
}

TEST_CASE("model: a forward at L = 4096 with rotary runs; its causal prefix is exact",
          "[layer][model][position][long]") {
  const std::vector<std::uint8_t> f = tagger_with("\"positional_encoding\":\"rotary\"");
  Model model;
  REQUIRE(model.load(f.data(), f.size()).ok());
  const std::int64_t l = 4096;
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(l));
  for (std::int64_t i = 0; i < l; ++i)
    tokens[static_cast<std::size_t>(i)] = static_cast<std::int32_t>((i * 7 + i / 5) % 30);
  ModelForwardOptions o;
  o.causal = true;
  std::vector<float> logits(static_cast<std::size_t>(l * 3)), head(300);
  REQUIRE(model.forward(tokens.data(), l, o, logits.data(), logits.size()).ok());
  CHECK(model.attention_length() == l);
  REQUIRE(model.forward(tokens.data(), 100, o, head.data(), head.size()).ok());
  CHECK(std::equal(head.begin(), head.end(), logits.begin()));
  for (float v : logits)
    REQUIRE(std::isfinite(v));
}
