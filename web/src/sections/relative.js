// Section 13: T5's relative position buckets (issue 24). relativeBuckets from posenc/relative gives
// the bucket of every key - query distance of one query row (offset puts the query in the middle),
// drawn against the distance with the exact region, the log region and the last bucket shaded from
// the numbers themselves; relativeBias gathers a synthetic [numBuckets, heads] table into one
// [q, k] bias map per head. No wasm: posenc/relative is plain JavaScript.
import { interpolateRdBu } from 'd3-scale-chromatic';
import { relativeBias, relativeBuckets } from 'posenc/relative';
import { LineChart } from '../lib/chart.js';
import { Heatmap } from '../lib/heatmap.js';
import { onThemeChange, themeColor } from '../lib/theme.js';
import { el, guarded, intValue, perFrame, yieldToBrowser } from '../lib/util.js';

const MAX_MAPS = 16;
const BAND_COLORS = {
  exact: 'rgba(78, 121, 167, 0.16)',
  log: 'rgba(242, 142, 44, 0.18)',
  last: 'rgba(140, 140, 140, 0.24)',
  future: 'rgba(140, 140, 140, 0.10)',
};

/**
 * The synthetic heads of the bias maps: what each head prefers, as a function of the signed distance
 * r = key - query of a bucket (s widens it for heads past the first round, far is maxDistance). A
 * causal model has no buckets for keys after the query: its heads leave out the kinds that need them.
 */
const HEAD_KINDS = [
  { name: 'near', f: (r, s) => 2 * Math.exp(-Math.abs(r) / (2 * s)) - 0.6 },
  { name: 'the tokens before', f: (r, s) => (r < 0 ? 2 * Math.exp((r + 1) / (3 * s)) - 0.4 : -1) },
  { name: 'the tokens after', f: (r, s) => (r > 0 ? 2 * Math.exp(-(r - 1) / (3 * s)) - 0.4 : -1) },
  { name: 'far', f: (r, s, far) => -1 + 2 * Math.min(1, Math.log1p(Math.abs(r)) / Math.log1p(far)) },
  { name: 'itself', f: (r) => (r === 0 ? 1.6 : -0.6) },
  { name: 'far before', f: (r, s, far) => (r < 0 ? -0.6 + 1.8 * Math.min(1, Math.log1p(-r) / Math.log1p(far)) : -1.2) },
  { name: 'far after', f: (r, s, far) => (r > 0 ? -0.6 + 1.8 * Math.min(1, Math.log1p(r) / Math.log1p(far)) : -1.2) },
  { name: 'broad near', f: (r, s) => 1.2 * Math.exp(-Math.abs(r) / (12 * s)) - 0.4 },
];
const CAUSAL_KINDS = HEAD_KINDS.filter((k) => !k.name.includes('after'));

/**
 * A heatmap that paints the keys after the query (column > row) in `--masked`: in a decoder the
 * causal mask removes them; relativeBias itself gives them bucket 0's value, as Hugging Face does.
 */
class CausalHeatmap extends Heatmap {
  causal = false;

  setData(values, shape) {
    super.setData(values, shape);
    if (!this.causal) return;
    const ctx = this.cells.getContext('2d');
    ctx.fillStyle = themeColor('--masked');
    for (let r = 0; r < shape.rows - 1; r++) ctx.fillRect(r + 1, r, shape.cols - r - 1, 1);
    this.redraw();
  }
}

/**
 * What the distances -from..to say about the buckets: for each bucket its nearest and farthest
 * distance in the range, and where the last bucket starts (read off the row, not the formula).
 */
