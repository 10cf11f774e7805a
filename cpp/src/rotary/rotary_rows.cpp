// RotaryEmbedding's row loops (cos_sin, apply): per row the float32 cos and sin of every frequency
// (float64 angle addition from the block anchor, rounded once; see rotary.cpp), then the SIMD
// rotation of every head of the row. cos_sin of consecutive integer positions (an offset) goes
// a block of 32 rows at a time, each row written once straight into HF's layout
// (cos_sin_blocks); explicit or fractional positions row by row (for_each_row). Both give the
// same bits (tests/cpp/test_rotary.cpp, tests/js/rotary.test.mjs).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "hot_entry.hpp"
#include "posenc/half.hpp"
#include "posenc/parallel/thread_pool.hpp"
#include "rotary/angle_set.hpp"
#include "sincos/row_copy.hpp"

namespace posenc {

using namespace rotary_detail;

namespace {

// The cache's frequencies against a set's, and its copies, in wasm code: musl's memcmp is a byte
// loop and Emscripten hands a memcpy of 512 bytes or more to JavaScript (sincos/row_copy.hpp),
// both per call of a decoding step.
bool same_bits(const double* a, const double* b, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint64_t x, y;
    std::memcpy(&x, a + i, sizeof x);
    std::memcpy(&y, b + i, sizeof y);
    if (x != y) return false;
  }
  return true;
}

#if defined(__clang__)
__attribute__((no_builtin("memcpy")))
#endif
void copy_doubles(double* dst, const double* src, std::int64_t n) {
  POSENC_NO_UNROLL
  for (std::int64_t i = 0; i < n; ++i)
    dst[i] = src[i];
}

}  // namespace

// apply's x: row r's head h (hd floats, the first rd rotating) at x + r * row_stride + h *
// head_stride: [rows, heads, hd] (row_stride heads * hd, head_stride hd) or [heads, rows, hd].
struct rotary_detail::ApplyTarget {
  float* x;
  std::int64_t heads, row_stride, head_stride, rd;
  RotaryLayout layout;
  float* pairs;  // interleaved: each cosine twice, (-sin, sin); deinterleave: one head
  // 16-bit data (x null): the rows' bits, and where a row's rotated channels are widened (rd a
  // head), rotated and rounded back from.
  std::uint16_t* bits;
  float* local;
  HalfFormat format;
};

namespace {

// Row r of apply's x rotated by its values c, s (rd / 2 each): the layout's pair table or
// de-interleaving around the rotation kernel (the build's kernels). One copy for both callers
// (the plain and the multimodal rows): a call per row of heads * hd floats.
POSENC_HOT_ENTRY void rotate_row(const ApplyTarget& t, std::int64_t r, const float* c,
                                 const float* s) {
  const std::int64_t heads = t.heads, stride = t.head_stride, rd = t.rd;
  if (t.bits != nullptr) {
    // Each head's rd rotated values into local (one run when they follow each other), rotated
    // there as float32 and rounded back; the channels beyond rd are not touched.
    std::uint16_t* bits = t.bits + r * t.row_stride;
    const bool one = stride == rd;
    const std::int64_t runs = one ? 1 : heads;
    const auto run = static_cast<std::size_t>(one ? heads * rd : rd);
    for (std::int64_t h = 0; h < runs; ++h)
      from_half(bits + h * stride, t.local + h * rd, run, t.format);
    ApplyTarget f = t;
    f.x = t.local;
    f.bits = nullptr;
    f.row_stride = heads * rd;
    f.head_stride = rd;
    rotate_row(f, 0, c, s);
    for (std::int64_t h = 0; h < runs; ++h)
      to_half_nearest(t.local + h * rd, bits + h * stride, run, t.format);
    return;
  }
  const RotaryLayout layout = t.layout;
  float* row = t.x + r * t.row_stride;
  float* pairs = t.pairs;
  const std::int64_t n = rd / 2;
  if (layout == RotaryLayout::interleaved) {
    // Each cosine twice, (-sin, sin).
    float* cd = pairs;
    float* ss = cd + rd;
    for (std::int64_t i = 0; i < n; ++i) {
      cd[2 * i] = cd[2 * i + 1] = c[i];
      ss[2 * i] = -s[i];
      ss[2 * i + 1] = s[i];
    }
    detail::rotary_kernel::rotate_interleaved(cd, ss, rd, heads, stride, row);
    return;
  }
  if (layout == RotaryLayout::deinterleave) {
    // DeepSeek-V3: q.view(.., d / 2, 2).transpose(-1, -2).reshape(.., d): evens, then odds.
    // (copy_floats: inlined here the copy loop became a memcpy call, which Emscripten hands to
    // JavaScript from 512 bytes on, once per head.)
    for (std::int64_t h = 0; h < heads; ++h) {
      float* head = row + h * stride;
      detail::copy_floats(pairs, head, static_cast<std::size_t>(rd));
      POSENC_NO_UNROLL
      for (std::int64_t i = 0; i < n; ++i) {
        head[i] = pairs[2 * i];
        head[i + n] = pairs[2 * i + 1];
      }
    }
  }
  // The half kernel walks the heads innermost (each c, s loaded once for all of them). Heads far
  // apart ([heads, rows, hd]: a stride of rows * hd, often a multiple of 4 KB, which puts every
  // head in the same L1 set) go one at a time: innermost, they ran 9x slower.
  const std::int64_t group = t.row_stride < heads * stride ? 1 : heads;
  POSENC_NO_UNROLL
  for (std::int64_t h = 0; h < heads; h += group)
    detail::rotary_kernel::rotate_half(c, s, n, group, stride, row + h * stride);
}

}  // namespace

