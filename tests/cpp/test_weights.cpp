// Bad weights: safetensors files that are corrupt in one targeted way, non-finite
// weights, metadata errors named after the key they come from, and the regression tests of what
// fuzz/fuzz_safetensors.cpp and the JS tests found. Every error names its tensor or key; the
// model or layer that refused something keeps working.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "nn/tensor_check.hpp"
#include "posenc/io/safetensors.hpp"
#include "posenc/nn/model.hpp"
#include "posenc/nn/transformer_layer.hpp"
#include "test_layer_util.hpp"

using namespace posenc;

namespace {

struct Tensor {
  std::string name;
  std::string dtype;  // "F32", "F16" or "BF16"
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

std::uint16_t to_bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<std::uint16_t>(bits >> 16);  // exact for the values used here
}

// float32 -> IEEE half for values that are exact in half, and inf / NaN.
std::uint16_t to_f16(float f) {
  if (std::isnan(f)) return 0x7E00;
  if (std::isinf(f)) return f > 0 ? 0x7C00 : 0xFC00;
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  f = std::fabs(f);
  if (f == 0.0f) return sign;
  int e;
  const float m = std::frexp(f, &e);  // f = m 2^e, m in [0.5, 1)
  const auto mantissa = static_cast<std::uint16_t>(std::lround((m * 2.0f - 1.0f) * 1024.0f));
  return static_cast<std::uint16_t>(sign | ((e - 1 + 15) << 10) | mantissa);
}

// The 8-byte little-endian header length, the header, the data.
std::vector<std::uint8_t> framed(const std::string& header, const std::uint8_t* data,
                                 std::size_t size) {
  std::vector<std::uint8_t> file(8 + header.size() + size);
  for (int i = 0; i < 8; ++i)
    file[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(header.size()) >> (8 * i));
  std::memcpy(file.data() + 8, header.data(), header.size());
  if (size != 0) std::memcpy(file.data() + 8 + header.size(), data, size);
  return file;
}

// A valid safetensors file: contiguous data_offsets in the order given, optional metadata.
std::vector<std::uint8_t> write_file(const std::vector<Tensor>& tensors,
                                     const std::vector<std::pair<std::string, std::string>>& meta,
                                     std::string* header_out = nullptr) {
  std::string header = "{";
  std::vector<std::uint8_t> data;
  for (const Tensor& t : tensors) {
    const std::size_t begin = data.size();
    for (float v : t.values) {
      if (t.dtype == "F32") {
        std::uint8_t b[4];
        std::memcpy(b, &v, 4);
        data.insert(data.end(), b, b + 4);
      } else {
        const std::uint16_t h = t.dtype == "F16" ? to_f16(v) : to_bf16(v);
        data.push_back(static_cast<std::uint8_t>(h & 0xFF));
        data.push_back(static_cast<std::uint8_t>(h >> 8));
      }
    }
    std::string shape;
    for (std::int64_t d : t.shape)
      shape += (shape.empty() ? "" : ",") + std::to_string(d);
    if (header.size() > 1) header += ",";
    header += "\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(data.size()) +
              "]}";
  }
  if (!meta.empty()) {
    header += std::string(header.size() > 1 ? "," : "") + "\"__metadata__\":{";
    for (std::size_t i = 0; i < meta.size(); ++i)
      header += (i ? ",\"" : "\"") + meta[i].first + "\":\"" + meta[i].second + "\"";
    header += "}";
  }
  header += "}";
  if (header_out != nullptr) *header_out = header;
  return framed(header, data.data(), data.size());
}

// The same file with its header replaced (the data kept).
std::vector<std::uint8_t> with_header(const std::vector<std::uint8_t>& file,
                                      const std::string& header) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | file[i];
  const std::size_t data_begin = 8 + static_cast<std::size_t>(n);
  return framed(header, file.data() + data_begin, file.size() - data_begin);
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// A small valid model: d 4, 2 heads, ff 8, one layer, vocab 5, 2 classes.
struct SmallModel {
  std::vector<Tensor> tensors;
  std::vector<std::pair<std::string, std::string>> meta = {
      {"heads", "2"}, {"num_layers", "1"}, {"positional_encoding", "vaswani"}};

