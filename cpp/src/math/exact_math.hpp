// Internal: the elementary functions the core needs, written here instead of taken from libm.
//
// Why: the libm of Emscripten (musl) and of glibc compute exp, log and pow with the ARM
// optimized-routines algorithms, whose lookup tables (__exp_data, __log_data, __pow_log_data:
// about 10 KB of doubles, which gzip cannot shrink) plus their code cost about 8-10 KB of every
// gzipped .wasm. The functions below use no table: argument reduction by powers of two and
// polynomials in double-double arithmetic (math/double_double.hpp). They run once per frequency
// or slope when an encoding is built, not per element: about 0.3 us (exp, log) and 0.6 us (pow)
// natively, 0.65 and 1.3 us in wasm, 20-70 times libm's (an encoder of dim 4096 takes 2.7 ms to
// build instead of 0.04 ms; ALiBi slopes of 64 heads 0.09 ms). erf (per element in GELU layers)
// is a plain float64 evaluation instead, as fast as musl's erff.
//
// Accuracy: exp, log, log10 and pow return the float64 nearest to the exact result (correctly
// rounded) unless the exact result lies within about 2^-98 relative of a midpoint between two
// float64: probability about 2^-45 per call, and no such input is known except exact midpoints,
// which only pow can meet (b^e exact with more than 53 bits, e.g. 10^23): those round to either
// neighbour. glibc's and musl's results (at most 0.52 ulp from exact) are the same wherever those
// are correctly rounded; glibc's exp and pow are not for about 1 frequency in 1300, log10 more
// often (tests/cpp/test_exact_math.cpp counts them on every frequency the encodings compute).
// Results in the float64 subnormal range (below 2^-1022) may be one ulp off (rounded twice). The
// same code runs natively and in both wasm builds (no FMA, no long double), so the results are
// identical on every build.
#pragma once

#include "math/double_double.hpp"

namespace posenc::math {

// e^a for a double-double a with |a.hi| <= 708: relative error below about 2^-100 (2^-98 for
// |a.hi| > 32). a = k ln2 + r, |r| <= ln2/2; e^r = (1 + s)^256 with s = expm1(r / 256) from its
// Taylor series (ten terms), then eight squarings.
DD exp_dd(DD a);

// ln x for 0 < x < inf (subnormals included): relative error below about 2^-102. x = 2^e m,
// sqrt(1/2) <= m < sqrt(2); a float64 seed y0 of ln m (atanh series, within 2^-51), then one
// Newton step on e^y = m in double-double, y0 + (m - 1) + m expm1(-y0), which squares the seed's
// error; plus e ln 2.
DD log_dd(double x);

// e^x correctly rounded (see above); +inf above 709.78, +0 below -745.2, NaN for NaN.
double exp(double x);

// ln x correctly rounded; -inf for +-0, NaN for x < 0 or NaN, +inf for +inf.
double log(double x);

// log10 x correctly rounded (exact for powers of ten); same special values as log.
double log10(double x);

// b^e correctly rounded for b > 0 finite and e finite: e ln b in double-double, then exp_dd
// (exact results such as 2^-8 or 10^5 come out exact). b^0 = 1^e = 1; b = +0 gives +0 (e > 0)
// or +inf (e < 0); b < 0, infinities and NaN give NaN (the core never asks for them).
double pow(double b, double e);

// erf x rounded to float32 from a float64 evaluation (FreeBSD/fdlibm s_erf.c's rational
// approximations, error below 1 float64 ulp, with a table-free float64 exp): the float32 nearest
// to erf x except when erf x lies within about 2^-50 of a float32 midpoint; +-1 for |x| >= 4
// (erf x rounds to +-1 in float32 from |x| >= 3.92).
float erf(float x);

}  // namespace posenc::math
