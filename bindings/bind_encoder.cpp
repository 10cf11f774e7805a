// posenc::SinusoidalEncoder for JavaScript: the class `SinusoidalEncoder` (an encoder with its
// anchor cache, which makes one-row calls of incremental decoding cheap) and the shift rotation.
// The JS side (bindings/js/encoder.js, transfer.js) checks arguments and moves rows through its
// scratch region in chunks: one embind call per chunk, so per JS call on the hot paths.
//
// Conventions (binding_values.hpp): pointers are addresses in wasm memory, every call returns
// 0 or a posenc::Status code, error() describes the last one.
#include <emscripten/bind.h>

#include <cstdint>
#include <memory>

#include "binding_values.hpp"
#include "posenc/sinusoidal/encode.hpp"
#include "posenc/sinusoidal/encoder.hpp"
#include "posenc/sinusoidal/spec.hpp"

namespace posenc_bindings {
namespace {

// The arguments of one encode / addTo / concat call, written by bindings/js/transfer.js into the
// scratch region as twelve doubles (every field is exact in a double: counts, positions, wasm32
// addresses) and passed as one address. One argument instead of seven to ten: 3.1.6's embind
// converts each argument through one generic invoker (with DYNAMIC_EXECUTION=0) shared by every
// bound function; with the arguments one by one, a one-row enc.addTo at dim 512 took 1.21 us
// instead of 0.75 us (Node 20, this project's machine kind).
//
// A padding mask (numbered != 0): zero_rows is the mask, and the core numbers the other rows
// first, first + 1, ... into `positions` (posenc::number_around_padding); padding rows get
// zero_position (fairseq's padding_idx), or 0 when there is none, and are all zero.
struct Request {
  double count;          // rows
  double first;          // position of row 0 (consecutive rows)
  double positions;      // address of count doubles, or 0
  double zero_rows;      // address of count bytes (nonzero: an all-zero row), or 0
  double zero_position;  // rows at this position are zero (fairseq's padding_idx), or -1
  double scale;          // addTo: embeddings are multiplied by it
  double data;           // address of the embeddings (addTo, concat)
  double data_len;       // floats at data
  double embedding_dim;  // concat: floats per embedding row
  double out;            // address of the output (encode, concat)
  double out_len;        // floats at out
  double numbered;       // 1: positions are to be numbered around the padding mask zero_rows

  // The rows of the call (numbering them first for a padding mask).
  posenc::Status rows(posenc::RowPositions* r) const {
    r->count = static_cast<std::int64_t>(count);
    r->first_position = first;
    r->positions = ptr<const double>(address(positions));
    r->zero_rows = ptr<const std::uint8_t>(address(zero_rows));
    r->zero_position = zero_position;
    if (numbered == 0) return posenc::Status::ok;
    if (!r->positions || !r->zero_rows) return posenc::Status::invalid_position;
    return posenc::number_around_padding(r->zero_rows, r->count, first,
                                         zero_position >= 0 ? zero_position : 0,
                                         ptr<double>(address(positions)));
  }
};
// transfer.js writes the fields at these indices.
static_assert(sizeof(Request) == 12 * sizeof(double), "Request is twelve doubles");

class Encoder {
 public:
  explicit Encoder(const SpecValue& spec)
      : encoder_(to_spec(spec)), cache_(encoder_.make_anchor_cache()) {
    const bool ok = encoder_.status() == posenc::Status::ok;
    status_ = last_.keep(ok && !cache_ ? posenc::Status::out_of_memory : encoder_.status());
  }

  // 0 when the encoder can be used, else the spec's problem (error() says which).
  int status() const { return status_; }
  // Sine columns (= frequencies) and rows per angle-addition block (JS chunks whole blocks).
  int sines() const { return static_cast<int>(encoder_.columns().sines); }
  int blockRows() const { return static_cast<int>(encoder_.block_rows()); }

  // The rows and buffers of one call, as a Request of doubles at `request` in wasm memory (see
  // Request). out_len / data_len are float counts.
  int encode(std::uintptr_t request) { return encode_rows(request, nullptr); }
  int addTo(std::uintptr_t request) { return add_rows(request, nullptr); }
  int concat(std::uintptr_t request) { return concat_rows(request, nullptr); }
#ifdef __EMSCRIPTEN_PTHREADS__
  // The threaded build's pipelined form (bindings/js/transfer.js): the call is checked and left
  // running on the pool's workers, which compute it while the JS side copies the previous chunk;
  // finish() waits for it and returns its code.
  int encodeStart(std::uintptr_t request) {
    return encode_rows(request, &pending_);
  }
  int addToStart(std::uintptr_t request) {
    return add_rows(request, &pending_);
  }
  int concatStart(std::uintptr_t request) {
    return concat_rows(request, &pending_);
  }
  int finish() {
    return last_.keep(posenc::SinusoidalEncoder::finish(thread_pool(), pending_));
  }
#endif