function describeRow(row, from, numBuckets, bidirectional) {
  const ranges = new Map(); // bucket -> { lo, hi } of key - query
  for (let j = 0; j < row.length; j++) {
    const r = j - from;
    const b = row[j];
    const e = ranges.get(b);
    if (!e) ranges.set(b, { lo: r, hi: r });
    else {
      e.lo = Math.min(e.lo, r);
      e.hi = Math.max(e.hi, r);
    }
  }
  const n = bidirectional ? Math.floor(numBuckets / 2) : numBuckets;
  // T5's definition (the row cannot tell it: the first log bucket is also base + maxExact)
  const maxExact = Math.floor(n / 2);
  // distance d >= 0 towards the past (key before the query): r = -d
  const past = (d) => row[from - d];
  let lastStart = null;
  for (let d = 0; d <= from; d++) {
    if (past(d) === n - 1) {
      lastStart = d;
      break;
    }
  }
  return { ranges, n, maxExact, lastStart };
}

/** A distance range as words: "−22 to −16 (7 distances)", "−3 alone", "≤ −91 and beyond". */
function rangeText({ lo, hi }, edgeLo, edgeHi) {
  const f = (v) => String(v).replace('-', '−');
  if (lo === edgeLo && hi === edgeHi) return 'every distance';
  if (lo === edgeLo) return `key − query ≤ ${f(hi)}, and every farther key`;
  if (hi === edgeHi) return hi > 0 ? `key − query ≥ ${f(lo)}, and every farther key` : `key − query ≥ ${f(lo)}`;
  if (lo === hi) return `key − query = ${f(lo)} alone`;
  return `key − query from ${f(lo)} to ${f(hi)} (${hi - lo + 1} distances)`;
}

/**
 * The line chart with shaded regions behind the line: bands of [from, to] in x and labelled
 * dashed lines. LineChart has no band option: the hooks go onto each uPlot instance it builds (set()
 * is also what LineChart calls when it rebuilds for a theme change, so they are never lost).
 */
class BandChart extends LineChart {
  bands = [];
  lines = [];

  set(series, data, rebuild = false) {
    super.set(series, data, rebuild);
    const hooks = this.plot.hooks;
    if (!hooks.drawClear?.includes(this.#drawBands)) {
      (hooks.drawClear ??= []).push(this.#drawBands);
      (hooks.draw ??= []).push(this.#drawLabels);
    }
  }

  #span(u, from, to) {
    const { left, width } = u.bbox;
    const x0 = Math.max(left, Math.min(left + width, u.valToPos(from, 'x', true)));
    const x1 = Math.max(left, Math.min(left + width, u.valToPos(to, 'x', true)));
    return [x0, x1];
  }

  #drawBands = (u) => {
    const { ctx } = u;
    const { top, height } = u.bbox;
    ctx.save();
    for (const b of this.bands) {
      const [x0, x1] = this.#span(u, b.from, b.to);
      if (x1 <= x0) continue;
      ctx.fillStyle = b.color;
      ctx.fillRect(x0, top, x1 - x0, height);
    }
    ctx.restore();
  };

  #drawLabels = (u) => {
    const { ctx } = u;
    const { top, height } = u.bbox;
    const dpr = window.devicePixelRatio || 1;
    ctx.save();
    ctx.font = `${Math.round(11 * dpr)}px system-ui, sans-serif`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const label = (text, x, y) => {
      const w = ctx.measureText(text).width + 6 * dpr;
      ctx.fillStyle = themeColor('--panel');
      ctx.globalAlpha = 0.85;
      ctx.fillRect(x - w / 2, y - 1 * dpr, w, 15 * dpr);
      ctx.globalAlpha = 1;
      ctx.fillStyle = themeColor('--fg');
      ctx.fillText(text, x, y);
    };
    for (const b of this.bands) {
      if (!b.label) continue;
      const [x0, x1] = this.#span(u, b.from, b.to);
      if (x1 - x0 < ctx.measureText(b.label).width + 8 * dpr) continue;
      label(b.label, (x0 + x1) / 2, top + 4 * dpr);
    }
    ctx.strokeStyle = themeColor('--muted');
    ctx.lineWidth = dpr;
    ctx.setLineDash([4 * dpr, 3 * dpr]);
    for (const l of this.lines) {
      if (l.at < u.scales.x.min || l.at > u.scales.x.max) continue;
      const [x] = this.#span(u, l.at, l.at);
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + height);
      ctx.stroke();
      label(l.label, x, top + height - 18 * dpr);
    }
    ctx.restore();
  };
}