template <class RowFn>
bool RotaryEmbedding::for_each_row(const AngleSet& set, const RotaryRows& rows, bool for_apply,
                                   RotaryAnchorCache* cache, RowFn row_fn, float* direct_s,
                                   float* direct_c, std::int64_t direct_stride) const {
  // Scratch: anchor sines and cosines (float64), the row's float32 cos and sin. On the stack up
  // to kStackPairs pairs (every real head): a one-row decoding call then allocates nothing.
  const std::int64_t np = set.np;
  alignas(16) double stack_anchor[2 * kStackPairs];
  alignas(16) float stack_values[2 * kStackPairs];
  Buffer<double> anchor;
  Buffer<float> values;
  double* sa = stack_anchor;
  float* s = stack_values;
  if (np > kStackPairs) {
    if (!anchor.resize(static_cast<std::size_t>(2 * np)) ||
        !values.resize(static_cast<std::size_t>(2 * np)))
      return false;
    sa = anchor.data();
    s = values.data();
  }
  double* ca = sa + np;
  float* c = s + np;
  const detail::SplitFrequencies F = set.split();
  const double scale = for_apply ? set.attention : 1.0;
  double cached = -1;
  // A cache holds the anchor of these frequencies: sa, ca then point into it.
  const bool cache_holds_set = cache != nullptr && cache->pairs_ == np &&
                               cache->tails_ == set.has_tails() &&
                               same_bits(cache->data_.data(), set.w.data(), np);
  double* const own_sa = sa;
  double* const own_ca = ca;
  if (cache_holds_set) {
    cached = cache->anchor_;
    sa = cache->data_.data() + np;
    ca = sa + np;
  }
  for (std::int64_t r = 0; r < rows.count; ++r) {
    const double p = rows.positions != nullptr ? rows.positions[r]
                                               : rows.first_position + static_cast<double>(r);
    const bool fast = p * set.w_max <= detail::kReduceLimit;
    std::int64_t e = 0;
    if (fast && set.blocks > 1 && p == std::floor(p)) {
      // p - fmod(p, kBlock), exactly (p / kBlock is exact, kBlock a power of 2), without libm's
      // fmod.
      const double a = std::trunc(p / static_cast<double>(kBlock)) * static_cast<double>(kBlock);
      e = static_cast<std::int64_t>(p - a);
      if (a != cached) {
        sa = own_sa;
        ca = own_ca;
        detail::rotary_kernel::sincos_f64_two_pass(F, np, a, sa, ca);
        cached = a;
      }
    } else {
      sa = own_sa;
      ca = own_ca;
      if (fast) {
        detail::rotary_kernel::sincos_f64_two_pass(F, np, p, sa, ca);
      } else {
        for (std::int64_t i = 0; i < np; ++i)
          sincos_any(p, set.w.data()[i], F.low(i), sa[i], ca[i]);
      }
      cached = -1;
    }
    // The row's float32 sines and cosines: into the caller's rows when it gives them (np floats
    // each: the caller's rows must be that wide), else into the scratch.
    float* rs = direct_s != nullptr ? direct_s + r * direct_stride : s;
    float* rc = direct_c != nullptr ? direct_c + r * direct_stride : c;
    if (!for_apply && fast) {
      // cos_sin: each value the float32 nearest to the exact one (scale is 1 here: HF's
      // attention scaling is a float32 product after the rounding).
      detail::rotary_kernel::rotate_to_f32_exact(sa, ca, set.step_s.data() + e * np,
                                                 set.step_c.data() + e * np, np, p, F, rs, rc);
    } else {
      detail::rotary_kernel::rotate_to_f32(sa, ca, set.step_s.data() + e * np,
                                           set.step_c.data() + e * np, np, scale, rs, rc);
    }
    row_fn(r, rc, rs);
  }
  // Keep the last anchor for the next call (a few doubles per pair; skipped if out of memory).
  if (cache != nullptr && cached >= 0 && !(cache_holds_set && cached == cache->anchor_) &&
      sa == own_sa) {
    cache->pairs_ = 0;
    if (cache->data_.reserve(static_cast<std::size_t>(3 * np))) {
      copy_doubles(cache->data_.data(), set.w.data(), np);
      copy_doubles(cache->data_.data() + np, sa, 2 * np);
      cache->pairs_ = np;
      cache->tails_ = set.has_tails();
      cache->anchor_ = cached;
    }
  }
  return true;
}

