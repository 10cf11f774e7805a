// posenc: the matrix product behind the encoder layer, C = A * B (+ bias, activation), with B
// packed once into column panels. Two builds of the same arithmetic:
// - gemm(): a register-blocked 4 x 8 micro-kernel, wasm SIMD f32x4 under __wasm_simd128__;
// - gemm_scalar(): the plain C++ reference, always compiled (it is gemm() in builds without
//   wasm SIMD).
// Both accumulate every output element in the same order (k = 0, 1, ..., each step one float32
// multiply and one float32 add, no fused multiply-add), so their results are bitwise identical;
// the tests check exactly that. Relative to the exact product the error is the usual
// k * 2^-24 * sum |a||b| bound of a float32 dot product.
// Each row of C is computed by the same operations wherever it sits among the m rows (in a 4-row
// tile or in the tail): permuting the rows of A permutes the rows of C bit for bit, which the
// encoder layer's permutation equivariance rests on (tested).
#pragma once

#include <cstddef>
#include <cstdint>

#include "posenc/buffer.hpp"

namespace posenc {

class ThreadPool;

// Columns per packed panel: the micro-kernel computes 4 rows x kGemmPanel columns at a time.
inline constexpr std::int64_t kGemmPanel = 8;
inline constexpr std::int64_t kGemmRows = 4;

// What gemm() applies to each element after adding the bias.
enum class Epilogue : std::uint8_t {
  none,
  relu,  // max(v, 0)
  gelu,  // exact GELU, 0.5 v (1 + erf(v / sqrt 2)) (PyTorch's default approximate='none')
};

// B (k x n) packed into ceil(n / 8) panels; panel p holds columns 8p..8p+7 for every k, row by
// row (8 floats per k), zero-padded past column n.
class PackedMatrix {
 public:
  // From W stored n x k row-major with row stride ldw (B = W^T): PyTorch Linear weights
  // (out_features x in_features) and the keys of attention. With rows (n entries), column j of B
  // is row rows[j] of W (a gather: attention packs its keys in a chosen order). False when out of
  // memory.
  bool pack_transposed(const float* w, std::int64_t n, std::int64_t k, std::int64_t ldw,
                       const std::int32_t* rows = nullptr);
  // From B stored k x n row-major with row stride ldb (the values of attention). With rows
  // (k entries), row kk of B is row rows[kk] of b.
  bool pack(const float* b, std::int64_t k, std::int64_t n, std::int64_t ldb,
            const std::int32_t* rows = nullptr);

  std::int64_t k() const { return k_; }
  std::int64_t n() const { return n_; }
  const float* panel(std::int64_t p) const { return data_.data() + p * k_ * kGemmPanel; }
  bool empty() const { return data_.data() == nullptr; }

 private:
  bool reserve(std::int64_t k, std::int64_t n);
  FloatBuffer data_;
  std::int64_t k_ = 0;
  std::int64_t n_ = 0;
};

// c[i * ldc + j] = epilogue(sum_kk a[i * lda + kk] * B[kk][j] + bias[j]) for i < m, j < b.n();
// bias may be null (then nothing is added). a has m rows of b.k() floats; c must not overlap a.
// With a pool, blocks of rows go to its threads (each row computed as on one thread: same bits).
void gemm(const float* a, std::int64_t lda, std::int64_t m, const PackedMatrix& b,
          const float* bias, Epilogue epilogue, float* c, std::int64_t ldc,
          ThreadPool* pool = nullptr);

// c = a times the first k rows and n columns of B (k <= b.k(), n <= b.n(); no bias, no
// epilogue): gemm() of a smaller matrix, by the same kernel. With B's rows k.. multiplied by zeros
// in a, the result equals gemm()'s but for the sign of zeros. Attention's causal products use it
// to skip the hidden triangle.
void gemm_part(const float* a, std::int64_t lda, std::int64_t m, const PackedMatrix& b,
               std::int64_t k, std::int64_t n, float* c, std::int64_t ldc,
               ThreadPool* pool = nullptr);

// The scalar reference of gemm(), same contract, bitwise the same results.
void gemm_scalar(const float* a, std::int64_t lda, std::int64_t m, const PackedMatrix& b,
                 const float* bias, Epilogue epilogue, float* c, std::int64_t ldc);

// True when gemm() runs the wasm SIMD kernel (the -msimd128 build).
bool gemm_uses_simd();

}  // namespace posenc