 private:
  int encode_rows(std::uintptr_t request, posenc::PendingRows* pending) {
    const Request& q = *ptr<const Request>(request);
    if (!(q.out_len >= 0)) return last_.keep(posenc::Status::size_mismatch);
    posenc::RowPositions rows;
    if (posenc::Status s = q.rows(&rows); s != posenc::Status::ok) return last_.keep(s);
    return last_.keep(encoder_.encode(rows, ptr<float>(address(q.out)),
                                      static_cast<std::size_t>(q.out_len), cache_.get(),
                                      thread_pool(), pending));
  }

  // data (data_len floats) = data * scale + PE, in place.
  int add_rows(std::uintptr_t request, posenc::PendingRows* pending) {
    const Request& q = *ptr<const Request>(request);
    if (!(q.data_len >= 0)) return last_.keep(posenc::Status::size_mismatch);
    posenc::RowPositions rows;
    if (posenc::Status s = q.rows(&rows); s != posenc::Status::ok) return last_.keep(s);
    return last_.keep(encoder_.add_to(
        rows, static_cast<float>(q.scale), ptr<float>(address(q.data)),
        static_cast<std::size_t>(q.data_len), cache_.get(), thread_pool(), pending));
  }

  // out rows = [data row (embedding_dim floats) | PE row].
  int concat_rows(std::uintptr_t request, posenc::PendingRows* pending) {
    const Request& q = *ptr<const Request>(request);
    if (!(q.data_len >= 0) || !(q.out_len >= 0)) return last_.keep(posenc::Status::size_mismatch);
    posenc::RowPositions rows;
    if (posenc::Status s = q.rows(&rows); s != posenc::Status::ok) return last_.keep(s);
    return last_.keep(encoder_.concat(
        rows, ptr<const float>(address(q.data)), static_cast<std::size_t>(q.data_len),
        static_cast<std::int64_t>(q.embedding_dim), ptr<float>(address(q.out)),
        static_cast<std::size_t>(q.out_len), cache_.get(), thread_pool(), pending));
  }

 public:
  // The rotation by k: dim x dim floats (shiftMatrix) or [cos, sin] per frequency (shiftBlocks).
  int shiftMatrix(double k, std::uintptr_t out, int len) {
    if (len < 0) return last_.keep(posenc::Status::size_mismatch);
    return last_.keep(
        posenc::shift_matrix(encoder_.spec(), k, ptr<float>(out), static_cast<std::size_t>(len)));
  }
  int shiftBlocks(double k, std::uintptr_t out, int len) {
    if (len < 0) return last_.keep(posenc::Status::size_mismatch);
    return last_.keep(
        posenc::shift_blocks(encoder_.spec(), k, ptr<float>(out), static_cast<std::size_t>(len)));
  }

  // encode's rows as 16-bit bits (format 0 float16, 1 bfloat16) at out, which has room for
  // out_len floats (posenc::SinusoidalEncoder::encode_half).
  int encodeHalf(std::uintptr_t request, int format) {
    const Request& q = *ptr<const Request>(request);
    if (!(q.out_len >= 0)) return last_.keep(posenc::Status::size_mismatch);
    posenc::RowPositions rows;
    if (posenc::Status s = q.rows(&rows); s != posenc::Status::ok) return last_.keep(s);
    return last_.keep(encoder_.encode_half(rows, ptr<std::uint16_t>(address(q.out)),
                                           static_cast<std::size_t>(q.out_len),
                                           static_cast<posenc::HalfFormat>(format), cache_.get()));
  }

  ErrorInfo error() const {
    return last_.info();
  }

 private:
  posenc::SinusoidalEncoder encoder_;
  std::unique_ptr<posenc::AnchorCache> cache_;
  LastError last_;
  int status_ = 0;
#ifdef __EMSCRIPTEN_PTHREADS__
  posenc::PendingRows pending_;
#endif
};

}  // namespace
}  // namespace posenc_bindings

EMSCRIPTEN_BINDINGS(posenc_encoder) {
  using posenc_bindings::Encoder;
  emscripten::class_<Encoder>("SinusoidalEncoder")
      .constructor<const posenc_bindings::SpecValue&>()
      .function("status", &Encoder::status)
      .function("sines", &Encoder::sines)
      .function("blockRows", &Encoder::blockRows)
      .function("encode", &Encoder::encode)
      .function("addTo", &Encoder::addTo)
      .function("concat", &Encoder::concat)
#ifdef __EMSCRIPTEN_PTHREADS__
      .function("encodeStart", &Encoder::encodeStart)
      .function("addToStart", &Encoder::addToStart)
      .function("concatStart", &Encoder::concatStart)
      .function("finish", &Encoder::finish)
#endif
      .function("shiftMatrix", &Encoder::shiftMatrix)
      .function("shiftBlocks", &Encoder::shiftBlocks)
      .function("encodeHalf", &Encoder::encodeHalf)
      .function("error", &Encoder::error);
}
