#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "posenc/posenc.hpp"

using namespace posenc;

TEST_CASE("validate rejects every bad spec with the status naming it", "[spec]") {
  Spec s;
  s.dim = 8;
  CHECK(validate(s) == Status::ok);
  for (std::int64_t dim : {std::int64_t{0}, std::int64_t{-1}, kMaxDim + 1}) {
    Spec b = s;
    b.dim = dim;
    CHECK(validate(b) == Status::invalid_dim);
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double base : {1.0, 0.5, 0.0, -3.0, nan, inf}) {
    Spec b = s;
    b.base = base;
    CHECK(validate(b) == Status::invalid_base);
  }
  for (double m : {0.0, -1.0, nan, inf}) {
    Spec b = s;
    b.min_timescale = m;
    CHECK(validate(b) == Status::invalid_min_timescale);
  }
  // Found by fuzz_encode: a denormal min_timescale passed validation while base / min_timescale
  // overflowed to infinity, so every frequency was NaN.
  for (double m : {1.3e-309, 1e-310}) {
    Spec b = s;
    b.min_timescale = m;
    CHECK(validate(b) == Status::invalid_min_timescale);
  }
  Spec huge = s;
  huge.min_timescale = 1e300;  // kMaxPosition * min_timescale overflows
  huge.base = 1e301;
  CHECK(validate(huge) == Status::invalid_min_timescale);
  Spec above = s;
  above.min_timescale = 20000.0;  // base must exceed min_timescale
  CHECK(validate(above) == Status::invalid_base);
  Spec bad_layout = s;
  bad_layout.layout = static_cast<Layout>(7);
  CHECK(validate(bad_layout) == Status::invalid_layout);
  Spec bad_freq = s;
  bad_freq.frequencies = static_cast<Frequencies>(9);
  CHECK(validate(bad_freq) == Status::invalid_frequencies);
  Spec bad_odd = s;
  bad_odd.odd = static_cast<OddDim>(9);
  CHECK(validate(bad_odd) == Status::invalid_odd_policy);
  Spec reject = s;
  reject.odd = OddDim::reject;
  reject.dim = 7;
  CHECK(validate(reject) == Status::odd_dim_rejected);
  CHECK(std::string(status_argument(Status::odd_dim_rejected)) == "dim");
  CHECK(std::string(status_message(Status::invalid_base)).find("base") != std::string::npos);
}

TEST_CASE("validate rejects bad rows", "[spec]") {
  Spec s;
  s.dim = 4;
  RowPositions rows;
  rows.count = 0;
  CHECK(validate(s, rows) == Status::invalid_length);
  rows.count = kMaxElements / 4 + 1;
  CHECK(validate(s, rows) == Status::invalid_length);
  rows.count = 3;
  rows.first_position = -1.0;
  CHECK(validate(s, rows) == Status::invalid_position);
  rows.first_position = kMaxPosition - 1.0;  // last row = kMaxPosition + 1
  CHECK(validate(s, rows) == Status::invalid_position);
  rows.first_position = kMaxPosition - 2.0;
  CHECK(validate(s, rows) == Status::ok);
  const double bad[] = {1.0, std::numeric_limits<double>::quiet_NaN(), 2.0};
  rows.positions = bad;
  CHECK(validate(s, rows) == Status::invalid_position);
  const double fractional[] = {0.5, 1e6 + 0.25, 3.0};
  rows.positions = fractional;
  CHECK(validate(s, rows) == Status::ok);
}

TEST_CASE("columns follow the odd-dim policy", "[spec]") {
  Spec s;
  s.dim = 51;
  Columns c = columns_of(s);
  CHECK(c.sines == 26);
  CHECK(c.cosines == 25);
  CHECK(c.zeros == 0);
  s.odd = OddDim::zero_pad;
  c = columns_of(s);
  CHECK(c.sines == 25);
  CHECK(c.cosines == 25);
  CHECK(c.zeros == 1);
  s.dim = 1;
  s.odd = OddDim::paper;
  c = columns_of(s);
  CHECK(c.sines == 1);
  CHECK(c.cosines == 0);
}

