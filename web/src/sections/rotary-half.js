// Section 8, "float16 caches" (issue 25): the cos / sin cache of the config in section 8's text box
// at positions 0..N-1 in float16, two ways:
//   A  posenc's rot.cosSin(N, { dtype: 'float16' }): each value the float16 nearest to the exact
//      cos(p w) / sin(p w), rounded once;
//   B  the float32 cache rot.cosSin(N) rounded to float16 here (what new Float16Array(cache) or
//      torch's .to(torch.float16) does): two roundings;
//   X  a reference: Math.cos / Math.sin of p * w in float64.
// and each one's error in float16 ulps against X. Computed on demand (the button, or when the panel
// first comes near the viewport), a chunk of positions per task.
import { LineChart, palette } from '../lib/chart.js';
import { guarded, intValue, nearViewport, yieldToBrowser } from '../lib/util.js';

// Positions per task: 512 x 128 columns x 2 tables took ~50 ms on the 2-core test machine under
// load, well under the 250 ms a task may take (tests/e2e/first-load.test.mjs).
const CHUNK = 512;
// Points on the chart: positions are grouped into at most this many buckets.
const BUCKETS = 512;

const f64 = new Float64Array(1);
const f64Hi = new Uint32Array(f64.buffer, 4, 1); // little-endian: the sign, exponent and top of the mantissa

/**
 * The float16 bits nearest to the float32 with bits `b` (round to nearest, ties to even; float16
 * subnormals kept; 65520 and up to infinity). What a float32 -> float16 cast does.
 */
export function halfBits(b) {
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  const mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 | (mant >>> 13) : 0); // inf, NaN (quiet)
  const e = exp - 112; // float16's biased exponent
  if (e >= 31) return sign | 0x7c00;
  if (e >= 1) {
    const r = (e << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    return sign | (rest > 0x1000 || (rest === 0x1000 && (r & 1)) ? r + 1 : r); // a carry moves up a binade
  }
  if (e < -10) return sign; // below half the smallest subnormal (2^-25): zero
  const m = mant | 0x800000;
  const shift = 14 - e; // 14..24
  const r = m >>> shift;
  const rest = m & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  return sign | (rest > half || (rest === half && (r & 1)) ? r + 1 : r);
}

/** Whether the float32 with bits `b` lies exactly halfway between two float16s (where halfBits ties). */
export function onHalfMidpoint(b) {
  const exp = (b >>> 23) & 0xff;
  const e = exp - 112;
  if (exp === 0xff || e >= 31 || e < -10) return false;
  if (e >= 1) return (b & 0x1fff) === 0x1000;
  const shift = 14 - e;
  return ((b & 0x7fffff | 0x800000) & ((1 << shift) - 1)) === 1 << (shift - 1);
}

/** The value of float16 bits h. */
export function halfValue(h) {
  const e = (h >>> 10) & 31;
  const m = h & 1023;
  const v = e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1024 + m) * 2 ** (e - 25);
  return h & 0x8000 ? -v : v;
}

/** One float16 ulp at x: the spacing of float16s in x's binade (2^-24 below 2^-14). */
function ulp16(x) {
  f64[0] = x;
  const e = ((f64Hi[0] >>> 20) & 0x7ff) - 1023; // floor(log2 |x|), exact (x is 0 or normal)
  return 2 ** (Math.max(e, -14) - 10);
}

/** The bits of a float16 result (a Float16Array where the engine has one, else a Uint16Array). */
const bitsOf = (x) => new Uint16Array(x.buffer, x.byteOffset, x.length);

/**
 * Compares A and B over positions 0..n-1 of `rot`'s cache, `CHUNK` positions per task. Returns
 * { differ, midpoints, maxA, maxB, overA, overB, perBucket: { x, mid, a, b } } (errors in float16
 * ulps against the float64 reference).
 */
async function compare(rot, n) {
  const width = rot.rotaryDim;
  const halfWidth = width / 2;
  // the frequency each column stands for: HF's cat(freqs, freqs) ('half') or repeat_interleave ('interleaved')
  const column = Int32Array.from({ length: width }, (_, j) => (rot.layout === 'interleaved' ? j >> 1 : j % halfWidth));
  // 'dynamic' and 'longrope' pick their frequencies from the call's largest position + 1: every
  // chunk below asks for position n - 1 too (an extra last row), so each uses the set of an n-position cache
  const w = rot.scaling === 'dynamic' || rot.scaling === 'longrope' ? rot.inverseFrequenciesFor(n) : rot.inverseFrequencies;
  const s = rot.attentionScaling;
  const per = Math.ceil(n / BUCKETS);
  const buckets = Math.ceil(n / per);
  const out = {
    differ: 0, midpoints: 0, maxA: 0, maxB: 0, overA: 0, overB: 0,
    perBucket: { x: Float64Array.from({ length: buckets }, (_, k) => k * per), mid: new Float64Array(buckets), a: new Float64Array(buckets), b: new Float64Array(buckets) },
  };
  const cosRef = new Float64Array(halfWidth);
  const sinRef = new Float64Array(halfWidth);
  for (let p0 = 0; p0 < n; p0 += CHUNK) {
    const rows = Math.min(CHUNK, n - p0);
    const positions = Int32Array.from({ length: rows + 1 }, (_, r) => (r < rows ? p0 + r : n - 1));
    const A = rot.cosSin(rows + 1, { positions, dtype: 'float16' });
    const F = rot.cosSin(rows + 1, { positions });
    const tables = [
      [bitsOf(A.cos), new Uint32Array(F.cos.buffer, F.cos.byteOffset, F.cos.length), cosRef],
      [bitsOf(A.sin), new Uint32Array(F.sin.buffer, F.sin.byteOffset, F.sin.length), sinRef],
    ];
    for (let r = 0; r < rows; r++) {
      const p = p0 + r;
      // p is an integer below 2^24 and w a float32 (stored as a double): p * w is exact in float64,
      // and V8's Math.cos / Math.sin of it are within about 1e-16 of the exact values, far below
      // float16's half ulp (2.4e-4 near 1; 2^-25 among subnormals)
      for (let k = 0; k < halfWidth; k++) {
        cosRef[k] = s * Math.cos(p * w[k]);
        sinRef[k] = s * Math.sin(p * w[k]);
      }
      const bucket = Math.floor(p / per);
      for (const [a16, f32, ref] of tables) {
        for (let j = 0, i = r * width; j < width; j++, i++) {
          const x = ref[column[j]];
          const ulp = ulp16(x);
          const a = a16[i];
          const b = halfBits(f32[i]);
          const errA = Math.abs(halfValue(a) - x) / ulp;
          const errB = Math.abs(halfValue(b) - x) / ulp;
          if (errA > out.maxA) out.maxA = errA;
          if (errB > out.maxB) out.maxB = errB;
          if (a !== b) out.differ++;
          if (onHalfMidpoint(f32[i])) {
            out.midpoints++;
            out.perBucket.mid[bucket]++;
          }
          if (errA > 0.5) {
            out.overA++;
            out.perBucket.a[bucket]++;
          }
          if (errB > 0.5) {
            out.overB++;
            out.perBucket.b[bucket]++;
          }
        }
      }
    }
    await yieldToBrowser();
  }
  return out;
}

