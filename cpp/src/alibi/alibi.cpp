// ALiBi slopes and biases (alibi.hpp). Slopes: the formula of get_slopes in
// ofirpress/attention_with_linear_biases (fairseq/models/transformer.py), in float64.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "hot_entry.hpp"
#include "math/exact_math.hpp"
#include "posenc/alibi.hpp"
#include "posenc/buffer.hpp"
#include "sincos/row_copy.hpp"

namespace posenc {

namespace {

// get_slopes_power_of_2(n): start = 2^(-2^-(log2 n - 3)), start * ratio^i with ratio = start.
POSENC_SMALL void slopes_power_of_2(std::int64_t n, std::vector<double>* out) {
  int log2n = 0;
  while ((std::int64_t{1} << log2n) < n)
    ++log2n;
  const double start = math::pow(2.0, -math::pow(2.0, -(static_cast<double>(log2n) - 3)));
  const double ratio = start;
  for (std::int64_t i = 0; i < n; ++i)
    out->push_back(start * math::pow(ratio, static_cast<double>(i)));
}

POSENC_SMALL void slopes(std::int64_t n, std::vector<double>* out) {
  if ((n & (n - 1)) == 0) {
    slopes_power_of_2(n, out);
    return;
  }
  std::int64_t p = 1;
  while (p * 2 < n)
    p *= 2;  // closest_power_of_2 = 2^floor(log2 n)
  slopes_power_of_2(p, out);
  std::vector<double> twice;
  slopes(2 * p, &twice);
  for (std::int64_t i = 0; i < n - p; ++i)
    out->push_back(twice[static_cast<std::size_t>(2 * i)]);
}

// The slopes of n heads, computed once per head count and thread: alibi_bias_rows is called once
// per chunk of rows (hundreds of times for one tensor), and each slope costs a few exact pows.
POSENC_SMALL const std::vector<double>& cached_slopes(std::int64_t n) {
  thread_local std::int64_t cached_n = 0;
  thread_local std::vector<double> cached;
  if (cached_n != n) {
    cached.clear();
    slopes(n, &cached);
    cached_n = n;
  }
  return cached;
}

POSENC_SMALL EncodingError bad(const char* name, const std::string& requirement, std::int64_t got) {
  return encoding_error(EncodingStatus::invalid_argument, name,
                        requirement + ", got " + integer_text(got));
}

}  // namespace

EncodingError alibi_slopes(std::int64_t heads, double* out, std::size_t out_len) {
  if (heads < 1 || heads > kMaxAlibiHeads)
    return bad("heads", "must be an integer from 1 to 65536", heads);
  if (out == nullptr || out_len != static_cast<std::size_t>(heads))
    return encoding_error(EncodingStatus::size_mismatch, "out", "must hold heads numbers");
  const std::vector<double>& m = cached_slopes(heads);
  std::memcpy(out, m.data(), m.size() * sizeof(double));
  return {};
}

POSENC_SMALL EncodingError validate(const AlibiSpec& s) {
  if (s.heads < 1 || s.heads > kMaxAlibiHeads)
    return bad("heads", "must be an integer from 1 to 65536", s.heads);
  if (s.query_length < 1 || s.query_length > kMaxAlibiElements)
    return bad("queryLength", "must be an integer >= 1", s.query_length);
  if (s.key_length < 1 || s.key_length > kMaxAlibiElements)
    return bad("keyLength", "must be an integer >= 1", s.key_length);
  if (s.query_length > kMaxAlibiElements / s.heads / s.key_length)
    return bad("keyLength", "times heads * queryLength must be at most 2^31 - 1", s.key_length);
  if (s.mode != AlibiMode::causal && s.mode != AlibiMode::symmetric)
    return encoding_error(EncodingStatus::invalid_argument, "mode",
                          "must be 'causal' or 'symmetric'");
  if (s.offset < 0 || s.offset > kMaxAlibiOffset)
    return bad("offset", "must be an integer from 0 to 2^31 - 1", s.offset);
  return {};
}

POSENC_HOT_ENTRY EncodingError alibi_bias_rows(const AlibiSpec& s, std::int64_t first_row,
                                               std::int64_t row_count, float* out,
                                               std::size_t out_len) {
  EncodingError e = validate(s);
  if (!e.ok()) return e;
  const std::int64_t rows = s.heads * s.query_length, k = s.key_length;
  if (first_row < 0 || first_row >= rows)
    return bad("firstRow", "must be from 0 to heads * queryLength - 1", first_row);
  if (row_count < 1 || row_count > rows - first_row)
    return bad("rowCount", "must be from 1 to heads * queryLength - firstRow", row_count);
  if (out == nullptr || out_len != static_cast<std::size_t>(row_count * k))
    return encoding_error(
        EncodingStatus::size_mismatch, "out",
        "must hold rowCount * keyLength = " + integer_text(row_count * k) + " floats");
  const std::vector<double>& m = cached_slopes(s.heads);
  // Per head, two tables of float32(-(m d)): `back` over the distances d = (offset + i) - j >= 0
  // the rows of this call need, stored so that a row is a contiguous slice (back[t] holds the
  // distance hi - t), and `ahead` over j - (offset + i) >= 1 (symmetric, keys after the query).
  const std::int64_t i_first = first_row % s.query_length;
  const std::int64_t i_last = (first_row + row_count - 1) % s.query_length;
  const bool one_head = first_row / s.query_length == (first_row + row_count - 1) / s.query_length;
  const std::int64_t q_lo = one_head ? i_first : 0;
  const std::int64_t q_hi = one_head ? i_last : s.query_length - 1;
  const std::int64_t d_lo = s.offset + q_lo, d_hi = s.offset + q_hi;  // query positions
  const std::int64_t back_lo = d_lo - (k - 1) > 0 ? d_lo - (k - 1) : 0;
  const std::int64_t back_len = d_hi - back_lo + 1;
  const std::int64_t ahead_len = k - 1 - d_lo > 0 ? k - 1 - d_lo : 0;  // distances 1..ahead_len
  Buffer<float> back, ahead;
  if (!back.resize(static_cast<std::size_t>(back_len)) ||
      !ahead.resize(static_cast<std::size_t>(ahead_len + 1)))
    return encoding_error(EncodingStatus::out_of_memory, "keyLength",
                          "needs more memory than is available (two rows of keyLength floats "
                          "beside the output)");
  const float minus_inf = -std::numeric_limits<float>::infinity();
  std::int64_t table_head = -1;
  for (std::int64_t r = 0; r < row_count; ++r) {
    const std::int64_t row = first_row + r, h = row / s.query_length, i = row % s.query_length;
    if (h != table_head) {
      const double slope = m[static_cast<std::size_t>(h)];
      for (std::int64_t t = 0; t < back_len; ++t)
        back.data()[t] = static_cast<float>(-(slope * static_cast<double>(d_hi - t)));
      if (s.mode == AlibiMode::symmetric)
        for (std::int64_t t = 1; t <= ahead_len; ++t)
          ahead.data()[t] = static_cast<float>(-(slope * static_cast<double>(t)));
      table_head = h;
    }
    float* o = out + r * k;
    const std::int64_t d = s.offset + i;
    const std::int64_t seen = d + 1 < k ? d + 1 : k;  // keys 0 .. seen - 1 are at or before d
    // o[j] = value(d - j) = back[d_hi - d + j]
    detail::copy_floats(o, back.data() + (d_hi - d), static_cast<std::size_t>(seen));
    if (seen < k) {
      if (s.mode == AlibiMode::causal) {
        for (std::int64_t j = seen; j < k; ++j)
          o[j] = minus_inf;
      } else {
        detail::copy_floats(o + seen, ahead.data() + 1, static_cast<std::size_t>(k - seen));
      }
    }
  }
  return {};
}

EncodingError alibi_bias(const AlibiSpec& spec, float* out, std::size_t out_len) {
  EncodingError e = validate(spec);
  if (!e.ok()) return e;
  return alibi_bias_rows(spec, 0, spec.heads * spec.query_length, out, out_len);
}

}  // namespace posenc
