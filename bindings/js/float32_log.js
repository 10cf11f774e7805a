// The float32 natural logarithm, correctly rounded: what a float32 `torch.log` gives wherever its
// result is the float32 nearest to the real logarithm (the relative position buckets of T5 and
// DeBERTa take one per distance, and a bucket can change with the last bit of it).
//
// Math.log is accurate to about one double ulp (the standard asks for an implementation-defined
// approximation, engines use fdlibm's algorithm); rounding it to float32 gives the nearest float32
// except where the real value lies within a few double ulps of a point halfway between two float32
// values. There (about one input in 2^26) the logarithm is recomputed in double-double
// arithmetic, accurate to about 2^-100, and rounded from that.

const f32 = Math.fround;
const SPLIT = 134217729; // 2^27 + 1, Dekker's splitter
// ln 2 as a double-double.
const LN2_HI = 0.6931471805599453;
const LN2_LO = 2.3190468138462996e-17;

const bits = new Float32Array(1);
const word = new Uint32Array(bits.buffer);

/** The float32 after (up = true) or before positive float32 f. */
function neighbour(f, up) {
  bits[0] = f;
  word[0] += up ? 1 : -1;
  return bits[0];
}

// Double-double arithmetic: [hi, lo] pairs with |lo| <= ulp(hi) / 2.
function twoSum(a, b) {
  const s = a + b;
  const v = s - a;
  return [s, (a - (s - v)) + (b - v)];
}

function twoProduct(a, b) {
  const p = a * b;
  let t = SPLIT * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b);
  const bl = b - bh;
  return [p, ((ah * bh - p) + ah * bl + al * bh) + al * bl];
}

function add(a, b) {
  const [s, e] = twoSum(a[0], b[0]);
  return twoSum(s, e + a[1] + b[1]);
}

function mul(a, b) {
  const [p, e] = twoProduct(a[0], b[0]);
  return twoSum(p, e + a[0] * b[1] + a[1] * b[0]);
}

/** 1 / n as a double-double (n a small positive integer). */
function reciprocal(n) {
  const h = 1 / n;
  const [p, e] = twoProduct(h, n);
  return [h, (1 - p - e) / n];
}

const TERMS = 22; // |s| <= 0.172: s^(2 * 22) < 2^-110
const ODD = Array.from({ length: TERMS }, (_, k) => reciprocal(2 * k + 1));

/**
 * ln x for a positive finite double x whose significand has at most 26 bits (a float32 value, or
 * an integer below 2^26), as a double-double within about 2^-100 relative: x = m 2^e with m in
 * [sqrt(1/2), sqrt(2)], ln m = 2 atanh(s), s = (m - 1) / (m + 1).
 */
export function logDoubleDouble(x) {
  let e = Math.floor(Math.log2(x));
  let m = x / 2 ** e;
  if (m > Math.SQRT2) {
    m /= 2;
    e += 1;
  } else if (m < Math.SQRT1_2) {
    m *= 2;
    e -= 1;
  }
  // m - 1 is exact (Sterbenz), m + 1 too (at most 28 significant bits).
  const num = m - 1;
  const den = m + 1;
  const s = num / den;
  const [p, pe] = twoProduct(s, den);
  const sd = twoSum(s, (num - p - pe) / den);
  const t = mul(sd, sd);
  let acc = ODD[TERMS - 1];
  for (let k = TERMS - 2; k >= 0; k--) acc = add(mul(acc, t), ODD[k]);
  const lnm = mul(sd, acc);
  const lnm2 = [2 * lnm[0], 2 * lnm[1]];
  return add(add(mul([e, 0], [LN2_HI, 0]), mul([e, 0], [LN2_LO, 0])), lnm2);
}

/** The float32 nearest to ln x, from the double-double logarithm (x as in logDoubleDouble). */
export function logfFromDoubleDouble(x) {
  if (x === 0) return -Infinity;
  const [h, l] = logDoubleDouble(x);
  const f = f32(h);
  if (f === 0) return 0;
  // The float32 neighbour of f on the side of the real value h + l: whichever of the two is
  // nearer to it (h - f and h - g are exact: Sterbenz).
  const up = h + l > f ? f > 0 : f < 0;
  const g = neighbour(Math.abs(f), up) * Math.sign(f);
  return Math.abs(h - g + l) < Math.abs(h - f + l) ? g : f;
}

/** The float32 nearest to ln x, x a positive float32 value (or 0: -Infinity, as torch.log). */
export function logf(x) {
  if (x === 1) return 0;
  if (x === 0) return -Infinity;
  const r = Math.log(x);
  const f = f32(r);
  // The midpoints around f; far from both (relative to the error of Math.log, with a margin of
  // 2^7), r and the real value round alike.
  const a = Math.abs(f);
  const below = (a + neighbour(a, false)) / 2;
  const above = (a + neighbour(a, true)) / 2;
  const ar = Math.abs(r);
  const margin = ar * 2 ** -45;
  if (Math.abs(ar - below) > margin && Math.abs(ar - above) > margin) return f;
  return logfFromDoubleDouble(x);
}
