// Internal: one heap sort of pointers under a comparison function, shared by the safetensors
// reader and the model loader instead of a std::sort instantiation per element type and
// comparator (about 4.5 KB of wasm for three). O(n log n), not stable (callers sort distinct keys
// or check ties themselves).
#pragma once

#include <cstddef>
#include <string>

namespace posenc::detail {

using PointerLess = bool (*)(const void*, const void*);

inline void sort_pointers(const void** a, std::size_t n, PointerLess less) {
  auto sift = [a, less](std::size_t root, std::size_t end) {
    for (;;) {
      std::size_t child = 2 * root + 1;
      if (child >= end) return;
      if (child + 1 < end && less(a[child], a[child + 1])) ++child;
      if (!less(a[root], a[child])) return;
      const void* t = a[root];
      a[root] = a[child];
      a[child] = t;
      root = child;
    }
  };
  for (std::size_t i = n / 2; i-- > 0;)
    sift(i, n);
  for (std::size_t end = n; end > 1; --end) {
    const void* t = a[0];
    a[0] = a[end - 1];
    a[end - 1] = t;
    sift(0, end - 1);
  }
}

// For pointers to std::string.
inline bool string_less(const void* a, const void* b) {
  return *static_cast<const std::string*>(a) < *static_cast<const std::string*>(b);
}

}  // namespace posenc::detail