export function setupRotaryHalf(pe) {
  const form = document.getElementById('half-controls');
  const textarea = document.getElementById('scaling-config');
  const errorEl = document.getElementById('half-error');
  const summary = document.getElementById('half-summary');
  const button = form.querySelector('button');
  const chart = new LineChart(document.getElementById('half-chart'), {
    xLabel: 'position',
    yLabel: 'values',
    height: 260,
    points: true,
  });
  let running = false;
  let again = false;

  async function run() {
    if (running) {
      again = true;
      return;
    }
    running = true;
    button.disabled = true;
    summary.dataset.state = 'running';
    summary.textContent = 'Computing…';
    try {
      const n = intValue(form.length, 4096);
      const rot = guarded(errorEl, () => pe.rotary({ config: textarea.value }));
      if (!rot) {
        summary.dataset.state = 'error';
        summary.textContent = '';
        return;
      }
      let r;
      const t0 = performance.now();
      try {
        r = await compare(rot, n);
      } catch (err) {
        errorEl.hidden = false;
        errorEl.textContent = err instanceof Error ? err.message : String(err);
        summary.dataset.state = 'error';
        summary.textContent = '';
        return;
      } finally {
        rot.dispose();
      }
      const ms = performance.now() - t0;
      const total = 2 * n * rot.rotaryDim;
      const per = r.perBucket.x.length > 1 ? r.perBucket.x[1] : 1;
      const value = (u, v) => (v == null ? '–' : String(v));
      chart.set(
        [
          { label: 'float32 exactly on a float16 midpoint', color: palette[9], width: 1, dash: [4, 3], value },
          { label: 'B (float32, then float16): off by more than ½ ulp', color: palette[2], width: 2, value },
          { label: 'A (posenc): off by more than ½ ulp', color: palette[0], width: 2, value },
        ],
        [r.perBucket.x, r.perBucket.mid, r.perBucket.b, r.perBucket.a],
      );
      Object.assign(summary.dataset, {
        state: 'done',
        length: String(n),
        total: String(total),
        differ: String(r.differ),
        midpoints: String(r.midpoints),
        maxA: String(r.maxA),
        maxB: String(r.maxB),
        overA: String(r.overA),
        overB: String(r.overB),
        attentionScaling: String(rot.attentionScaling),
      });
      const scaled = rot.attentionScaling !== 1;
      summary.textContent =
        `Positions 0–${n - 1}, cos and sin, ${total.toLocaleString('en-US')} values: A and B differ at ${r.differ} ` +
        `(the float32 lies exactly on a float16 midpoint at ${r.midpoints}). Largest error against Math.cos / Math.sin ` +
        `of p · w in float64: A ${r.maxA.toFixed(6)} ulp, B ${r.maxB.toFixed(6)} ulp; ${r.overB} values of B and ` +
        `${r.overA} of A are off by more than half an ulp. ` +
        (scaled
          ? `This config scales cos and sin by attentionScaling = ${rot.attentionScaling.toPrecision(6)}: the model's ` +
            'values are float32 products, which posenc rounds to float16 as the model\'s cast does, so A equals B ' +
            '(both measured here against the scaled cos and sin in float64). '
          : '') +
        `${ms.toFixed(0)} ms${per > 1 ? `; the chart counts per ${per} positions` : ''}.`;
    } finally {
      running = false;
      button.disabled = false;
      if (again) {
        again = false;
        run();
      }
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    run();
  });
  // a new preset: computed again; an edited config: on the button
  document.getElementById('scaling-controls').preset.addEventListener('change', () => summary.dataset.state && run());
  textarea.addEventListener('input', () => {
    if (summary.dataset.state !== 'done') return;
    summary.dataset.state = 'stale';
    summary.textContent = `(for the config before your edit: press compute) ${summary.textContent}`;
  });
  nearViewport(document.getElementById('half-panel'), () => run(), 200);
}