  explicit SmallModel(const std::string& dtype = "F32") {
    tensors.push_back({"embedding.weight", dtype, {5, 4}, layer_test::lcg_values(1, 20, 1.0)});
    for (auto& t : layer_test::layer_state(2, 4, 8))
      tensors.push_back({"layers.0." + t.name, dtype, t.shape, t.values});
    tensors.push_back({"head.weight", dtype, {2, 4}, layer_test::lcg_values(3, 8, 0.5)});
    tensors.push_back({"head.bias", dtype, {2}, {0.25f, -0.25f}});
    for (Tensor& t : tensors)  // multiples of 2^-7 below 2: exact in F16 and BF16 too
      for (float& v : t.values)
        v = std::round(v * 128.0f) / 128.0f;
  }
  std::vector<std::uint8_t> file(std::string* header = nullptr) const {
    return write_file(tensors, meta, header);
  }
  Tensor& tensor(const std::string& name) {
    for (Tensor& t : tensors)
      if (t.name == name) return t;
    FAIL("no tensor " << name);
    return tensors[0];
  }
};

std::vector<float> logits_of(Model& model, const std::vector<std::int32_t>& tokens) {
  std::vector<float> logits(tokens.size() * static_cast<std::size_t>(model.config().num_classes));
  const LayerError e = model.forward(tokens.data(), static_cast<std::int64_t>(tokens.size()), {},
                                     logits.data(), logits.size());
  INFO(e.message());
  REQUIRE(e.ok());
  return logits;
}

// Loads bytes into a model that already holds `good`, expects the error, then checks the model
// still gives the same logits.
void expect_load_error(const std::vector<std::uint8_t>& bytes, LayerStatus status,
                       const std::string& name) {
  static const std::vector<std::int32_t> tokens = {0, 3, 1, 4};
  Model model;
  const auto good = SmallModel().file();
  REQUIRE(model.load(good.data(), good.size()).ok());
  const auto before = logits_of(model, tokens);
  const LayerError e = model.load(bytes.data(), bytes.size());
  INFO("expected " << name << ", got " << e.message());
  CHECK(e.status == status);
  CHECK(e.name == name);
  CHECK(logits_of(model, tokens) == before);
}

}  // namespace

TEST_CASE("weights: the test file writer makes loadable F32, F16 and BF16 models",
          "[layer][weights]") {
  std::vector<float> reference;
  for (const char* dtype : {"F32", "F16", "BF16"}) {
    const auto bytes = SmallModel(dtype).file();
    Model model;
    const LayerError e = model.load(bytes.data(), bytes.size());
    INFO(dtype << ": " << e.message());
    REQUIRE(e.ok());
    const auto logits = logits_of(model, {0, 3, 1, 4});
    if (reference.empty()) reference = logits;
    CHECK(logits == reference);  // the values are exact in every dtype
  }
}

TEST_CASE("weights: NaN and infinity are refused at load, naming the element", "[layer][weights]") {
  struct Case {
    std::string dtype, tensor;
    std::size_t index;
    float value;
    std::string name;
  };
  const Case cases[] = {
      {"F32", "embedding.weight", 6, NAN, "embedding.weight[1][2]"},
      {"F16", "embedding.weight", 0, INFINITY, "embedding.weight[0][0]"},
      {"BF16", "head.weight", 7, -INFINITY, "head.weight[1][3]"},
      {"F32", "head.bias", 1, NAN, "head.bias[1]"},
      {"F16", "layers.0.norm1.weight", 3, NAN, "layers.0.norm1.weight[3]"},
      {"F32", "layers.0.linear1.weight", 9, INFINITY, "layers.0.linear1.weight[2][1]"},
      {"BF16", "layers.0.self_attn.in_proj_weight", 47, NAN,
       "layers.0.self_attn.in_proj_weight[11][3]"},
  };
  for (const Case& c : cases) {
    SmallModel m(c.dtype);
    m.tensor(c.tensor).values[c.index] = c.value;
    expect_load_error(m.file(), LayerStatus::non_finite, c.name);
  }
  // The largest finite values are accepted (and may overflow later: that is propagated).
  SmallModel big("F16");
  big.tensor("head.bias").values[0] = 65504.0f;
  const auto bytes = big.file();
  Model model;
  CHECK(model.load(bytes.data(), bytes.size()).ok());
}

