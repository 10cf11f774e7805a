// Plain-JavaScript RoPE for the benchmarks (no Node APIs: bench/rotary.mjs under `npm run bench`
// and the demo page's benchmark worker both import it): the rotate_half loop an app writes with
// precomputed cos/sin tables, the float64 check of a rotated array, and the input they rotate.

/** float64 inverse frequencies base^(-2i/d). */
export function inverseFrequencies(d, base = 10000) {
  const w = new Float64Array(d / 2);
  for (let i = 0; i < d / 2; i++) w[i] = Math.pow(base, (-2 * i) / d);
  return w;
}

/** Float32 cos/sin tables [L, d/2] for positions 0..L-1, float64 angles. */
export function tables(L, d) {
  const w = inverseFrequencies(d);
  const cos = new Float32Array(L * (d / 2));
  const sin = new Float32Array(L * (d / 2));
  for (let p = 0; p < L; p++) {
    for (let i = 0; i < d / 2; i++) {
      cos[p * (d / 2) + i] = Math.cos(p * w[i]);
      sin[p * (d / 2) + i] = Math.sin(p * w[i]);
    }
  }
  return { cos, sin };
}

/** The loop an app writes: rotate_half on [L, H, d] in place with precomputed [L, d/2] tables. */
export function plainApply(x, L, H, d, cos, sin) {
  const half = d / 2;
  for (let p = 0; p < L; p++) {
    const t = p * half;
    for (let h = 0; h < H; h++) {
      const o = (p * H + h) * d;
      for (let i = 0; i < half; i++) {
        const c = cos[t + i];
        const s = sin[t + i];
        const a = x[o + i];
        const b = x[o + i + half];
        x[o + i] = a * c - b * s;
        x[o + i + half] = b * c + a * s;
      }
    }
  }
  return x;
}

/** Max |y - R(p) x| / max(1, |pair|) over sampled rows, in float64 (half layout, offset). */
export function applyError(y, x, L, H, d, offset = 0) {
  const w = inverseFrequencies(d);
  const half = d / 2;
  let worst = 0;
  const rows = new Set([0, L - 1]);
  for (let k = 0; k < 24; k++) rows.add(Math.floor((k * (L - 1)) / 23));
  for (const p of rows) {
    for (let h = 0; h < H; h += Math.max(1, H >> 2)) {
      const o = (p * H + h) * d;
      for (let i = 0; i < half; i++) {
        const a = (offset + p) * w[i];
        const x1 = x[o + i];
        const x2 = x[o + i + half];
        const norm = Math.max(1, Math.hypot(x1, x2));
        const e1 = Math.abs(y[o + i] - (x1 * Math.cos(a) - x2 * Math.sin(a))) / norm;
        const e2 = Math.abs(y[o + i + half] - (x2 * Math.cos(a) + x1 * Math.sin(a))) / norm;
        worst = Math.max(worst, e1, e2);
      }
    }
  }
  return worst;
}

/** The benchmarks' input of n floats: deterministic values in [-2, 2]. */
export function sampleInput(n) {
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = Math.fround(Math.sin(i * 0.7) * 2);
  return x;
}
