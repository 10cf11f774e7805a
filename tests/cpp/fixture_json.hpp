// Reading a golden fixture of tests/fixtures/ (POSENC_FIXTURE_DIR) as JSON, for the tests that
// compare with them (presets, rotary, per-model rules).
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

// The fixture at tests/fixtures/<relative> parsed; a missing file fails the test naming it.
inline nlohmann::json load_fixture_json(const std::string& relative) {
  const std::string path = std::string(POSENC_FIXTURE_DIR) + "/" + relative;
  std::ifstream in(path);
  INFO("fixture " << path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}
