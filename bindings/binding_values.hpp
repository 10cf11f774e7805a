// The plain values that cross the embind boundary (registered as value_objects in
// bind_core.cpp), and the conventions every bound call follows:
//
// - Data crosses as std::uintptr_t addresses into the instance's wasm memory (the JS side's
//   scratch region or one-call buffers: bindings/js/memory.js), never as arrays of vals. Embind
//   does not bind float*; ptr<T>() casts.
// - Every bound call that can fail returns an int: 0 is ok; anything else is a code, and the
//   object's error() then returns an ErrorInfo naming the argument and what is wrong. The encoder,
//   the layer and the model all keep their last error this way (LastError below).
// - Sizes and counts are int or double: 3.1.6's embind has no 64-bit integers without BigInt.
#pragma once

#include <cstdint>
#include <string>

#include "posenc/nn/layer_status.hpp"
#include "posenc/parallel/thread_pool.hpp"
#include "posenc/sinusoidal/spec.hpp"
#include "posenc/status.hpp"

namespace posenc_bindings {

template <typename T>
T* ptr(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// The instance's worker pool in the threaded build (bind_core.cpp; setThreads sizes it), nullptr
// in the single-threaded builds, where every call runs on the caller's thread.
#ifdef __EMSCRIPTEN_PTHREADS__
posenc::ThreadPool* thread_pool();
#else
inline posenc::ThreadPool* thread_pool() {
  return nullptr;
}
#endif

// A wasm32 address held in a double (exact).
inline std::uintptr_t address(double value) {
  return static_cast<std::uintptr_t>(value);
}

// What a failed call was about: `argument` may be empty (then only the message is shown).
struct ErrorInfo {
  std::string argument;
  std::string message;
};

// The last error of one bound object, from either error type of the core.
class LastError {
 public:
  int keep(posenc::Status s) {
    status_ = s;
    layer_ = {};
    return static_cast<int>(s);
  }
  int keep(posenc::LayerError e) {
    status_ = posenc::Status::ok;
    layer_ = std::move(e);
    return static_cast<int>(layer_.status);
  }
  ErrorInfo info() const {
    if (status_ != posenc::Status::ok) {
      return {posenc::status_argument(status_), posenc::status_message(status_)};
    }
    return {layer_.name, posenc::layer_status_message(layer_.status)};
  }

 private:
  posenc::Status status_ = posenc::Status::ok;
  posenc::LayerError layer_;
};

// posenc::Spec with int sizes (dim <= kMaxDim fits).
struct SpecValue {
  int dim = 0;
  double base = 10000.0;
  double minTimescale = 1.0;
  posenc::Layout layout = posenc::Layout::interleaved;
  posenc::Frequencies frequencies = posenc::Frequencies::paper;
  posenc::OddDim odd = posenc::OddDim::paper;
  int minDim = 1;
  bool exactFrequencies = true;
};

inline posenc::Spec to_spec(const SpecValue& v) {
  posenc::Spec s;
  s.dim = v.dim;
  s.base = v.base;
  s.min_timescale = v.minTimescale;
  s.layout = v.layout;
  s.frequencies = v.frequencies;
  s.odd = v.odd;
  s.min_dim = v.minDim;
  s.exact_frequencies = v.exactFrequencies;
  return s;
}

}  // namespace posenc_bindings
