// posenc: a buffer of floats (or of indices) that reports allocation failure instead of throwing
// or aborting, and is padded and aligned for the SIMD kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace posenc {

// T is a trivially copyable element type (float, std::int32_t).
template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = o.data_;
      size_ = o.size_;
      o.data_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }
  ~Buffer() { std::free(data_); }

  // The largest n resize() accepts (its byte count, padded, must fit in size_t).
  static constexpr std::size_t kMaxSize = static_cast<std::size_t>(-1) / sizeof(T) - 64;

  // Makes the buffer hold n zeroed elements (16-byte aligned, 4 elements of slack at the end).
  // Returns false (and leaves the buffer unchanged) when n is too large or memory runs out.
  bool resize(std::size_t n) { return resize_for_overwrite(n, true); }
  // resize() without the zeroing, for a scratch its caller writes before reading (the zeroing of a
  // large block is a call out of wasm in Emscripten).
  bool resize_for_overwrite(std::size_t n, bool zero = false) {
    if (n > kMaxSize) return false;
    void* p = nullptr;
    const std::size_t bytes = ((n + 4) * sizeof(T) + 15) / 16 * 16;
    p = std::aligned_alloc(16, bytes);
    if (p == nullptr) return false;
    if (zero) std::memset(p, 0, bytes);
    std::free(data_);
    data_ = static_cast<T*>(p);
    size_ = n;
    return true;
  }
  // Grows to at least n elements (contents are not kept); false when out of memory.
  bool reserve(std::size_t n) { return n <= size_ && data_ != nullptr ? true : resize(n); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

using FloatBuffer = Buffer<float>;
using IndexBuffer = Buffer<std::int32_t>;

}  // namespace posenc