bool RotaryEmbedding::cos_sin_rows(const AngleSet& set, const RotaryRows& rows, bool for_apply,
                                   float a32, bool half, float* cos, float* sin,
                                   RotaryAnchorCache* cache) const {
  const std::int64_t rd = spec_.rotary_dim, n = rd / 2;
  const bool scaled = a32 != 1.0f;
  // Half layout with whole groups of 4 pairs: the kernel writes each row's first half in place,
  // which is then copied to the second half (torch.cat((freqs, freqs))).
  const bool in_place = half && n % 4 == 0;
  auto write_row = [&](std::int64_t r, const float* c, const float* s) {
    float* co = cos + r * rd;
    float* so = sin + r * rd;
    if (in_place) {
      if (scaled) {
        for (std::int64_t i = 0; i < n; ++i) {
          co[i] *= a32;
          so[i] *= a32;
        }
      }
      detail::copy_floats(co + n, co, static_cast<std::size_t>(n));
      detail::copy_floats(so + n, so, static_cast<std::size_t>(n));
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const float cv = scaled ? c[i] * a32 : c[i];
      const float sv = scaled ? s[i] * a32 : s[i];
      if (half) {
        co[i] = co[i + n] = cv;
        so[i] = so[i + n] = sv;
      } else {
        co[2 * i] = co[2 * i + 1] = cv;
        so[2 * i] = so[2 * i + 1] = sv;
      }
    }
  };
  return for_each_row(set, rows, for_apply, cache, write_row, in_place ? sin : nullptr,
                      in_place ? cos : nullptr, rd);
}