TEST_CASE(
    "weights: TransformerEncoderLayer::set_tensor refuses NaN and infinity, naming the element",
    "[layer][weights]") {
  LayerConfig config;
  config.d_model = 4;
  config.heads = 2;
  config.ff_dim = 8;
  TransformerEncoderLayer layer;
  REQUIRE(layer.configure(config).ok());
  auto state = layer_test::layer_state(5, 4, 8);
  for (const auto& t : state)
    REQUIRE(layer.set_tensor(t.name, t.values.data(), t.values.size()).ok());
  std::vector<float> x = layer_test::layer_input(5, 3, 4), good(12), again(12);
  REQUIRE(layer.forward(x.data(), 12, 3, {}, good.data(), 12).ok());

  auto bad = state[4].values;  // linear1.weight [8, 4]
  bad[13] = NAN;
  LayerError e = layer.set_tensor("linear1.weight", bad.data(), bad.size());
  CHECK(e.status == LayerStatus::non_finite);
  CHECK(e.name == "linear1.weight[3][1]");
  CHECK(e.message() == "linear1.weight[3][1]: weight is NaN or infinite (weights must be finite)");
  auto norm = state[8].values;  // norm1.weight [4]
  norm[2] = -INFINITY;
  e = layer.set_tensor("norm1.weight", norm.data(), norm.size());
  CHECK(e.name == "norm1.weight[2]");
  // The refused tensors left the old ones in place.
  REQUIRE(layer.forward(x.data(), 12, 3, {}, again.data(), 12).ok());
  CHECK(again == good);
}

TEST_CASE("weights: data_offsets must tile the data (no overlap, gap or trailing bytes)",
          "[layer][weights]") {
  std::string header;
  const auto file = write_file({{"a", "F32", {2}, {1, 2}}, {"b", "F32", {1}, {3}}}, {}, &header);
  SafetensorsFile reader;
  REQUIRE(reader.parse(file.data(), file.size()).ok());

  struct Case {
    std::string from, to;
    std::size_t extra_bytes;
    LayerStatus status;
    std::string name;
  };
  const Case cases[] = {
      // b starts inside a.
      {"[8,12]", "[4,8]", 0, LayerStatus::invalid_offsets, "b"},
      // a gap of 4 bytes before b (and the file 4 bytes longer so b still fits).
      {"[8,12]", "[12,16]", 4, LayerStatus::uncovered_data, "b"},
      // b inside a from its first byte (sorted by offsets, a comes second and overlaps b).
      {"[8,12]", "[0,4]", 0, LayerStatus::invalid_offsets, "a"},
      // Bytes after the last tensor.
      {"[8,12]", "[8,12]", 4, LayerStatus::uncovered_data, "data"},
      // b beyond the data.
      {"[8,12]", "[12,16]", 0, LayerStatus::invalid_offsets, "b"},
  };
  for (const Case& c : cases) {
    auto bytes = with_header(file, replaced(header, c.from, c.to));
    bytes.resize(bytes.size() + c.extra_bytes);
    const LayerError e = reader.parse(bytes.data(), bytes.size());
    INFO(c.from << " -> " << c.to << " + " << c.extra_bytes << ": " << e.message());
    CHECK(e.status == c.status);
    CHECK(e.name == c.name);
  }
  // a gap before the first tensor: the data starts with 4 unused bytes.
  auto gap = with_header(file, replaced(replaced(header, "[0,8]", "[4,12]"), "[8,12]", "[12,16]"));
  gap.resize(gap.size() + 4);
  CHECK(reader.parse(gap.data(), gap.size()).name == "a");
  // Empty tensors take no bytes and may sit at any boundary.
  const auto empties =
      write_file({{"e", "F32", {0}, {}}, {"a", "F32", {1}, {1}}, {"z", "F16", {3, 0}, {}}}, {});
  CHECK(reader.parse(empties.data(), empties.size()).ok());
}

