// erf for float32 (exact_math.hpp), per element in the GELU layers: compiled -O3, unlike the
// rest of math/ (the frequency functions run once per encoding and are compiled for size).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "math/exact_math.hpp"

namespace posenc::math {

namespace {

// e^x for -17 < x < 0 in float64 (erf's tail), within about 2 ulp: x = k ln2 + r (Cody-Waite,
// ln2 in two parts, k ln2_hi exact), |r| <= 0.35, e^r by its Taylor polynomial of degree 12
// (truncation below 2^-52), times 2^k built from its bits.
double exp_neg(double x) {
  constexpr double kInvLn2 = 0x1.71547652b82fep0;
  constexpr double kLn2Hi = 0x1.62e42fee00000p-1;  // 32 bits: k * kLn2Hi is exact
  constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
  constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52: rounds to an integer
  const double k = (x * kInvLn2 + kRound) - kRound;
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  const double p =
      1.0 +
      r * (1.0 + r * (1.0 / 2 +
                      r * (1.0 / 6 +
                           r * (1.0 / 24 +
                                r * (1.0 / 120 +
                                     r * (1.0 / 720 +
                                          r * (1.0 / 5040 +
                                               r * (1.0 / 40320 +
                                                    r * (1.0 / 362880 +
                                                         r * (1.0 / 3628800 +
                                                              r * (1.0 / 39916800 +
                                                                   r * (1.0 / 479001600))))))))))));
  const std::uint64_t bits = static_cast<std::uint64_t>(1023 + static_cast<std::int64_t>(k)) << 52;
  double two_k;
  std::memcpy(&two_k, &bits, sizeof two_k);
  return p * two_k;
}

// FreeBSD/fdlibm s_erf.c (Sun Microsystems, 1993; as in musl src/math/erf.c).
constexpr double kErx = 8.45062911510467529297e-01;
constexpr double kPp0 = 1.28379167095512558561e-01, kPp1 = -3.25042107247001499370e-01,
                 kPp2 = -2.84817495755985104766e-02, kPp3 = -5.77027029648944159157e-03,
                 kPp4 = -2.37630166566501626084e-05;
constexpr double kQq1 = 3.97917223959155352819e-01, kQq2 = 6.50222499887672944485e-02,
                 kQq3 = 5.08130628187576562776e-03, kQq4 = 1.32494738004321644526e-04,
                 kQq5 = -3.96022827877536812320e-06;
constexpr double kPa0 = -2.36211856075265944077e-03, kPa1 = 4.14856118683748331666e-01,
                 kPa2 = -3.72207876035701323847e-01, kPa3 = 3.18346619901161753674e-01,
                 kPa4 = -1.10894694282396677476e-01, kPa5 = 3.54783043256182359371e-02,
                 kPa6 = -2.16637559486879084300e-03;
constexpr double kQa1 = 1.06420880400844228286e-01, kQa2 = 5.40397917702171048937e-01,
                 kQa3 = 7.18286544141962662868e-02, kQa4 = 1.26171219808761642112e-01,
                 kQa5 = 1.36370839120290507362e-02, kQa6 = 1.19844998467991074170e-02;
constexpr double kRa0 = -9.86494403484714822705e-03, kRa1 = -6.93858572707181764372e-01,
                 kRa2 = -1.05586262253232909814e+01, kRa3 = -6.23753324503260060396e+01,
                 kRa4 = -1.62396669462573470355e+02, kRa5 = -1.84605092906711035994e+02,
                 kRa6 = -8.12874355063065934246e+01, kRa7 = -9.81432934416914548592e+00;
constexpr double kSa1 = 1.96512716674392571292e+01, kSa2 = 1.37657754143519042600e+02,
                 kSa3 = 4.34565877475229228821e+02, kSa4 = 6.45387271733267880336e+02,
                 kSa5 = 4.29008140027567833386e+02, kSa6 = 1.08635005541779435134e+02,
                 kSa7 = 6.57024977031928170135e+00, kSa8 = -6.04244152148580987438e-02;
constexpr double kRb0 = -9.86494292470009928597e-03, kRb1 = -7.99283237680523006574e-01,
                 kRb2 = -1.77579549177547519889e+01, kRb3 = -1.60636384855821916062e+02,
                 kRb4 = -6.37566443368389627722e+02, kRb5 = -1.02509513161107724954e+03,
                 kRb6 = -4.83519191608651397019e+02;
constexpr double kSb1 = 3.03380607434824582924e+01, kSb2 = 3.25792512996573918826e+02,
                 kSb3 = 1.53672958608443695994e+03, kSb4 = 3.19985821950859553908e+03,
                 kSb5 = 2.55305040643316442583e+03, kSb6 = 4.74528541206955367215e+02,
                 kSb7 = -2.24409524465858183362e+01;

}  // namespace

float erf(float xf) {
  const double x = xf;
  const double ax = std::fabs(x);
  if (!(ax < 4.0)) return std::isnan(x) ? xf : (x > 0 ? 1.0f : -1.0f);
  double y;
  if (ax < 0.84375) {
    const double z = x * x;
    const double r = kPp0 + z * (kPp1 + z * (kPp2 + z * (kPp3 + z * kPp4)));
    const double s = 1.0 + z * (kQq1 + z * (kQq2 + z * (kQq3 + z * (kQq4 + z * kQq5))));
    y = ax + ax * (r / s);
  } else if (ax < 1.25) {
    const double s = ax - 1.0;
    const double p =
        kPa0 + s * (kPa1 + s * (kPa2 + s * (kPa3 + s * (kPa4 + s * (kPa5 + s * kPa6)))));
    const double q =
        1.0 + s * (kQa1 + s * (kQa2 + s * (kQa3 + s * (kQa4 + s * (kQa5 + s * kQa6)))));
    y = kErx + p / q;
  } else {
    // erfc x = e^(-x^2 - 0.5625 + R/S) / x (fdlibm splits x^2 exactly; its float64 rounding,
    // below 2^-49, does not reach a float32 result).
    const double s = 1.0 / (ax * ax);
    double r, q;
    if (ax < 1 / 0.35) {
      r = kRa0 +
          s * (kRa1 + s * (kRa2 + s * (kRa3 + s * (kRa4 + s * (kRa5 + s * (kRa6 + s * kRa7))))));
      q = 1.0 +
          s * (kSa1 +
               s * (kSa2 +
                    s * (kSa3 + s * (kSa4 + s * (kSa5 + s * (kSa6 + s * (kSa7 + s * kSa8)))))));
    } else {
      r = kRb0 + s * (kRb1 + s * (kRb2 + s * (kRb3 + s * (kRb4 + s * (kRb5 + s * kRb6)))));
      q = 1.0 +
          s * (kSb1 + s * (kSb2 + s * (kSb3 + s * (kSb4 + s * (kSb5 + s * (kSb6 + s * kSb7))))));
    }
    y = 1.0 - exp_neg(-ax * ax - 0.5625 + r / q) / ax;
  }
  return static_cast<float>(x < 0 ? -y : y);
}

}  // namespace posenc::math