POSENC_SMALL bool RotaryEmbedding::mrope_rows(const AngleSet& set, const RotaryRows& rows,
                                              bool for_apply, float a32, bool half,
                                              std::int64_t columns, RotaryAnchorCache* cache,
                                              float* cos, float* sin,
                                              const ApplyTarget* target) const {
  // Each position row (t, h, w) as a table through cos_sin_rows (a value depends only on its
  // position, as elsewhere, and no second copy of the row loop is compiled), then each output
  // row gathered from the tables, run by run of columns that turn by the same position row. A
  // row of integer positions spanning fewer values than it has entries (an image's h and w
  // repeat a few values; text has t = h = w consecutive) gets a table of that range: one sincos
  // per distinct position. Others, one table row per row. The tables share the caller's anchor
  // cache: an image's rows and columns start in the same block, and a request in chunks (the JS
  // layer's) then computes that anchor once, not twice per chunk.
  const std::int64_t rd = spec_.rotary_dim, n = rd / 2, count = rows.count;
  std::vector<std::int64_t> runs;  // (first column, k) where k changes, then (columns, -1)
  for (std::int64_t j = 0; j < columns; ++j) {
    const int k = mrope_row(spec_, half ? j % n : j / 2);
    if (runs.empty() || runs.back() != k) {
      runs.push_back(j);
      runs.push_back(k);
    }
  }
  runs.push_back(columns);
  runs.push_back(-1);
  // One scratch: the gathered row (cos, then sin), then the tables, k after k (cos, then sin).
  RotaryRows one[3];
  double first[3] = {0, 0, 0};  // the position of table row 0, or -1: table row r is row r
  std::int64_t at[3] = {0, 0, 0}, total = 2 * columns;
  for (int k = 0; k < 3; ++k) {
    one[k] = rows;
    one[k].count = 0;
    bool used = false;
    for (std::size_t q = 1; q < runs.size(); q += 2)
      used = used || runs[q] == k;
    if (!used) continue;
    const double* p = rows.mrope_positions + k * count;
    double lo = p[0], hi = p[0];
    bool integers = true;
    for (std::int64_t r = 0; r < count; ++r) {
      lo = std::min(lo, p[r]);
      hi = std::max(hi, p[r]);
      integers = integers && p[r] == std::floor(p[r]);
    }
    one[k].mrope_positions = nullptr;
    first[k] = -1;
    if (integers && hi - lo < static_cast<double>(count)) {
      one[k].positions = nullptr;
      one[k].first_position = first[k] = lo;
      one[k].count = static_cast<std::int64_t>(hi - lo) + 1;
    } else {
      one[k].positions = p;
      one[k].count = count;
    }
    at[k] = (total + 3) / 4 * 4;  // each table 16-byte aligned
    total = at[k] + 2 * one[k].count * rd;
  }
  Buffer<float> scratch;
  if (!scratch.resize_for_overwrite(static_cast<std::size_t>(total))) return false;
  for (int k = 0; k < 3; ++k) {
    float* table = scratch.data() + at[k];
    if (one[k].count > 0 &&
        !cos_sin_rows(set, one[k], for_apply, a32, half, table, table + one[k].count * rd, cache))
      return false;
  }
  float* c = scratch.data();
  float* s = c + columns;
  for (std::int64_t r = 0; r < count; ++r) {
    for (std::size_t q = 0; q + 2 < runs.size(); q += 2) {
      const std::int64_t j = runs[q], len = runs[q + 2] - j;
      const auto k = static_cast<std::size_t>(runs[q + 1]);
      const double p = rows.mrope_positions[static_cast<std::int64_t>(k) * count + r];
      const std::int64_t row = first[k] < 0 ? r : static_cast<std::int64_t>(p - first[k]);
      const float* tc = scratch.data() + at[k] + row * rd + j;
      const float* ts = tc + one[k].count * rd;
      for (std::int64_t i = 0; i < len; ++i) {
        c[j + i] = tc[i];
        s[j + i] = ts[i];
      }
    }
    if (target != nullptr) {
      rotate_row(*target, r, c, s);
    } else {
      detail::copy_floats(cos + r * rd, c, static_cast<std::size_t>(rd));
      detail::copy_floats(sin + r * rd, s, static_cast<std::size_t>(rd));
    }
  }
  return true;
}

