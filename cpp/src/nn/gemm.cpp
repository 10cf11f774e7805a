// The packed GEMM: packing, the scalar reference kernel and the wasm SIMD kernel.
#include "posenc/nn/gemm.hpp"

#include <algorithm>
#include <cmath>

#include "hot_entry.hpp"
#include "math/exact_math.hpp"
#include "posenc/parallel/thread_pool.hpp"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace posenc {

bool PackedMatrix::reserve(std::int64_t k, std::int64_t n) {
  if (k < 1 || n < 1) return false;
  const std::int64_t panels = (n + kGemmPanel - 1) / kGemmPanel;
  const std::size_t count =
      static_cast<std::size_t>(panels) * static_cast<std::size_t>(k) * kGemmPanel;
  if (static_cast<std::size_t>(k) > count) return false;  // overflow guard
  if (!data_.reserve(count)) return false;
  k_ = k;
  n_ = n;
  return true;
}

bool PackedMatrix::pack_transposed(const float* w, std::int64_t n, std::int64_t k, std::int64_t ldw,
                                   const std::int32_t* rows) {
  if (!reserve(k, n)) return false;
  float* out = data_.data();
  for (std::int64_t j0 = 0; j0 < n; j0 += kGemmPanel) {
    const std::int64_t width = n - j0 < kGemmPanel ? n - j0 : kGemmPanel;
    for (std::int64_t kk = 0; kk < k; ++kk) {
      for (std::int64_t j = 0; j < kGemmPanel; ++j) {
        const std::int64_t row = j < width && rows != nullptr ? rows[j0 + j] : j0 + j;
        out[j] = j < width ? w[row * ldw + kk] : 0.0f;
      }
      out += kGemmPanel;
    }
  }
  return true;
}

bool PackedMatrix::pack(const float* b, std::int64_t k, std::int64_t n, std::int64_t ldb,
                        const std::int32_t* rows) {
  if (!reserve(k, n)) return false;
  float* out = data_.data();
  for (std::int64_t j0 = 0; j0 < n; j0 += kGemmPanel) {
    const std::int64_t width = n - j0 < kGemmPanel ? n - j0 : kGemmPanel;
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const float* row = b + (rows != nullptr ? rows[kk] : kk) * ldb + j0;
      for (std::int64_t j = 0; j < kGemmPanel; ++j)
        out[j] = j < width ? row[j] : 0.0f;
      out += kGemmPanel;
    }
  }
  return true;
}

namespace {

inline float apply(Epilogue e, float v) {
  switch (e) {
    case Epilogue::none:
      return v;
    case Epilogue::relu:
      return v > 0.0f ? v : 0.0f;
    case Epilogue::gelu:
      return 0.5f * v * (1.0f + math::erf(v * 0.70710678118654752440f));
  }
  return v;
}

// Adds the bias, applies the epilogue and stores MR x width results of one tile. Runs for the
// edge tiles and for GELU's (one erf per value), after the tile's k products: its loops are not
// unrolled (1.4 KB gzipped of the wasm; measured no slower, GELU layers included).
template <int MR>
void store_tile(const float (&acc)[MR][kGemmPanel], std::int64_t width, const float* bias,
                Epilogue e, float* c, std::int64_t ldc) {
  POSENC_NO_UNROLL
  for (int r = 0; r < MR; ++r) {
    POSENC_NO_UNROLL
    for (std::int64_t j = 0; j < width; ++j) {
      float v = acc[r][j];
      if (bias != nullptr) v = v + bias[j];
      c[r * ldc + j] = apply(e, v);
    }
  }
}

template <int MR>
void tile_scalar(const float* a, std::int64_t lda, const float* panel, std::int64_t k,
                 float (&acc)[MR][kGemmPanel]) {
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < kGemmPanel; ++j)
      acc[r][j] = 0.0f;
  for (std::int64_t kk = 0; kk < k; ++kk) {
    const float* bp = panel + kk * kGemmPanel;
    for (int r = 0; r < MR; ++r) {
      const float av = a[r * lda + kk];
      for (int j = 0; j < kGemmPanel; ++j)
        acc[r][j] = acc[r][j] + av * bp[j];
    }
  }
}

