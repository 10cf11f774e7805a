// Internal: double-double arithmetic, a value held as an unevaluated sum hi + lo of two float64
// (|lo| <= ulp(hi) / 2), about 106 significant bits. The classic error-free transformations
// (Dekker's split and product, Knuth's two-sum) and the operations of Bailey's QD library
// ("sloppy" add: relative error about 2^-104 unless the operands cancel, 2^-106 for mul).
// Written without FMA: wasm has none, and the same expressions must give the same bits natively
// (x86-64 without -mfma) and in both wasm builds.
#pragma once

#include <cmath>

namespace posenc::math {

// Dekker's splitter 2^27 + 1: hi = t - (t - a) with t = a * kSplit has 26 significant bits.
inline constexpr double kSplit = 134217729.0;

// a = hi + lo exactly, hi with at most 26 significant bits (|a| < 2^996).
inline void split(double a, double& hi, double& lo) {
  const double t = a * kSplit;
  hi = t - (t - a);
  lo = a - hi;
}

struct DD {
  double hi, lo;
};

// a + b exactly, for |a| >= |b| (or a = 0).
inline DD quick_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

// a + b exactly.
inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

// a * b exactly (no underflow; |a|, |b| < 2^996).
inline DD two_prod(double a, double b) {
  const double p = a * b;
  double ah, al, bh, bl;
  split(a, ah, al);
  split(b, bh, bl);
  return {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
}

inline DD add(DD a, DD b) {
  DD s = two_sum(a.hi, b.hi);
  const DD t = two_sum(a.lo, b.lo);
  s.lo += t.hi;
  s = quick_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return quick_two_sum(s.hi, s.lo);
}

inline DD neg(DD a) {
  return {-a.hi, -a.lo};
}

inline DD mul(DD a, DD b) {
  DD p = two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return quick_two_sum(p.hi, p.lo);
}

inline DD mul_d(DD a, double b) {
  DD p = two_prod(a.hi, b);
  p.lo += a.lo * b;
  return quick_two_sum(p.hi, p.lo);
}

inline DD div_d(DD a, double b) {
  const double q1 = a.hi / b;
  const DD p = two_prod(q1, b);
  const double q2 = (((a.hi - p.hi) - p.lo) + a.lo) / b;
  return quick_two_sum(q1, q2);
}

// a * 2^e exactly (no overflow or underflow of either part).
inline DD scale(DD a, int e) {
  return {std::ldexp(a.hi, e), std::ldexp(a.lo, e)};
}

}  // namespace posenc::math
