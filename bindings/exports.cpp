// The hot path as plain C exports: a posenc::SinusoidalEncoder behind an opaque pointer. Pointers
// and lengths are wasm32 values; every call validates through the core and returns a posenc::Status
// code (0 = ok) instead of trapping, and writes nothing on error.
#include <emscripten/emscripten.h>
#include <malloc.h>

#include <cstdint>
#include <memory>
#include <new>

#include "posenc/posenc.hpp"

namespace {

posenc::RowPositions rows_of(int count, double first, const double* positions,
                             const std::uint8_t* zero_rows, double zero_position) {
  posenc::RowPositions rows;
  rows.count = count;
  rows.first_position = first;
  rows.positions = positions;
  rows.zero_rows = zero_rows;
  rows.zero_position = zero_position;
  return rows;
}

int code(posenc::Status s) {
  return static_cast<int>(s);
}

// What JavaScript holds: an encoder and the anchor cache that makes its one-row calls
// (incremental decoding) cheap. The cache is per handle, and wasm runs one thread per instance.
struct Handle {
  explicit Handle(const posenc::Spec& spec) : encoder(spec), cache(encoder.make_anchor_cache()) {}
  posenc::SinusoidalEncoder encoder;
  std::unique_ptr<posenc::AnchorCache> cache;
};

}  // namespace

extern "C" {

// A new encoder, or null when memory is exhausted. Check posenc_encoder_status() before use.
EMSCRIPTEN_KEEPALIVE Handle* posenc_encoder_create(int dim, double base, double min_timescale,
                                                   int layout, int frequencies, int odd,
                                                   int min_dim) {
  posenc::Spec s;
  s.dim = dim;
  s.base = base;
  s.min_timescale = min_timescale;
  s.layout = static_cast<posenc::Layout>(layout);
  s.frequencies = static_cast<posenc::Frequencies>(frequencies);
  s.odd = static_cast<posenc::OddDim>(odd);
  s.min_dim = min_dim;
  return new (std::nothrow) Handle(s);
}

EMSCRIPTEN_KEEPALIVE int posenc_encoder_status(const Handle* h) {
  if (h->encoder.status() == posenc::Status::ok && !h->cache) {
    return code(posenc::Status::out_of_memory);
  }
  return code(h->encoder.status());
}

EMSCRIPTEN_KEEPALIVE void posenc_encoder_destroy(Handle* h) {
  delete h;
}

EMSCRIPTEN_KEEPALIVE int posenc_encoder_sines(const Handle* h) {
  return static_cast<int>(h->encoder.columns().sines);
}

EMSCRIPTEN_KEEPALIVE int posenc_encoder_block_rows(const Handle* h) {
  return static_cast<int>(h->encoder.block_rows());
}

EMSCRIPTEN_KEEPALIVE int posenc_encoder_encode(Handle* h, int count, double first,
                                               const double* positions,
                                               const std::uint8_t* zero_rows, double zero_position,
                                               float* out, int out_len) {
  if (out_len < 0) return code(posenc::Status::size_mismatch);
  return code(h->encoder.encode(rows_of(count, first, positions, zero_rows, zero_position), out,
                                static_cast<std::size_t>(out_len), h->cache.get()));
}

EMSCRIPTEN_KEEPALIVE int posenc_encoder_add_to(Handle* h, int count, double first,
                                               const double* positions,
                                               const std::uint8_t* zero_rows, double zero_position,
                                               float scale, float* embeddings, int len) {
  if (len < 0) return code(posenc::Status::size_mismatch);
  return code(h->encoder.add_to(rows_of(count, first, positions, zero_rows, zero_position), scale,
                                embeddings, static_cast<std::size_t>(len), h->cache.get()));
}

EMSCRIPTEN_KEEPALIVE int posenc_encoder_concat(Handle* h, int count, double first,
                                               const double* positions,
                                               const std::uint8_t* zero_rows, double zero_position,
                                               const float* embeddings, int embeddings_len,
                                               int embedding_dim, float* out, int out_len) {
  if (embeddings_len < 0 || out_len < 0) return code(posenc::Status::size_mismatch);
  return code(h->encoder.concat(rows_of(count, first, positions, zero_rows, zero_position),
                                embeddings, static_cast<std::size_t>(embeddings_len), embedding_dim,
                                out, static_cast<std::size_t>(out_len), h->cache.get()));
}

EMSCRIPTEN_KEEPALIVE int posenc_encoder_shift_matrix(const Handle* h, double k, float* out,
                                                     int out_len) {
  if (out_len < 0) return code(posenc::Status::size_mismatch);
  return code(posenc::shift_matrix(h->encoder.spec(), k, out, static_cast<std::size_t>(out_len)));
}

EMSCRIPTEN_KEEPALIVE int posenc_encoder_shift_blocks(const Handle* h, double k, float* out,
                                                     int out_len) {
  if (out_len < 0) return code(posenc::Status::size_mismatch);
  return code(posenc::shift_blocks(h->encoder.spec(), k, out, static_cast<std::size_t>(out_len)));
}

// Bytes of the wasm heap currently allocated (mallinfo().uordblks, which emmalloc computes by
// walking its regions): lets tests check that calls and create/dispose cycles give back everything
// they take. For tests only: it is linear in the number of heap regions.
EMSCRIPTEN_KEEPALIVE int posenc_heap_in_use() {
  return static_cast<int>(mallinfo().uordblks);
}

}  // extern "C"