TEST_CASE("weights: an empty tensor name is refused and named \"\" (found by fuzz_safetensors)",
          "[layer][weights]") {
  // The fuzzer's input: an entry named "" (with a bad dtype and a misspelt key). Its error had
  // an empty name, so the message named nothing.
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"":{"dtype":"F65","shape":[1],)"
      R"("data_offsetss":[4,12]}}    )";
  const std::uint8_t data[10] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0};
  auto bytes = framed(header, data, sizeof data);
  SafetensorsFile reader;
  LayerError e = reader.parse(bytes.data(), bytes.size());
  CHECK(e.status == LayerStatus::invalid_header);
  CHECK(e.name == "\"\"");
  CHECK(e.message().rfind("\"\": invalid safetensors header entry", 0) == 0);
  // A valid entry named "" is refused the same way; "" as a metadata key is fine.
  bytes = write_file({{"", "F32", {1}, {1}}}, {});
  e = reader.parse(bytes.data(), bytes.size());
  CHECK(e.status == LayerStatus::invalid_header);
  CHECK(e.name == "\"\"");
  // The fuzzer's second input: "" twice, which the duplicate check reported with an empty name.
  const std::string twice =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"":{"dtype":"F65","ts":[0,8]},)"
      R"("":{"dtyfsetss":[4,12]}}    )";
  bytes = framed(twice, data, sizeof data);
  e = reader.parse(bytes.data(), bytes.size());
  CHECK(e.status == LayerStatus::invalid_header);
  CHECK(e.name == "\"\"");
  bytes = write_file({{"a", "F32", {1}, {1}}}, {{"", "empty key"}});
  REQUIRE(reader.parse(bytes.data(), bytes.size()).ok());
  CHECK(*reader.metadata("") == "empty key");
}

TEST_CASE("weights: header strings must be valid UTF-8", "[layer][weights]") {
  auto file_with_key = [](const std::string& key) {
    return write_file({{key, "F32", {1}, {1}}}, {{"note", key}});
  };
  SafetensorsFile reader;
  for (const std::string good :
       {"caf\xC3\xA9", "\xE2\x98\x83", "\xF0\x9F\x98\x80", "\xEF\xBF\xBF"}) {
    const auto bytes = file_with_key(good);
    INFO(good);
    REQUIRE(reader.parse(bytes.data(), bytes.size()).ok());
    CHECK(reader.find(good) != nullptr);
    CHECK(*reader.metadata("note") == good);
  }
  const std::string bad[] = {
      "\x80",              // a lone continuation byte
      "\xC0\x80",          // overlong NUL
      "\xE0\x80\xAF",      // overlong '/'
      "\xED\xA0\x80",      // a UTF-16 surrogate
      "\xF4\x90\x80\x80",  // above U+10FFFF
      "\xF8\x88\x80\x80",  // a 5-byte form
      "\xC3",              // cut short by the closing quote
      "\xE2\x98",          // cut short
      "\xFF",
  };
  for (const std::string& b : bad) {
    const auto bytes = file_with_key("w" + b);
    const LayerError e = reader.parse(bytes.data(), bytes.size());
    INFO("key bytes " << b.size());
    CHECK(e.status == LayerStatus::malformed_file);
    CHECK(e.name == "header");
  }
}

