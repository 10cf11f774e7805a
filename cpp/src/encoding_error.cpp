#include "posenc/encoding_error.hpp"

#include <cmath>
#include <cstdint>

#include "math/exact_math.hpp"

namespace posenc {

EncodingError encoding_error(EncodingStatus status, const std::string& argument,
                             const std::string& requirement) {
  EncodingError e;
  e.status = status;
  e.argument = argument;
  e.message = argument + " " + requirement;
  return e;
}

std::string integer_text(std::int64_t v) {
  char buf[24];
  char* end = buf + sizeof buf;
  char* p = end;
  const bool negative = v < 0;
  std::uint64_t u = negative ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (negative) *--p = '-';
  return std::string(p, end);
}

// Integers exactly; other numbers with 9 significant digits (trailing zeros dropped), in fixed
// notation from 1e-5 to 1e15 and as d.ddde+x otherwise. Written by hand: printf's %g would link
// the long-double formatting code into the wasm.
std::string format_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  std::string sign = v < 0 ? "-" : "";
  const double a = std::fabs(v);
  if (a == std::floor(a) && a < 1e15) return sign + integer_text(static_cast<std::int64_t>(a));
  int exponent = static_cast<int>(std::floor(math::log10(a)));
  std::int64_t digits = static_cast<std::int64_t>(std::llround(a * math::pow(10.0, 8 - exponent)));
  if (digits >= 1000000000) {  // rounding carried into a tenth digit
    digits /= 10;
    ++exponent;
  }
  std::string d = integer_text(digits);  // 9 digits
  while (d.size() > 1 && d.back() == '0')
    d.pop_back();
  if (exponent >= -5 && exponent < 15) {
    if (exponent < 0)
      return sign + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + d;
    const std::size_t whole = static_cast<std::size_t>(exponent) + 1;
    if (d.size() <= whole) return sign + d + std::string(whole - d.size(), '0');
    return sign + d.substr(0, whole) + "." + d.substr(whole);
  }
  const std::string mantissa = d.size() > 1 ? d.substr(0, 1) + "." + d.substr(1) : d;
  return sign + mantissa + (exponent < 0 ? "e-" : "e+") + integer_text(std::abs(exponent));
}

}  // namespace posenc