TEST_CASE("frequencies follow the two rules", "[spec]") {
  Spec s;
  s.dim = 512;
  CHECK(frequency(s, 0) == 1.0);
  CHECK(frequency(s, 128) == Approx(std::pow(10000.0, -0.5)).epsilon(1e-14));
  s.frequencies = Frequencies::half;
  CHECK(frequency(s, 255) == Approx(1.0 / 10000.0).epsilon(1e-14));
  s.min_timescale = 2.0;  // tensor2tensor multiplies by min_timescale
  s.base = 500.0;
  CHECK(frequency(s, 0) == 2.0);
  CHECK(frequency(s, 255) == Approx(2.0 / 250.0).epsilon(1e-14));
}

TEST_CASE("presets are found by name and carry their specs", "[spec][presets]") {
  Preset p;
  CHECK(preset_from_name("fairseq", &p));
  CHECK(p == Preset::fairseq);
  CHECK_FALSE(preset_from_name("Fairseq", &p));
  CHECK_FALSE(preset_from_name("", &p));
  for (int i = 0; i < kPresetCount; ++i) {
    const PresetInfo& info = preset_info(static_cast<Preset>(i));
    Preset back;
    REQUIRE(preset_from_name(info.name, &back));
    CHECK(back == info.preset);
  }
  CHECK(preset_spec(Preset::whisper, 6).odd == OddDim::reject);
  CHECK(validate(preset_spec(Preset::fairseq, 2)) == Status::invalid_dim);
  CHECK(preset_first_position(Preset::fairseq, 1) == 2.0);
  CHECK(preset_first_position(Preset::opennmt_tf, 1) == 1.0);
  CHECK(preset_first_position(Preset::vaswani, 1) == 0.0);
}

TEST_CASE("fairseq positions skip padding", "[spec]") {
  const std::uint8_t mask[] = {1, 1, 0, 0, 1, 0};
  double out[6];
  REQUIRE(positions_from_padding_mask(mask, 6, 1, 0, out) == Status::ok);
  const std::vector<double> expected = {1, 1, 2, 3, 1, 4};
  CHECK(std::vector<double>(out, out + 6) == expected);
  REQUIRE(positions_from_padding_mask(mask, 6, 0, 10, out) == Status::ok);
  CHECK(out[2] == 11.0);
  CHECK(positions_from_padding_mask(mask, 6, -1, 0, out) == Status::invalid_padding_idx);
  CHECK(positions_from_padding_mask(mask, 6, 1, -1, out) == Status::invalid_position);
}

TEST_CASE("number_around_padding numbers the other rows from any first position", "[spec]") {
  const std::uint8_t mask[] = {1, 0, 0, 1, 0};
  double out[5] = {};
  REQUIRE(number_around_padding(mask, 5, 0.5, 0, out) == Status::ok);
  const std::vector<double> expected = {0, 0.5, 1.5, 0, 2.5};
  CHECK(std::vector<double>(out, out + 5) == expected);
  // Every row padding: nothing to number, even from the last position.
  const std::uint8_t all[] = {1, 1};
  CHECK(number_around_padding(all, 2, kMaxPosition + 1, 0, out) == Status::ok);
  // The last non-padding row would pass kMaxPosition: nothing written.
  out[1] = -7;
  CHECK(number_around_padding(mask, 5, kMaxPosition - 1, 0, out) == Status::invalid_position);
  CHECK(out[1] == -7);
  CHECK(number_around_padding(mask, 5, -1, 0, out) == Status::invalid_position);
  CHECK(number_around_padding(mask, 5, 0, -1, out) == Status::invalid_position);
  CHECK(number_around_padding(mask, 0, 0, 0, out) == Status::invalid_length);
}
