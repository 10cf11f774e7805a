#include "posenc/encoding_error.hpp"

#include <cstdio>
#include <cstdlib>

namespace posenc {

EncodingError encoding_error(EncodingStatus status, const std::string& argument,
                             const std::string& requirement) {
  EncodingError e;
  e.status = status;
  e.argument = argument;
  e.message = argument + " " + requirement;
  return e;
}

std::string format_number(double v) {
  char buf[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v || v != v) break;
  }
  return buf;
}

}  // namespace posenc
