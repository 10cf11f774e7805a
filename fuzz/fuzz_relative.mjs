// Randomized differential fuzzing of posenc/relative (plain JavaScript, so not a libFuzzer target):
// random T5 and DeBERTa settings, lengths, offsets, heads and outputs, each result compared with a
// direct per-(query, key) port of Hugging Face's formulas written independently here (each value
// from its own float32 chain, the log from the double-double path), and every rejected input must
// be a TypeError or RangeError whose message starts with "posenc.".
//   node fuzz/fuzz_relative.mjs [seconds, default 20] [seed]
// It runs the source modules (no build needed): scripts/fuzz.sh runs it before the package is built.
import { logDoubleDouble, logfFromDoubleDouble } from '../bindings/js/float32_log.js';
import { relativeBias, relativeBuckets } from '../bindings/js/relative.js';

const seconds = Number(process.argv[2] ?? 20);
let seed = Number(process.argv[3] ?? Date.now() % 2 ** 31) >>> 0;
console.log(`fuzz_relative: ${seconds}s from seed ${seed}`);
const f32 = Math.fround;
const next = () => {
  seed = (Math.imul(seed ^ (seed >>> 15), 2246822519) + 0x9e3779b9) >>> 0;
  return seed / 2 ** 32;
};
const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
const pick = (list) => list[int(0, list.length - 1)];

/** T5Attention._relative_position_bucket of key - query, straight from the formula. */
function t5Direct(rel, numBuckets, maxDistance, bidirectional) {
  let n = numBuckets;
  let out = 0;
  let d;
  if (bidirectional) {
    n = Math.floor(n / 2);
    if (rel > 0) out += n;
    d = Math.abs(rel);
  } else {
    d = -Math.min(rel, 0);
  }
  const maxExact = Math.floor(n / 2);
  if (d < maxExact) return out + d;
  const divisor = f32(logDoubleDouble(maxDistance / maxExact)[0]);
  const x = f32(f32(d) / f32(maxExact));
  const v = f32(f32(logfFromDoubleDouble(x) / divisor) * f32(n - maxExact));
  return out + Math.min(maxExact + Math.trunc(v), n - 1);
}

/** build_relative_position's value of query - key (make_log_bucket_position when bucketed). */
function debertaDirect(rel, bucketSize, maxPosition) {
  if (!(bucketSize > 0 && maxPosition > 0)) return rel;
  const mid = Math.floor(bucketSize / 2);
  const absPos = rel < mid && rel > -mid ? mid - 1 : Math.abs(rel);
  if (absPos <= mid) return rel;
  const c = logfFromDoubleDouble(f32((maxPosition - 1) / mid));
  const v = f32(f32(logfFromDoubleDouble(f32(f32(absPos) / f32(mid))) / c) * f32(mid - 1));
  return Math.sign(rel) * f32(Math.ceil(v) + mid);
}

function fail(message, details) {
  console.error(`fuzz_relative: ${message}\n${JSON.stringify(details)}`);
  process.exit(1);
}

function expectClean(error, details) {
  if (!(error instanceof TypeError || error instanceof RangeError) || !error.message.startsWith('posenc.')) {
    fail(`unexpected error ${error?.constructor?.name}: ${error?.message}`, details);
  }
}

const end = Date.now() + seconds * 1000;
let runs = 0;
let rejected = 0;
while (Date.now() < end) {
  runs++;
  const q = int(1, 200);
  const k = int(1, 200);
  if (next() < 0.55) {
    const numBuckets = pick([int(-2, 8), int(2, 80), int(2, 600)]);
    const bidirectional = next() < 0.5;
    const maxDistance = pick([int(0, 20), int(1, 3000), int(1, 2 ** 20)]);
    const offset = pick([0, int(0, 100), int(0, 2 ** 31 - 1)]);
    const heads = int(1, 6);
    const options = { numBuckets, maxDistance, bidirectional, offset };
    const details = { q, k, heads, ...options };
    let buckets;
    let bias;
    const table = Float32Array.from({ length: Math.max(numBuckets, 0) * heads }, () => f32(next() * 4 - 2));
    try {
      buckets = relativeBuckets(q, k, options);
      bias = relativeBias(table, heads, q, k, options);
    } catch (error) {
      expectClean(error, details);
      rejected++;
      continue;
    }
    const n = bidirectional ? Math.floor(numBuckets / 2) : numBuckets;
    if (Math.floor(n / 2) < 1 || maxDistance <= Math.floor(n / 2)) fail('an invalid setting was accepted', details);
    for (let i = 0; i < q; i++) {
      for (let j = 0; j < k; j++) {
        const b = t5Direct(j - (offset + i), numBuckets, maxDistance, bidirectional);
        if (buckets[i * k + j] !== b) fail(`bucket (${i}, ${j}) is ${buckets[i * k + j]}, direct ${b}`, details);
        for (let h = 0; h < heads; h++) {
          if (!Object.is(bias[(h * q + i) * k + j], table[b * heads + h])) fail(`bias (${h}, ${i}, ${j})`, details);
        }
      }
    }
  } else {
    const positionBuckets = pick([int(-3, 3), int(-3, 64), int(2, 600)]);
    const maxRelativePositions = pick([int(-3, 3), int(-3, 300), int(1, 5000)]);
    const maxPositionEmbeddings = int(1, 1024);
    const output = pick(['relative', 'c2p', 'p2c']);
    const options = { scheme: 'deberta', positionBuckets, maxRelativePositions, maxPositionEmbeddings, output };
    const details = { q, k, ...options };
    let result;
    try {
      result = relativeBuckets(q, k, { ...options, as: 'tensor' });
    } catch (error) {
      expectClean(error, details);
      rejected++;
      continue;
    }
    const maxRel = maxRelativePositions < 1 ? maxPositionEmbeddings : maxRelativePositions;
    const attSpan = positionBuckets > 0 ? positionBuckets : maxRel;
    const swapped = output === 'p2c' && q !== k;
    const [rows, cols] = swapped ? [k, k] : [q, k];
    if (result.dims[0] !== rows || result.dims[1] !== cols) fail(`dims ${result.dims}`, details);
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        const r = swapped ? debertaDirect(i - j, maxRel, positionBuckets) : debertaDirect(i - j, positionBuckets, maxRel);
        let want = r;
        if (output !== 'relative') want = Math.min(Math.max((output === 'c2p' ? r : -r) + attSpan, 0), 2 * attSpan - 1);
        if (!Number.isFinite(want)) fail('a setting without a finite result was accepted', details);
        if (result.data[i * cols + j] !== want) fail(`(${i}, ${j}) is ${result.data[i * cols + j]}, direct ${want}`, details);
      }
    }
  }
}
console.log(`fuzz_relative: ${runs} runs (${rejected} rejected with a clear error), all equal to the direct port`);
