// Every preset against the golden fixtures written by tests/fixtures/gen_presets.py from each
// framework's own formula (PyTorch / numpy). The JavaScript tests read the same files.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "fixture_json.hpp"
#include "oracle.hpp"
#include "posenc/posenc.hpp"

using namespace posenc;
using nlohmann::json;

namespace {

json load_fixture(const std::string& name) {
  return load_fixture_json("presets/" + name + ".json");
}

// Runs one fixture case through posenc; returns the status and fills out.
Status run_case(Preset preset, const json& c, std::vector<float>& out) {
  const std::int64_t dim = c.at("dim").get<std::int64_t>();
  const std::int64_t length = c.at("length").get<std::int64_t>();
  Spec spec = preset_spec(preset, dim);
  const json& options = c.at("options");
  if (options.contains("base")) spec.base = options.at("base").get<double>();
  if (options.contains("minTimescale"))
    spec.min_timescale = options.at("minTimescale").get<double>();
  const std::int64_t padding_idx = c.value("paddingIdx", json()).is_null()
                                       ? kFairseqDefaultPaddingIdx
                                       : c.at("paddingIdx").get<std::int64_t>();
  const std::int64_t offset = c.value("offset", json(0)).get<std::int64_t>();

  RowPositions rows;
  rows.count = length;
  if (preset_info(preset).uses_padding_idx) rows.zero_position = static_cast<double>(padding_idx);
  std::vector<double> positions;
  std::vector<std::uint8_t> mask;
  if (!c.value("positions", json()).is_null()) {
    positions = c.at("positions").get<std::vector<double>>();
    REQUIRE(positions.size() == static_cast<std::size_t>(length));
    rows.positions = positions.data();
  } else if (!c.value("paddingMask", json()).is_null()) {
    mask = c.at("paddingMask").get<std::vector<std::uint8_t>>();
    REQUIRE(mask.size() == static_cast<std::size_t>(length));
    positions.resize(mask.size());
    REQUIRE(positions_from_padding_mask(mask.data(), length, padding_idx, offset,
                                        positions.data()) == Status::ok);
    rows.positions = positions.data();
  } else {
    rows.first_position = preset_first_position(preset, padding_idx) + static_cast<double>(offset);
  }
  out.assign(static_cast<std::size_t>(length * dim), 0.0f);
  return encode(spec, rows, out.data(), out.size());
}

}  // namespace

TEST_CASE("every preset reproduces its framework's table", "[presets][fixtures]") {
  for (int i = 0; i < kPresetCount; ++i) {
    const PresetInfo& info = preset_info(static_cast<Preset>(i));
    const json fixture = load_fixture(info.name);
    REQUIRE(fixture.at("preset").get<std::string>() == info.name);
    const json& cases = fixture.at("cases");
    REQUIRE(cases.size() >= 5);
    for (const json& c : cases) {
      INFO(info.name << " case " << c.at("name").get<std::string>());
      std::vector<float> got;
      const Status status = run_case(info.preset, c, got);
      if (c.at("dim").get<std::int64_t>() < info.spec.min_dim) {
        // The framework is degenerate there (fairseq d = 1 is one zero column, d = 2 and 3
        // divide by zero): posenc refuses such dims rather than return a useless table.
        CHECK(status == Status::invalid_dim);
        continue;
      }
      REQUIRE(status == Status::ok);
      const auto expected = c.at("expected").get<std::vector<double>>();
      // expected is the float64 formula rounded to float32: posenc must be within the bound.
      CHECK(oracle::max_abs_diff(got, expected) <= oracle::kBound);
      if (!c.value("framework", json()).is_null()) {
        const auto framework = c.at("framework").get<std::vector<double>>();
        const double allowed = c.at("frameworkMaxAbsDiff").get<double>() + oracle::kBound;
        CHECK(oracle::max_abs_diff(got, framework) <= allowed);
      }
    }
  }
}

TEST_CASE("fixture facts agree with the preset specs", "[presets][fixtures]") {
  for (int i = 0; i < kPresetCount; ++i) {
    const PresetInfo& info = preset_info(static_cast<Preset>(i));
    const json facts = load_fixture(info.name).at("facts");
    INFO(info.name);
    CHECK(facts.at("layout").get<std::string>() ==
          (info.spec.layout == Layout::split ? "split" : "interleaved"));
    CHECK(facts.at("frequencies").get<std::string>() ==
          (info.spec.frequencies == Frequencies::half ? "half" : "paper"));
    const char* odd = info.spec.odd == OddDim::paper      ? "paper"
                      : info.spec.odd == OddDim::zero_pad ? "zero-pad"
                                                          : "reject";
    CHECK(facts.at("odd").get<std::string>() == odd);
    CHECK(facts.at("firstPosition").get<double>() ==
          preset_first_position(info.preset, kFairseqDefaultPaddingIdx));
    CHECK(facts.value("minDim", 1) == info.spec.min_dim);
  }
}