// The product's extent: the first k rows and n columns of the packed B.
struct Extent {
  std::int64_t k, n;
};

template <int MR>
void rows_scalar(const float* a, std::int64_t lda, const PackedMatrix& b, Extent x,
                 const float* bias, Epilogue e, float* c, std::int64_t ldc) {
  float acc[MR][kGemmPanel];
  for (std::int64_t j0 = 0; j0 < x.n; j0 += kGemmPanel) {
    const std::int64_t width = x.n - j0 < kGemmPanel ? x.n - j0 : kGemmPanel;
    tile_scalar<MR>(a, lda, b.panel(j0 / kGemmPanel), x.k, acc);
    store_tile<MR>(acc, width, bias ? bias + j0 : nullptr, e, c + j0, ldc);
  }
}

#ifdef __wasm_simd128__

// MR rows of c, columns [j_begin, j_end) (panel boundaries).
template <int MR>
void rows_simd(const float* a, std::int64_t lda, const PackedMatrix& b, Extent x, const float* bias,
               Epilogue e, float* c, std::int64_t ldc, std::int64_t j_begin, std::int64_t j_end) {
  const std::int64_t k = x.k;
  for (std::int64_t j0 = j_begin; j0 < j_end; j0 += kGemmPanel) {
    const float* bp = b.panel(j0 / kGemmPanel);
    v128_t acc[MR][2];
    for (int r = 0; r < MR; ++r)
      acc[r][0] = acc[r][1] = wasm_f32x4_splat(0.0f);
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const v128_t b0 = wasm_v128_load(bp);
      const v128_t b1 = wasm_v128_load(bp + 4);
      bp += kGemmPanel;
      for (int r = 0; r < MR; ++r) {
        const v128_t av = wasm_v128_load32_splat(a + r * lda + kk);
        acc[r][0] = wasm_f32x4_add(acc[r][0], wasm_f32x4_mul(av, b0));
        acc[r][1] = wasm_f32x4_add(acc[r][1], wasm_f32x4_mul(av, b1));
      }
    }
    const std::int64_t width = x.n - j0 < kGemmPanel ? x.n - j0 : kGemmPanel;
    if (width == kGemmPanel && e != Epilogue::gelu) {
      v128_t bias0 = wasm_f32x4_splat(0.0f), bias1 = bias0;
      if (bias != nullptr) {
        bias0 = wasm_v128_load(bias + j0);
        bias1 = wasm_v128_load(bias + j0 + 4);
      }
      const v128_t zero = wasm_f32x4_splat(0.0f);
      for (int r = 0; r < MR; ++r) {
        v128_t v0 = acc[r][0], v1 = acc[r][1];
        if (bias != nullptr) {
          v0 = wasm_f32x4_add(v0, bias0);
          v1 = wasm_f32x4_add(v1, bias1);
        }
        if (e == Epilogue::relu) {
          v0 = wasm_f32x4_pmax(zero, v0);
          v1 = wasm_f32x4_pmax(zero, v1);
        }
        wasm_v128_store(c + r * ldc + j0, v0);
        wasm_v128_store(c + r * ldc + j0 + 4, v1);
      }
    } else {
      float tile[MR][kGemmPanel];
      for (int r = 0; r < MR; ++r) {
        wasm_v128_store(&tile[r][0], acc[r][0]);
        wasm_v128_store(&tile[r][4], acc[r][1]);
      }
      store_tile<MR>(tile, width, bias ? bias + j0 : nullptr, e, c + j0, ldc);
    }
  }
}

#endif