bool RotaryEmbedding::cos_sin_blocks(const AngleSet& set, const RotaryRows& rows, float* cos,
                                     float* sin, float scale, bool half) const {
  const std::int64_t np = set.np, rd = spec_.rotary_dim;
  alignas(16) double stack_anchor[2 * kStackPairs];
  Buffer<double> anchor;
  double* sa = stack_anchor;
  if (np > kStackPairs) {
    if (!anchor.resize(static_cast<std::size_t>(2 * np))) return false;
    sa = anchor.data();
  }
  double* ca = sa + np;
  detail::scalar::CosSinBlock B;
  B.sa = sa;
  B.ca = ca;
  B.step_s = set.step_s.data();
  B.step_c = set.step_c.data();
  B.np = np;
  B.n = rd / 2;
  B.scale = scale;
  B.half = half;
  B.F = set.split();
  for (std::int64_t r = 0; r < rows.count;) {
    const double p = rows.first_position + static_cast<double>(r);
    const double a = std::trunc(p / static_cast<double>(kBlock)) * static_cast<double>(kBlock);
    const std::int64_t e0 = static_cast<std::int64_t>(p - a);
    const std::int64_t e1 = std::min<std::int64_t>(kBlock, e0 + (rows.count - r));
    detail::rotary_kernel::sincos_f64_two_pass(B.F, np, a, sa, ca);
    B.anchor = a;
    detail::rotary_kernel::cos_sin_block(B, e0, e1, cos + r * rd, sin + r * rd, rd);
    r += e1 - e0;
  }
  return true;
}

namespace {

// The rows [begin, end) of rows (consecutive integer or explicit positions: the same positions;
// multimodal: the part's t, h and w rows copied into three, as RotaryRows holds them). False: out
// of memory.
bool rows_part(const RotaryRows& rows, std::int64_t begin, std::int64_t end, RotaryRows* part,
               Buffer<double>* three) {
  *part = rows;
  part->count = end - begin;
  part->first_position += static_cast<double>(begin);
  if (part->positions != nullptr) part->positions += begin;
  if (rows.mrope_positions == nullptr) return true;
  if (!three->resize_for_overwrite(static_cast<std::size_t>(3 * part->count))) return false;
  for (std::int64_t k = 0; k < 3; ++k) {
    for (std::int64_t r = 0; r < part->count; ++r)
      three->data()[k * part->count + r] = rows.mrope_positions[k * rows.count + begin + r];
  }
  part->mrope_positions = three->data();
  return true;
}

// A job a caller left running on pending is finished before the next call starts (the bindings
// always finish theirs; nothing is split in the single-threaded builds).
void settle(RotaryEmbedding::Pending* pending) {
  if constexpr (ThreadPool::kThreaded) {
    if (pending != nullptr) RotaryEmbedding::finish(*pending);
  }
}

void run_pending(void* context, std::int64_t begin, std::int64_t end) {
  RotaryEmbedding::Pending& job = *static_cast<RotaryEmbedding::Pending*>(context);
  if (!job.part(begin, end)) job.failed.store(true, std::memory_order_relaxed);
}

}  // namespace

// How many rows a share has at least: 64 K values (waking a worker costs tens of microseconds).
// Fractional consecutive positions (first + r must stay exact) are not split.
std::int64_t RotaryEmbedding::split_grain(ThreadPool* pool, const RotaryRows& rows,
                                          std::int64_t row_floats) {
  if (!ThreadPool::kThreaded || pool == nullptr || pool->threads() < 2) return 0;
  if (rows.positions == nullptr && rows.first_position != std::floor(rows.first_position)) return 0;
  const std::int64_t grain =
      std::max<std::int64_t>(1, 65536 / std::max<std::int64_t>(1, row_floats));
  return rows.count >= 2 * grain ? grain : 0;
}

bool RotaryEmbedding::cos_sin_part(const AngleSet& set, const RotaryRows& rows, std::int64_t begin,
                                   std::int64_t end, float a32, bool half, float* c,
                                   float* s) const {
  RotaryRows p;
  Buffer<double> three;
  if (!rows_part(rows, begin, end, &p, &three)) return false;
  if (p.mrope_positions != nullptr)
    return mrope_rows(set, p, false, a32, half, spec_.rotary_dim, nullptr, c, s, nullptr);
  const bool blocks =
      p.positions == nullptr && set.blocks > 1 &&
      (p.first_position + static_cast<double>(p.count - 1)) * set.w_max <= detail::kReduceLimit;
  return blocks ? cos_sin_blocks(set, p, c, s, a32, half)
                : cos_sin_rows(set, p, false, a32, half, c, s, nullptr);
}

