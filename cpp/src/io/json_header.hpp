// A small strict JSON parser (RFC 8259) for safetensors headers. Internal to the core.
// It accepts any bytes without crashing: it never reads outside [text, text + size), recursion is
// bounded (kMaxDepth), and so is the number of values (kMaxValues), which bounds memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace posenc::detail {

struct JsonValue {
  enum class Type : std::uint8_t { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  // Numbers: is_uint when the literal is a non-negative integer without fraction or exponent
  // that fits in 64 bits (then uint holds it). number holds every number literal's value as the
  // nearest double (correctly rounded barring decimals within ~2^-100 of a midpoint; +-inf when
  // the literal overflows, which readers of model configs refuse as not finite).
  bool is_uint = false;
  std::uint64_t uint = 0;
  double number = 0.0;
  std::string string;             // strings (UTF-8, escapes decoded)
  std::vector<std::string> keys;  // objects: keys[i] belongs to items[i]
  std::vector<JsonValue> items;   // arrays and objects

  // The member named key of an object, or null.
  const JsonValue* find(const std::string& key) const;
};

inline constexpr int kMaxDepth = 16;
inline constexpr std::size_t kMaxValues = 1u << 18;

// Parses one JSON value filling the whole text (surrounding whitespace allowed). Returns false on
// any syntax error, invalid UTF-8 (raw bytes or \u escapes) in a string, nesting deeper than
// kMaxDepth or more than kMaxValues values.
bool parse_json(const char* text, std::size_t size, JsonValue* out);

}  // namespace posenc::detail
