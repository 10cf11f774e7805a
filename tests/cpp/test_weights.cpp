// Bad weights (issue 7): safetensors files that are corrupt in one targeted way. Every error
// names its tensor or key.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/safetensors.hpp"

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

}  // namespace

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

