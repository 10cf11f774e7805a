// The strict, bounded JSON parser of json_header.hpp.
#include "io/json_header.hpp"

#include <cmath>

namespace posenc::detail {

const JsonValue* JsonValue::find(const std::string& key) const {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return &items[i];
  return nullptr;
}

namespace {

// Exact products and sums of doubles (Dekker, Knuth) for decimal_value.
struct Pair {
  double hi, lo;
};

Pair exact_product(double a, double b) {
  auto split = [](double x, double& h, double& l) {
    const double t = 134217729.0 * x;  // 2^27 + 1
    h = t - (t - x);
    l = x - h;
  };
  const double p = a * b;
  double ah, al, bh, bl;
  split(a, ah, al);
  split(b, bh, bl);
  return {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
}

// (hi + lo) * m or / m in double-double (relative error about 2^-104).
Pair scale_pair(Pair v, double m, bool divide) {
  if (!divide) {
    const Pair p = exact_product(v.hi, m);
    const double lo = p.lo + v.lo * m;
    const double hi = p.hi + lo;
    return {hi, lo - (hi - p.hi)};
  }
  const double q1 = v.hi / m;
  const Pair p = exact_product(q1, m);
  const double q2 = (((v.hi - p.hi) - p.lo) + v.lo) / m;
  const double hi = q1 + q2;
  return {hi, q2 - (hi - q1)};
}

// The value of a JSON number literal [begin, end) (syntax already checked) as the nearest double:
// up to 19 significant digits held exactly in an integer, scaled by the power of ten in
// double-double arithmetic and rounded once, so the result is correctly rounded unless the
// decimal lies within about 2^-100 (relative) of a midpoint between two doubles. Not strtod,
// which would pull long-double arithmetic into the wasm (about 12 KB; see nn/model.cpp).
double decimal_value(const char* p, const char* end) {
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  std::uint64_t mantissa = 0;
  int digits = 0;
  long exponent = 0;
  bool dropped = false;  // nonzero digits beyond the 19 kept
  auto digit = [&](char c, bool fraction) {
    if (digits < 19) {
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(c - '0');
      if (mantissa != 0) ++digits;
      if (fraction) --exponent;
    } else {
      if (c != '0') dropped = true;
      if (!fraction) ++exponent;
    }
  };
  for (; p < end && *p >= '0' && *p <= '9'; ++p)
    digit(*p, false);
  if (p < end && *p == '.')
    for (++p; p < end && *p >= '0' && *p <= '9'; ++p)
      digit(*p, true);
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool negative_exponent = p < end && *p == '-';
    if (p < end && (*p == '-' || *p == '+')) ++p;
    long e = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p)
      if (e < 100000) e = e * 10 + (*p - '0');
    exponent += negative_exponent ? -e : e;
  }
  if (mantissa == 0) return negative ? -0.0 : 0.0;
  // A dropped digit only nudges the 19-digit mantissa: a quarter unit keeps it off any tie.
  const double hi = static_cast<double>(mantissa);
  const double rest =
      static_cast<double>(static_cast<std::int64_t>(mantissa - static_cast<std::uint64_t>(hi)));
  Pair v = {hi, rest + (dropped ? 0.25 : 0.0)};
  // Scale by 10^|exponent| in steps of at most 10^22 (exact doubles). Beyond the double range the
  // result is inf or 0.
  if (exponent > 330) return negative ? -HUGE_VAL : HUGE_VAL;
  if (exponent < -360) return negative ? -0.0 : 0.0;
  static const double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool divide = exponent < 0;
  // Work 2^600 away from the end of the range (exact scalings), so that no intermediate
  // overflows or underflows; the final scaling back is exact for normal results.
  const int shift = divide ? 600 : -600;
  v = {std::ldexp(v.hi, shift), std::ldexp(v.lo, shift)};
  long left = divide ? -exponent : exponent;
  while (left > 0) {
    const long step = left > 22 ? 22 : left;
    v = scale_pair(v, kPow10[step], divide);
    left -= step;
  }
  const double value = std::ldexp(v.hi + v.lo, -shift);
  return negative ? -value : value;
}

class Parser {
 public:
  Parser(const char* text, std::size_t size) : p_(text), end_(text + size) {}

  bool document(JsonValue* out) {
    skip_space();
    if (!value(out, 0)) return false;
    skip_space();
    return p_ == end_;
  }

 private:
  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r'))
      ++p_;
  }

  bool literal(const char* word) {
    for (const char* w = word; *w != '\0'; ++w, ++p_)
      if (p_ >= end_ || *p_ != *w) return false;
    return true;
  }

  bool value(JsonValue* out, int depth) {
    if (depth > kMaxDepth || ++count_ > kMaxValues || p_ >= end_) return false;
    switch (*p_) {
      case '{':
        return object(out, depth);
      case '[':
        return array(out, depth);
      case '"':
        out->type = JsonValue::Type::string;
        return string(&out->string);
      case 't':
        out->type = JsonValue::Type::boolean;
        out->boolean = true;
        return literal("true");
      case 'f':
        out->type = JsonValue::Type::boolean;
        return literal("false");
      case 'n':
        out->type = JsonValue::Type::null;
        return literal("null");
      default:
        return number(out);
    }
  }