RotaryEmbedding::Pending::Pending() = default;
RotaryEmbedding::Pending::~Pending() {
  if (pool != nullptr) pool->finish();  // a job still running ends before its context does
}

EncodingError RotaryEmbedding::split(ThreadPool* pool, std::int64_t count, std::int64_t grain,
                                     std::unique_ptr<AngleSet> temporary,
                                     std::function<bool(std::int64_t, std::int64_t)> part,
                                     Pending* pending) {
  Pending now;
  Pending& job = pending != nullptr ? *pending : now;
  job.pool = pool;
  job.part = std::move(part);
  job.temporary = std::move(temporary);
  job.failed.store(false, std::memory_order_relaxed);
  if (pending != nullptr) {
    pool->start_range(count, grain, 1, &run_pending, &job);
    return EncodingError{};
  }
  pool->for_each_range(count, grain, 1, &run_pending, &job);  // inline when nested in a body
  job.pool = nullptr;
  return job.failed.load(std::memory_order_relaxed) ? out_of_memory() : EncodingError{};
}

EncodingError RotaryEmbedding::finish(Pending& pending) {
  if (pending.pool == nullptr) return EncodingError{};
  pending.pool->finish();
  pending.pool = nullptr;
  pending.part = nullptr;
  pending.temporary.reset();
  return pending.failed.load(std::memory_order_relaxed) ? out_of_memory() : EncodingError{};
}

POSENC_HOT_ENTRY EncodingError RotaryEmbedding::cos_sin(const RotaryRows& rows, float* cos,
                                                        float* sin, std::size_t cos_len,
                                                        std::size_t sin_len,
                                                        RotaryAnchorCache* cache, ThreadPool* pool,
                                                        Pending* pending) const {
  settle(pending);
  double L = 0;
  EncodingError e = check_cos_sin(rows, cos, sin, cos_len, sin_len, &L);
  if (!e.ok()) return e;
  const AngleSet* set = nullptr;
  std::unique_ptr<AngleSet> temporary;
  e = angle_set_for(L, &set, &temporary);
  if (!e.ok()) return e;
  // HF: cos = emb.cos() * attention_scaling, a float32 tensor times a Python float.
  const float a32 = static_cast<float>(set->attention);
  // deinterleave applies HF's cat(freqs, freqs) after de-interleaving the input pairs.
  const bool half = spec_.layout != RotaryLayout::interleaved;
  if constexpr (ThreadPool::kThreaded) {
    if (const std::int64_t grain = split_grain(pool, rows, 2 * spec_.rotary_dim)) {
      const std::int64_t rd = spec_.rotary_dim;
      auto part = [this, set, rows, cos, sin, a32, half, rd](std::int64_t begin, std::int64_t end) {
        return cos_sin_part(*set, rows, begin, end, a32, half, cos + begin * rd, sin + begin * rd);
      };
      return split(pool, rows.count, grain, std::move(temporary), part, pending);
    }
  }
  const double last = rows.first_position + static_cast<double>(rows.count - 1);
  if (rows.positions == nullptr && rows.mrope_positions == nullptr && set->blocks > 1 &&
      rows.first_position == std::floor(rows.first_position) &&
      last * set->w_max <= detail::kReduceLimit) {
    // Consecutive integer positions: block by block, the rows of each written straight into
    // cos and sin in the layout (the values of for_each_row below, bit for bit: the same anchor,
    // step and expressions).
    return cos_sin_blocks(*set, rows, cos, sin, a32, half) ? EncodingError{} : out_of_memory();
  }
  const bool done =
      rows.mrope_positions != nullptr
          ? mrope_rows(*set, rows, false, a32, half, spec_.rotary_dim, cache, cos, sin, nullptr)
          : cos_sin_rows(*set, rows, false, a32, half, cos, sin, cache);
  return done ? EncodingError{} : out_of_memory();
}