TEST_CASE("weights: bad metadata and shapes name the key or tensor they come from",
          "[layer][weights]") {
  struct Case {
    std::string key, value;
    LayerStatus status;
    std::string name;
  };
  const Case cases[] = {
      {"layer_norm_eps", "-1e-5", LayerStatus::invalid_metadata, "__metadata__.layer_norm_eps"},
      {"layer_norm_eps", "abc", LayerStatus::invalid_metadata, "__metadata__.layer_norm_eps"},
      {"heads", "3", LayerStatus::invalid_metadata, "__metadata__.heads"},
      {"heads", "0", LayerStatus::invalid_metadata, "__metadata__.heads"},
      {"heads", "2.0", LayerStatus::invalid_metadata, "__metadata__.heads"},
      {"num_layers", "0", LayerStatus::invalid_metadata, "__metadata__.num_layers"},
      {"num_layers", "2", LayerStatus::missing_tensor, "layers.1.self_attn.in_proj_weight"},
      {"activation", "tanh", LayerStatus::invalid_metadata, "__metadata__.activation"},
      {"norm_first", "yes", LayerStatus::invalid_metadata, "__metadata__.norm_first"},
      {"positional_encoding", "whisper3", LayerStatus::invalid_metadata,
       "__metadata__.positional_encoding"},
      // A float32 multiplier: 1e39 would be infinite.
      {"embedding_scale", "1e39", LayerStatus::invalid_metadata, "__metadata__.embedding_scale"},
      {"embedding_scale", "1e-400x", LayerStatus::invalid_metadata, "__metadata__.embedding_scale"},
  };
  for (const Case& c : cases) {
    SmallModel m;
    bool found = false;
    for (auto& kv : m.meta)
      if (kv.first == c.key) kv.second = c.value, found = true;
    if (!found) m.meta.emplace_back(c.key, c.value);
    expect_load_error(m.file(), c.status, c.name);
  }
  for (const char* key : {"heads", "num_layers", "positional_encoding"}) {
    SmallModel m;
    for (auto it = m.meta.begin(); it != m.meta.end(); ++it)
      if (it->first == key) {
        m.meta.erase(it);
        break;
      }
    expect_load_error(m.file(), LayerStatus::invalid_metadata, std::string("__metadata__.") + key);
  }
  // A positional encoding the model's width does not allow (whisper needs d >= 4: here d = 2).
  {
    SmallModel m;
    m.meta[2].second = "whisper";
    m.tensor("embedding.weight").shape = {10, 2};
    expect_load_error(m.file(), LayerStatus::invalid_metadata, "__metadata__.positional_encoding");
  }
  // Shapes: ff from linear1, d from the embedding, classes from the head.
  {
    SmallModel m;
    m.tensor("layers.0.linear1.weight").shape = {0, 4};
    m.tensor("layers.0.linear1.weight").values.clear();
    expect_load_error(m.file(), LayerStatus::wrong_shape, "layers.0.linear1.weight");
  }
  {
    SmallModel m;
    m.tensor("embedding.weight").shape = {4, 5};  // d = 5: the 2 heads do not divide it
    expect_load_error(m.file(), LayerStatus::invalid_metadata, "__metadata__.heads");
  }
  {
    SmallModel m;
    m.tensor("embedding.weight").shape = {10, 2};  // d = 2: the head is [2, 4]
    expect_load_error(m.file(), LayerStatus::wrong_shape, "head.weight");
  }
  {
    SmallModel m;
    m.tensor("embedding.weight").shape = {20};
    expect_load_error(m.file(), LayerStatus::wrong_shape, "embedding.weight");
  }
  {
    SmallModel m;
    m.tensor("head.weight").shape = {4, 2};
    expect_load_error(m.file(), LayerStatus::wrong_shape, "head.weight");
  }
  {
    SmallModel m;
    m.tensor("head.bias").shape = {1, 2};
    expect_load_error(m.file(), LayerStatus::wrong_shape, "head.bias");
  }
  {
    SmallModel m;
    m.tensor("layers.0.norm2.bias").shape = {2, 2};
    expect_load_error(m.file(), LayerStatus::wrong_shape, "layers.0.norm2.bias");
  }
  // Missing and extra tensors.
  {
    SmallModel m;
    m.tensors.erase(m.tensors.begin() + 5);
    expect_load_error(m.file(), LayerStatus::missing_tensor, "layers.0.linear1.weight");
  }
  {
    SmallModel m;
    m.tensors.push_back({"layers.0.dropout.weight", "F32", {1}, {0}});
    expect_load_error(m.file(), LayerStatus::unknown_tensor, "layers.0.dropout.weight");
  }
}