/**
 * The synthetic table [numBuckets, heads]: head h's value for bucket b is kinds[h % kinds.length] at the
 * bucket's nearest distance (the smallest |key - query| that falls in it; 0 for a bucket no distance
 * reaches, which no lookup then reads).
 */
function syntheticTable(ranges, numBuckets, heads, maxDistance, kinds) {
  const table = new Float32Array(numBuckets * heads);
  for (let b = 0; b < numBuckets; b++) {
    const e = ranges.get(b);
    if (!e) continue;
    const r = Math.abs(e.lo) < Math.abs(e.hi) ? e.lo : e.hi;
    for (let h = 0; h < heads; h++) {
      const kind = kinds[h % kinds.length];
      const s = 2 ** Math.floor(h / kinds.length);
      table[b * heads + h] = kind.f(r, s, maxDistance);
    }
  }
  return table;
}

export async function setupRelative() {
  const form = document.getElementById('relative-controls');
  const errorEl = document.getElementById('relative-error');
  const readout = document.getElementById('relative-readout');
  const summary = document.getElementById('relative-summary');
  const callEl = document.getElementById('relative-call');
  const box = document.getElementById('relative-heads');
  const biasReadout = document.getElementById('relative-bias-readout');
  const biasCall = document.getElementById('relative-bias-call');
  const rdbu = (t) => interpolateRdBu(1 - t);
  const maps = []; // reused figures: { fig, caption, heatmap }
  let state = null; // { x, row, from, info, bidirectional }

  const chart = new BandChart(document.getElementById('relative-chart'), {
    xLabel: 'key − query',
    yLabel: 'bucket',
    height: 320,
    onCursor: (u) => {
      const idx = u.cursor.idx;
      if (idx == null || !state) return;
      const { x, row, info } = state;
      const r = x[idx];
      const b = row[idx];
      const e = info.ranges.get(b);
      readout.dataset.distance = String(r);
      readout.dataset.bucket = String(b);
      readout.textContent = `key − query = ${String(r).replace('-', '−')}: bucket ${b}, which holds ${rangeText(e, x[0], x[x.length - 1])}`;
    },
  });

  function mapFor(h) {
    if (!maps[h]) {
      const caption = el('figcaption');
      const div = el('div', { class: 'heatmap' });
      const fig = el('figure', { 'data-head': String(h + 1) }, caption, div);
      box.append(fig);
      const heatmap = new CausalHeatmap(div, {
        interpolator: rdbu,
        rowName: `head ${h + 1}: query`,
        colName: 'key',
        label: `Relative position bias of head ${h + 1}, query by key`,
        readout: biasReadout,
        height: 230,
        marginLeft: 44,
        marginBottom: 34,
        format: (v) => v.toFixed(6) + (heatmap.causal && Number(biasReadout.dataset.col) > Number(biasReadout.dataset.row) ? ' (masked in a decoder)' : ''),
      });
      maps[h] = { fig, caption, heatmap };
    }
    return maps[h];
  }

  function options() {
    // numBuckets and maxDistance go to posenc as typed: a bad pair gets the library's message
    const int = (input) => (input.value === '' ? NaN : Math.round(Number(input.value)));
    return {
      numBuckets: int(form.numBuckets),
      maxDistance: int(form.maxDistance),
      bidirectional: form.attention.value === 'bidirectional',
    };
  }

  function drawBuckets(o) {
    // one query row: key - query from -from to +to (offset puts the query at key `from`)
    const from = intValue(form.span, 320);
    const to = o.bidirectional ? from : Math.max(Math.ceil(from / 8), 8);
    const keys = from + to + 1;
    const t0 = performance.now();
    const row = relativeBuckets(1, keys, { ...o, offset: from });
    const ms = performance.now() - t0;
    const x = Float64Array.from({ length: keys }, (_, j) => j - from);
    const info = describeRow(row, from, o.numBuckets, o.bidirectional);
    state = { x, row, from, info, bidirectional: o.bidirectional };
    const { n, maxExact, lastStart } = info;
    const last = lastStart ?? from + 1;
    const bands = [];
    const lines = [];
    if (o.bidirectional) {
      bands.push({ from: -(maxExact - 0.5), to: maxExact - 0.5, color: BAND_COLORS.exact, label: 'exact' });
      for (const sign of [-1, 1]) {
        const a = sign * (maxExact - 0.5);
        const b = sign * (last - 0.5);
        const c = sign * (from + 0.5);
        bands.push({ from: Math.min(a, b), to: Math.max(a, b), color: BAND_COLORS.log, label: 'log' });
        bands.push({ from: Math.min(b, c), to: Math.max(b, c), color: BAND_COLORS.last, label: 'last bucket' });
        lines.push({ at: sign * o.maxDistance, label: `${sign < 0 ? '−' : ''}maxDistance` });
      }
    } else {
      bands.push({ from: -(maxExact - 0.5), to: 0.5, color: BAND_COLORS.exact, label: 'exact' });
      bands.push({ from: -(last - 0.5), to: -(maxExact - 0.5), color: BAND_COLORS.log, label: 'log' });
      bands.push({ from: -(from + 0.5), to: -(last - 0.5), color: BAND_COLORS.last, label: 'last bucket' });
      bands.push({ from: 0.5, to: to + 0.5, color: BAND_COLORS.future, label: 'after' });
      lines.push({ at: -o.maxDistance, label: 'maxDistance' });
    }
    chart.bands = bands;
    chart.lines = lines;
    chart.set([{ label: 'bucket', value: (u, v) => (v == null ? '–' : String(v)) }], [x, Float64Array.from(row)]);

    const q = (v) => String(v).replace('-', '−');
    callEl.textContent =
      `relativeBuckets(1, ${keys}, { numBuckets: ${o.numBuckets}, maxDistance: ${o.maxDistance}, bidirectional: ${o.bidirectional}, offset: ${from} }) ` +
      `in ${ms.toFixed(2)} ms: the query at position ${from}, keys 0 to ${keys - 1}, so key − query runs from ${q(-from)} to ${to}.`;
    const far1 = lastStart !== null && lastStart <= 200 ? 200 : 2 * o.maxDistance;
    const far2 = 10 * far1;
    const layout = o.bidirectional
      ? `bidirectional (an encoder): ${n} buckets per direction, 0–${n - 1} for keys at or before the query and ${n}–${2 * n - 1} for keys after it. `
      : `causal (a decoder): ${n} buckets, all for keys at or before the query; keys after it take bucket 0 like the query itself (the decoder's mask hides them). `;
    const div = o.bidirectional ? 4 : 2;
    const exactRule = o.numBuckets % div === 0 ? `numBuckets / ${div} = ${o.numBuckets} / ${div}` : `⌊numBuckets / ${div}⌋ = ⌊${o.numBuckets} / ${div}⌋`;
    const lastText = lastStart === null
      ? ''
      : `, and from distance ${lastStart} on every key shares the last bucket ${n - 1}${o.bidirectional ? ` (${2 * n - 1} after the query)` : ''}: ` +
        `the log formula's last step is at ${lastStart}, and past maxDistance = ${o.maxDistance} (where it would reach the next bucket) it is capped. ` +
        `T5 cannot tell a key ${far1.toLocaleString('en')} tokens away from one ${far2.toLocaleString('en')} away`;
    summary.textContent =
      `numBuckets ${o.numBuckets}, ${layout}` +
      `Distances below maxExact = ${exactRule} = ${maxExact} have a bucket each; ` +
      `from ${maxExact} the buckets grow logarithmically${lastText}.`;
    Object.assign(summary.dataset, {
      from: String(-from),
      to: String(to),
      maxExact: String(maxExact),
      lastStart: String(lastStart),
      buckets: Array.from(row).join(' '),
    });
  }

  function drawBias(o) {
    const heads = intValue(form.heads, 8);
    const L = intValue(form.length, 48);
    const kinds = o.bidirectional ? HEAD_KINDS : CAUSAL_KINDS;
    // every bucket a key can reach: distances to past maxDistance (the last bucket starts before it)
    const M = Math.max(o.maxDistance, L) + 1;
    const { ranges } = describeRow(relativeBuckets(1, 2 * M + 1, { ...o, offset: M }), M, o.numBuckets, o.bidirectional);
    const table = syntheticTable(ranges, o.numBuckets, heads, o.maxDistance, kinds);
    const t0 = performance.now();
    const bias = relativeBias(table, heads, L, L, o);
    const ms = performance.now() - t0;
    const n = L * L;
    const shown = Math.min(heads, MAX_MAPS);
    // one colour scale for every head, over the cells a model uses (causal: key <= query)
    let top = 1e-6;
    for (let h = 0; h < shown; h++) {
      for (let i = 0; i < L; i++) {
        const end = o.bidirectional ? L : i + 1;
        for (let j = 0; j < end; j++) top = Math.max(top, Math.abs(bias[h * n + i * L + j]));
      }
    }
    for (let h = 0; h < shown; h++) {
      const { fig, caption, heatmap } = mapFor(h);
      fig.hidden = false;
      const kind = kinds[h % kinds.length].name;
      caption.textContent = `head ${h + 1} · prefers ${kind}${h >= kinds.length ? ' (wider)' : ''}`;
      heatmap.causal = !o.bidirectional;
      fig.dataset.table = JSON.stringify(Array.from({ length: o.numBuckets }, (_, b) => table[b * heads + h]));
      heatmap.setData(bias.subarray(h * n, (h + 1) * n), { rows: L, cols: L, min: -top, max: top });
    }
    for (let h = shown; h < maps.length; h++) maps[h].fig.hidden = true;
    box.dataset.shown = String(shown);
    box.dataset.length = String(L);
    document.getElementById('relative-mask-key').hidden = o.bidirectional;
    biasCall.textContent =
      `relativeBias(table, ${heads}, ${L}, ${L}, { numBuckets: ${o.numBuckets}, maxDistance: ${o.maxDistance}, bidirectional: ${o.bidirectional} }) ` +
      `in ${ms.toFixed(2)} ms: [${heads}, ${L}, ${L}], each value a copy of table[bucket(key − query) * ${heads} + head]` +
      (heads > shown ? ` (maps of the first ${shown} heads below)` : '') + '.';
  }

  function update() {
    for (const span of form.querySelectorAll('.val')) span.textContent = ` ${form[span.dataset.for].value}`;
    guarded(errorEl, () => {
      const o = options();
      drawBuckets(o);
      drawBias(o);
    });
  }

  const scheduled = perFrame(update);
  onThemeChange(scheduled); // the mask colour is baked into the cells
  form.addEventListener('input', scheduled);
  form.addEventListener('change', scheduled);
  form.addEventListener('submit', (e) => e.preventDefault());
  // the first draw in two tasks: the buckets, then the bias maps (as update(), which an input
  // meanwhile may have run: the maps read the form again)
  for (const span of form.querySelectorAll('.val')) span.textContent = ` ${form[span.dataset.for].value}`;
  const drawn = guarded(errorEl, () => {
    drawBuckets(options());
    return true;
  });
  if (!drawn) return;
  await yieldToBrowser();
  guarded(errorEl, () => drawBias(options()));
}