POSENC_HOT_ENTRY EncodingError RotaryEmbedding::apply(const RotaryRows& rows, std::int64_t heads,
                                                      float* x, std::size_t x_len,
                                                      RotaryAnchorCache* cache, ThreadPool* pool,
                                                      bool heads_first, Pending* pending) const {
  return apply_rows(rows, heads, x, nullptr, x_len, HalfFormat::float16, cache, pool, heads_first,
                    pending);
}

POSENC_HOT_ENTRY EncodingError RotaryEmbedding::apply_half(const RotaryRows& rows,
                                                           std::int64_t heads, std::uint16_t* bits,
                                                           std::size_t x_len, HalfFormat format,
                                                           RotaryAnchorCache* cache,
                                                           ThreadPool* pool, bool heads_first,
                                                           Pending* pending) const {
  return apply_rows(rows, heads, nullptr, bits, x_len, format, cache, pool, heads_first, pending);
}

EncodingError RotaryEmbedding::apply_rows(const RotaryRows& rows, std::int64_t heads, float* x,
                                          std::uint16_t* bits, std::size_t x_len, HalfFormat format,
                                          RotaryAnchorCache* cache, ThreadPool* pool,
                                          bool heads_first, Pending* pending) const {
  settle(pending);
  double L = 0;
  EncodingError e =
      check_apply(rows, heads, x != nullptr ? static_cast<void*>(x) : bits, x_len, &L);
  if (!e.ok()) return e;
  const std::int64_t hd = spec_.head_dim;
  const std::int64_t row_stride = heads_first ? hd : heads * hd;
  const std::int64_t head_stride = heads_first ? rows.count * hd : hd;
  const AngleSet* set = nullptr;
  std::unique_ptr<AngleSet> temporary;
  e = angle_set_for(L, &set, &temporary);
  if (!e.ok()) return e;
  const ApplyTarget target{x,       heads, row_stride, head_stride, spec_.rotary_dim, spec_.layout,
                           nullptr, bits,  nullptr,    format};
  if constexpr (ThreadPool::kThreaded) {
    if (const std::int64_t grain = split_grain(pool, rows, heads * hd)) {
      auto part = [this, set, rows, target](std::int64_t begin, std::int64_t end) {
        RotaryRows p;
        Buffer<double> three;
        ApplyTarget share = target;
        if (share.x != nullptr)
          share.x += begin * share.row_stride;
        else
          share.bits += begin * share.row_stride;
        return rows_part(rows, begin, end, &p, &three) && rotate_rows(*set, p, share, nullptr);
      };
      return split(pool, rows.count, grain, std::move(temporary), part, pending);
    }
  }
  return rotate_rows(*set, rows, target, cache) ? EncodingError{} : out_of_memory();
}

bool RotaryEmbedding::rotate_rows(const AngleSet& set, const RotaryRows& rows,
                                  const ApplyTarget& target, RotaryAnchorCache* cache) const {
  const std::int64_t rd = spec_.rotary_dim;
  // interleaved: each cosine twice, (-sin, sin); deinterleave: one head; then, for 16-bit data,
  // one row's rotated values
  Buffer<float> scratch;
  const std::int64_t pairs = spec_.layout != RotaryLayout::half ? 2 * rd : 0;
  const std::int64_t local = target.bits != nullptr ? target.heads * rd : 0;
  if (pairs + local > 0 && !scratch.resize_for_overwrite(static_cast<std::size_t>(pairs + local)))
    return false;
  ApplyTarget t = target;
  t.pairs = scratch.data();
  t.local = scratch.data() + pairs;
  const auto rotate = [&](std::int64_t r, const float* c, const float* s) {
    rotate_row(t, r, c, s);
  };
  if (rows.mrope_positions == nullptr) return for_each_row(set, rows, true, cache, rotate);
  // Multimodal: apply's values (A in float64 before rounding) of the three position rows, row by
  // row in the half layout's rd / 2 pair values.
  return mrope_rows(set, rows, true, 1.0f, true, rd / 2, cache, nullptr, nullptr, &t);
}

}  // namespace posenc