template <bool kSimd>
void gemm_impl(const float* a, std::int64_t lda, std::int64_t m, const PackedMatrix& b, Extent x,
               const float* bias, Epilogue e, float* c, std::int64_t ldc) {
  if (m < 1 || b.empty() || x.k < 1 || x.n < 1) return;
  std::int64_t i = 0;
#ifdef __wasm_simd128__
  if (kSimd) {
    // Blocks of panels of about 128 KB of B, each used by every row before the next: B is read
    // from memory once per call instead of once per four rows (with two threads the product was
    // bound by that traffic). Each element is still one kernel's sum over k in order: same bits.
    const std::int64_t block =
        std::max<std::int64_t>(1, (32768 / kGemmPanel) / std::max<std::int64_t>(x.k, 1)) *
        kGemmPanel;
    for (std::int64_t j_begin = 0; j_begin < x.n; j_begin += block) {
      const std::int64_t j_end = std::min(x.n, j_begin + block);
      for (i = 0; i + kGemmRows <= m; i += kGemmRows)
        rows_simd<4>(a + i * lda, lda, b, x, bias, e, c + i * ldc, ldc, j_begin, j_end);
      // Tail rows one at a time: fewer kernel instances keep the wasm small (the tail is < 4 rows).
      for (; i < m; ++i)
        rows_simd<1>(a + i * lda, lda, b, x, bias, e, c + i * ldc, ldc, j_begin, j_end);
    }
    return;
  }
#endif
  for (; i + kGemmRows <= m; i += kGemmRows)
    rows_scalar<4>(a + i * lda, lda, b, x, bias, e, c + i * ldc, ldc);
  for (; i < m; ++i)
    rows_scalar<1>(a + i * lda, lda, b, x, bias, e, c + i * ldc, ldc);
}

}  // namespace

namespace {

// gemm_impl over blocks of rows split between the pool's threads: blocks start at multiples of
// kGemmRows, so every row goes through the same kernel instance as on one thread; a block has at
// least 2^20 multiply-adds (waking a worker costs tens of microseconds: smaller products, such as
// a tiny layer's, stay on the caller's thread).
void gemm_rows(const float* a, std::int64_t lda, std::int64_t m, const PackedMatrix& b, Extent x,
               const float* bias, Epilogue e, float* c, std::int64_t ldc, ThreadPool* pool) {
  if (!ThreadPool::kThreaded || pool == nullptr || x.k < 1 || x.n < 1) {
    gemm_impl<true>(a, lda, m, b, x, bias, e, c, ldc);
    return;
  }
  auto rows = [&](std::int64_t i0, std::int64_t i1) {
    gemm_impl<true>(a + i0 * lda, lda, i1 - i0, b, x, bias, e, c + i0 * ldc, ldc);
  };
  const std::int64_t grain = std::max<std::int64_t>(kGemmRows, (1 << 20) / (x.k * x.n) + 1);
  pool->for_each(m, grain, kGemmRows, rows);
}

}  // namespace

void gemm(const float* a, std::int64_t lda, std::int64_t m, const PackedMatrix& b,
          const float* bias, Epilogue epilogue, float* c, std::int64_t ldc, ThreadPool* pool) {
  gemm_rows(a, lda, m, b, {b.k(), b.n()}, bias, epilogue, c, ldc, pool);
}

void gemm_part(const float* a, std::int64_t lda, std::int64_t m, const PackedMatrix& b,
               std::int64_t k, std::int64_t n, float* c, std::int64_t ldc, ThreadPool* pool) {
  gemm_rows(a, lda, m, b, {k < b.k() ? k : b.k(), n < b.n() ? n : b.n()}, nullptr, Epilogue::none,
            c, ldc, pool);
}

void gemm_scalar(const float* a, std::int64_t lda, std::int64_t m, const PackedMatrix& b,
                 const float* bias, Epilogue epilogue, float* c, std::int64_t ldc) {
  gemm_impl<false>(a, lda, m, b, {b.k(), b.n()}, bias, epilogue, c, ldc);
}

bool gemm_uses_simd() {
#ifdef __wasm_simd128__
  return true;
#else
  return false;
#endif
}

}  // namespace posenc
