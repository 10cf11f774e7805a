// The fuzz targets' input reader: takes fixed-size values off the front of libFuzzer's bytes,
// zero-filling whatever the input is too short to provide (so every input is a valid request).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

struct Reader {
  const std::uint8_t* data;
  std::size_t size;
  template <class T>
  T take() {
    T value{};
    const std::size_t n = size < sizeof(T) ? size : sizeof(T);
    std::memcpy(&value, data, n);
    data += n;
    size -= n;
    return value;
  }
};