TEST_CASE("weights: a header of many keys is refused quickly, duplicates named",
          "[layer][weights]") {
  // 20,000 empty tensors and one duplicate at the end: the duplicate check sorts the keys rather
  // than comparing every pair.
  std::string header = "{";
  for (int i = 0; i < 20000; ++i)
    header +=
        "\"t" + std::to_string(i) + "\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},";
  header += "\"t17\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}";
  const auto bytes = with_header(write_file({}, {}), header);
  SafetensorsFile reader;
  const LayerError e = reader.parse(bytes.data(), bytes.size());
  CHECK(e.status == LayerStatus::invalid_header);
  CHECK(e.name == "t17");
  // Without the duplicate it parses; a model from it names the first unknown tensor.
  header.replace(header.rfind("\"t17\""), 5, "\"t20000\"");
  const auto ok_bytes = with_header(write_file({}, {}), header);
  REQUIRE(reader.parse(ok_bytes.data(), ok_bytes.size()).ok());
  CHECK(reader.tensors().size() == 20001);
}

TEST_CASE("weights: workspace sizes are checked before allocating (wasm32 overflow)",
          "[layer][weights]") {
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  std::size_t product = 0;
  CHECK(detail::checked_multiply(max / 2, 2, &product));
  CHECK(product == max - 1);
  CHECK_FALSE(detail::checked_multiply(max / 2 + 1, 2, &product));
  CHECK_FALSE(detail::checked_multiply(std::size_t{1} << (4 * sizeof(std::size_t)),
                                       std::size_t{1} << (4 * sizeof(std::size_t)), &product));

  // 256 heads x 8192 x 8192 attention probabilities: 2^34 floats, a product that wrapped to 0 in
  // wasm32 (found by the JS tests: the forward then wrote past a 16-byte buffer and trapped). It
  // cannot be allocated anywhere: forward must refuse it with out_of_memory, then keep working.
  // Natively (64-bit size_t) the product fits and the allocation itself fails, which needs a
  // machine with less than 64 GB to spare; so the full forward runs in the wasm32 build only.
  if (sizeof(std::size_t) == 4) {
    LayerConfig config;
    config.d_model = 256;
    config.heads = 256;
    config.ff_dim = 4;
    TransformerEncoderLayer layer;
    REQUIRE(layer.configure(config).ok());
    for (const auto& t : layer_test::layer_state(9, 256, 4))
      REQUIRE(layer.set_tensor(t.name, t.values.data(), t.values.size()).ok());
    std::vector<float> x(8192 * 256), small = layer_test::layer_input(9, 2, 256), good(512),
                                      again(512);
    REQUIRE(layer.forward(small.data(), 512, 2, {}, good.data(), 512).ok());
    const LayerError e = layer.forward(x.data(), x.size(), 8192, {}, x.data(), x.size());
    CHECK(e.status == LayerStatus::out_of_memory);
    CHECK(e.name == "length");
    CHECK(layer.attention() == nullptr);
    REQUIRE(layer.forward(small.data(), 512, 2, {}, again.data(), 512).ok());
    CHECK(again == good);
  }
}