  bool object(JsonValue* out, int depth) {
    out->type = JsonValue::Type::object;
    ++p_;  // '{'
    skip_space();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    for (;;) {
      skip_space();
      if (p_ >= end_ || *p_ != '"') return false;
      out->keys.emplace_back();
      if (!string(&out->keys.back())) return false;
      skip_space();
      if (p_ >= end_ || *p_ != ':') return false;
      ++p_;
      skip_space();
      out->items.emplace_back();
      if (!value(&out->items.back(), depth + 1)) return false;
      const Next next = after_item('}');
      if (next != Next::more) return next == Next::closed;
    }
  }

  bool array(JsonValue* out, int depth) {
    out->type = JsonValue::Type::array;
    ++p_;  // '['
    skip_space();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return true;
    }
    for (;;) {
      skip_space();
      out->items.emplace_back();
      if (!value(&out->items.back(), depth + 1)) return false;
      const Next next = after_item(']');
      if (next != Next::more) return next == Next::closed;
    }
  }

  enum class Next { more, closed, error };

  // After an object member or array element: ',' (another follows), `close` (the container
  // ends), or anything else (an error). Consumes the separator.
  Next after_item(char close) {
    skip_space();
    if (p_ >= end_) return Next::error;
    const char c = *p_++;
    if (c == ',') return Next::more;
    return c == close ? Next::closed : Next::error;
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool hex4(std::uint32_t* out) {
    if (end_ - p_ < 4) return false;
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = hex(p_[i]);
      if (h < 0) return false;
      v = v * 16 + static_cast<std::uint32_t>(h);
    }
    p_ += 4;
    *out = v;
    return true;
  }

  static void append_utf8(std::string* s, std::uint32_t cp) {
    if (cp < 0x80) {
      s->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // A multi-byte UTF-8 sequence whose lead byte (>= 0x80) was just read: the continuation bytes
  // must follow, with no overlong form, no surrogate and nothing above U+10FFFF (RFC 3629).
  bool utf8_sequence(unsigned char lead, std::string* out) {
    int more;
    std::uint32_t cp, min;
    if (lead >= 0xC2 && lead <= 0xDF) {
      more = 1, cp = lead & 0x1Fu, min = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      more = 2, cp = lead & 0x0Fu, min = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      more = 3, cp = lead & 0x07u, min = 0x10000;
    } else {
      return false;  // a continuation byte, or a lead byte no valid sequence starts with
    }
    if (end_ - p_ < more) return false;
    out->push_back(static_cast<char>(lead));
    for (int i = 0; i < more; ++i) {
      const unsigned char c = static_cast<unsigned char>(*p_++);
      if ((c & 0xC0u) != 0x80u) return false;
      cp = (cp << 6) | (c & 0x3Fu);
      out->push_back(static_cast<char>(c));
    }
    return cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
  }

  bool string(std::string* out) {
    ++p_;  // '"'
    while (p_ < end_) {
      const unsigned char c = static_cast<unsigned char>(*p_++);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c >= 0x80) {
        if (!utf8_sequence(c, out)) return false;
        continue;
      }
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        continue;
      }
      if (p_ >= end_) return false;
      const char e = *p_++;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!hex4(&cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // lone low surrogate
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t low = 0;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!hex4(&low) || low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          return false;
      }
    }
    return false;  // unterminated
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  bool number(JsonValue* out) {
    out->type = JsonValue::Type::number;
    const char* start = p_;
    bool negative = false;
    if (p_ < end_ && *p_ == '-') {
      negative = true;
      ++p_;
    }
    if (p_ >= end_ || !digit(*p_)) return false;
    bool fits = true;
    std::uint64_t v = 0;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ < end_ && digit(*p_)) {
        const std::uint64_t d = static_cast<std::uint64_t>(*p_ - '0');
        if (v > (UINT64_MAX - d) / 10) fits = false;
        if (fits) v = v * 10 + d;
        ++p_;
      }
    }
    bool integer = true;
    if (p_ < end_ && *p_ == '.') {
      integer = false;
      ++p_;
      if (p_ >= end_ || !digit(*p_)) return false;
      while (p_ < end_ && digit(*p_))
        ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ >= end_ || !digit(*p_)) return false;
      while (p_ < end_ && digit(*p_))
        ++p_;
    }
    out->is_uint = integer && fits && !negative;
    out->uint = out->is_uint ? v : 0;
    out->number = decimal_value(start, p_);
    return true;
  }

  const char* p_;
  const char* end_;
  std::size_t count_ = 0;
};

}  // namespace

bool parse_json(const char* text, std::size_t size, JsonValue* out) {
  JsonValue result;
  Parser parser(text, size);
  if (!parser.document(&result)) return false;
  *out = std::move(result);
  return true;
}

}  // namespace posenc::detail
