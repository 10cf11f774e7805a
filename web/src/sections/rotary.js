// Sections 7 and 8: rotary position embedding (issue 13).
//   7  one pair of a query turning with position (rot.apply on copies of q at positions 0..p), and
//      q(m) . k(n) after rotation over all (m, n): constant along diagonals, a function of m - n.
//   8  a model's config.json through pe.rotary({ config }): the wavelength 2 pi / w_i of every pair,
//      scaled against the same config without rope_scaling, and rot.attentionScaling.
// Every rotation and frequency comes from posenc; the page only takes dot products and draws.
import { interpolateRdBu } from 'd3-scale-chromatic';
import { LineChart, palette } from '../lib/chart.js';
import { Heatmap } from '../lib/heatmap.js';
import { mulberry32 } from '../lib/random.js';
import { onThemeChange, themeColor } from '../lib/theme.js';
import { guarded, intValue, perFrame, yieldToBrowser } from '../lib/util.js';
// section 8's presets: the config.json objects of tests/fixtures/rotary/ (Vite keeps only `config`)
import { config as llama31 } from '../../../tests/fixtures/rotary/hf-llama-3.1-8b.json';
import { config as qwen25Yarn } from '../../../tests/fixtures/rotary/hf-qwen2.5-7b-instruct-yarn.json';
import { config as phi3 } from '../../../tests/fixtures/rotary/hf-phi-3-mini-128k-instruct.json';
import { config as gptOss } from '../../../tests/fixtures/rotary/hf-gpt-oss-20b-yarn.json';
import { config as vicuna16k } from '../../../tests/fixtures/rotary/hf-vicuna-7b-v1.5-16k-linear.json';
import { config as llama2Dynamic } from '../../../tests/fixtures/rotary/hf-llama-2-7b-dynamic.json';
import { config as llama2 } from '../../../tests/fixtures/rotary/hf-llama-2-7b.json';
import { config as gptNeox } from '../../../tests/fixtures/rotary/hf-gpt-neox-20b.json';
import { config as gptJ } from '../../../tests/fixtures/rotary/hf-gpt-j-6b.json';

const TAU = 2 * Math.PI;

/** n standard normal numbers from a seed (mulberry32 and Box-Muller): a fixed "random" q or k. */
export function gaussians(n, seed) {
  const next = mulberry32(seed);
  const uniform = () => next() / 4294967296;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(TAU * uniform());
  return out;
}

/** `rows` copies of `v` back to back: the input of rot.apply for positions 0..rows-1. */
function repeatRows(v, rows) {
  const out = new Float32Array(rows * v.length);
  for (let r = 0; r < rows; r++) out.set(v, r * v.length);
  return out;
}

/** Writes each range input's value into the <span class="val" data-for=name> beside it. */
function showValues(form) {
  for (const span of form.querySelectorAll('.val')) span.textContent = ` ${form[span.dataset.for].value}`;
}

/** The two dims that form pair i: (i, i + rotaryDim/2) in the 'half' layout, (2i, 2i + 1) interleaved. */
function pairDims(rot, i) {
  return rot.layout === 'interleaved' ? [2 * i, 2 * i + 1] : [i, i + rot.rotaryDim / 2];
}

const mod = (x, m) => ((x % m) + m) % m;

export async function setupRotary(pe) {
  const form = document.getElementById('rotary-controls');
  const pairForm = document.getElementById('rotary-pair-controls');
  const errorEl = document.getElementById('rotary-error');
  const summary = document.getElementById('rotary-summary');
  const pairReadout = document.getElementById('rotary-pair-readout');
  const canvas = document.getElementById('rotary-pair-canvas');
  let seed = 13;
  let rot = null;
  let rotKey = '';
  let vectors = null; // { q, k }
  let pairState = null; // what the pair canvas draws

  const heatmap = new Heatmap(document.getElementById('rotary-heatmap'), {
    interpolator: (t) => interpolateRdBu(1 - t),
    rowName: 'query position m',
    colName: 'key position n',
    label: 'q rotated to position m dot k rotated to position n, for every m and n',
    readout: document.getElementById('rotary-readout'),
    height: 320,
    marginLeft: 56,
    format: (v) => v.toFixed(5),
  });

  /** The rotary object for the current controls (a new one only when they change). */
  function currentRotary() {
    const headDim = intValue(form.headDim, 64);
    const base = Number(form.base.value);
    const layout = form.layout.value;
    const key = `${headDim}|${base}|${layout}`;
    if (key !== rotKey || !rot) {
      const next = pe.rotary({ headDim, base, layout }); // throws on bad arguments: shown, old one kept
      rot?.dispose();
      rot = next;
      rotKey = key;
      vectors = null;
    }
    if (!vectors) {
      const d = rot.headDim;
      vectors = form.vectors.value === 'ones'
        ? { q: new Float32Array(d).fill(1), k: new Float32Array(d).fill(1) }
        : { q: gaussians(d, seed), k: gaussians(d, seed + 1) };
    }
    return rot;
  }

  function updateScores() {
    const r = currentRotary();
    const d = r.headDim;
    const L = intValue(form.length, 128);
    const t0 = performance.now();
    // q at every position m and k at every position n, each in one call: [L, 1 head, headDim]
    const Q = r.apply(repeatRows(vectors.q, L), { heads: 1 });
    const K = r.apply(repeatRows(vectors.k, L), { heads: 1 });
    const t1 = performance.now();
    const S = new Float32Array(L * L);
    let scale = 0;
    for (let m = 0; m < L; m++) {
      const qm = m * d;
      for (let n = 0; n < L; n++) {
        const kn = n * d;
        let s = 0;
        for (let j = 0; j < d; j++) s += Q[qm + j] * K[kn + j];
        S[m * L + n] = s;
        if (Math.abs(s) > scale) scale = Math.abs(s);
      }
    }
    // how far the map is from a function of m - n: each cell against its diagonal neighbour
    let maxShift = 0;
    for (let m = 0; m + 1 < L; m++) {
      for (let n = 0; n + 1 < L; n++) maxShift = Math.max(maxShift, Math.abs(S[m * L + n] - S[(m + 1) * L + n + 1]));
    }
    heatmap.setData(S, { rows: L, cols: L, min: -scale, max: scale });
    const t2 = performance.now();
    summary.dataset.maxShift = String(maxShift);
    summary.dataset.scale = String(scale);
    summary.dataset.length = String(L);
    summary.textContent =
      `q · k after rot.apply at ${L} positions: max |S(m, n) − S(m + 1, n + 1)| = ${maxShift.toExponential(2)} ` +
      `against scores up to ${scale.toFixed(3)}, so every diagonal is constant and the score depends on m − n only ` +
      `(float32 rounding aside). rot.apply ${(t1 - t0).toFixed(1)} ms for both, dot products and draw ${(t2 - t1).toFixed(1)} ms.`;
  }

  function updatePair() {
    const r = currentRotary();
    const half = r.rotaryDim / 2;
    if (Number(pairForm.pair.max) !== half - 1) {
      pairForm.pair.max = String(half - 1);
      if (Number(pairForm.pair.value) > half - 1) pairForm.pair.value = String(half - 1);
    }
    showValues(pairForm);
    const i = intValue(pairForm.pair, 2);
    const p = intValue(pairForm.position, 10);
    const [a, b] = pairDims(r, i);
    const d = r.headDim;
    // q at positions 0..p: the path of the pair's tip, and where it is at p
    const X = r.apply(repeatRows(vectors.q, p + 1), { heads: 1 });
    const xs = new Float64Array(p + 1);
    const ys = new Float64Array(p + 1);
    for (let t = 0; t <= p; t++) {
      xs[t] = X[t * d + a];
      ys[t] = X[t * d + b];
    }
    const w = r.inverseFrequencies[i];
    const angle = p * w;
    // the same angle as the tables a model caches: rot.cosSin in Hugging Face's layout, where both
    // dims of the pair hold cos(p w_i) (times attentionScaling)
    const table = r.cosSin(1, { positions: [p] });
    const cosP = table.cos[a];
    const sinP = table.sin[a];
    const measured = mod(Math.atan2(xs[0] * ys[p] - ys[0] * xs[p], xs[0] * xs[p] + ys[0] * ys[p]), TAU);
    pairState = { xs, ys, p, a, b, angle };
    drawPair();
    const deg = (v) => `${((v * 180) / Math.PI).toFixed(2)}°`;
    pairReadout.dataset.pair = String(i);
    pairReadout.dataset.dims = `${a},${b}`;
    pairReadout.dataset.frequency = String(w);
    pairReadout.dataset.angle = String(mod(angle, TAU));
    pairReadout.dataset.measured = String(measured);
    pairReadout.dataset.cos = String(cosP);
    pairReadout.dataset.sin = String(sinP);
    pairReadout.dataset.cosB = String(table.cos[b]);
    pairReadout.textContent =
      `pair ${i} = dims (${a}, ${b}): w${sub(i)} = ${w.toPrecision(7)} rad per position (wavelength ${(TAU / w).toPrecision(6)}). ` +
      `At p = ${p}: p · w${sub(i)} = ${angle.toFixed(4)} rad = ${(angle / TAU).toFixed(3)} turns → ${deg(mod(angle, TAU))}; ` +
      `the pair rotated by rot.apply has turned ${deg(measured)}; rot.cosSin gives cos ${cosP.toFixed(6)}, sin ${sinP.toFixed(6)} ` +
      `at dims ${a} and ${b}.`;
  }

  function drawPair() {
    if (!pairState) return;
    const { xs, ys, p, a, b } = pairState;
    const dpr = window.devicePixelRatio || 1;
    const cssW = Math.max(canvas.parentElement.clientWidth, 160);
    const cssH = 320;
    canvas.width = Math.round(cssW * dpr);
    canvas.height = Math.round(cssH * dpr);
    canvas.style.width = `${cssW}px`;
    canvas.style.height = `${cssH}px`;
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, cssH);
    const cx = cssW / 2;
    const cy = cssH / 2;
    const norm = Math.hypot(xs[0], ys[0]) || 1;
    const R = Math.min(cssW, cssH) / 2 - 30;
    const X = (v) => cx + (v / norm) * R;
    const Y = (v) => cy - (v / norm) * R;
    const fg = themeColor('--fg');
    const muted = themeColor('--muted');
    const grid = themeColor('--grid');
    ctx.font = '12px system-ui, sans-serif';
    // axes and the circle of the pair's length (a rotation keeps it)
    ctx.strokeStyle = grid;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(cx - R - 16, cy);
    ctx.lineTo(cx + R + 16, cy);
    ctx.moveTo(cx, cy - R - 16);
    ctx.lineTo(cx, cy + R + 16);
    ctx.stroke();
    ctx.strokeStyle = muted;
    ctx.setLineDash([3, 4]);
    ctx.beginPath();
    ctx.arc(cx, cy, R, 0, TAU);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = muted;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'top';
    ctx.fillText(`dim ${a} →`, cx + R + 16, cy + 4);
    ctx.textAlign = 'right';
    ctx.textBaseline = 'top';
    ctx.fillText(`dim ${b} ↑`, cx - 6, cy - R - 16);
    // the tip at every position 0..p, older ones fainter
    ctx.fillStyle = palette[0];
    for (let t = 0; t <= p; t++) {
      ctx.globalAlpha = 0.3 + 0.7 * (p ? t / p : 1);
      ctx.beginPath();
      ctx.arc(X(xs[t]), Y(ys[t]), 3, 0, TAU);
      ctx.fill();
    }
    ctx.globalAlpha = 1;
    // the angle p * w_i from the position-0 direction (mod one turn)
    const start = Math.atan2(ys[0], xs[0]);
    const turn = mod(pairState.angle, TAU);
    ctx.strokeStyle = palette[2];
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(cx, cy, 26, -start, -start - turn, true);
    ctx.stroke();
    ctx.fillStyle = palette[2];
    const mid = start + turn / 2;
    ctx.textAlign = Math.cos(mid) >= 0 ? 'left' : 'right';
    ctx.textBaseline = 'middle';
    ctx.fillText(`${((turn * 180) / Math.PI).toFixed(1)}°`, cx + 32 * Math.cos(mid), cy - 32 * Math.sin(mid));
    arrow(ctx, cx, cy, X(xs[0]), Y(ys[0]), muted, 1.5, [5, 4]);
    arrow(ctx, cx, cy, X(xs[p]), Y(ys[p]), fg, 2.5);
    ctx.fillStyle = muted;
    label(ctx, 'p = 0', X(xs[0]), Y(ys[0]), cx, cy);
    ctx.fillStyle = fg;
    label(ctx, `p = ${p}`, X(xs[p]), Y(ys[p]), cx, cy);
  }

  form.addEventListener('input', (e) => {
    showValues(form);
    if (e.target === form.vectors) vectors = null;
    scheduled();
  });
  pairForm.addEventListener('input', perFrame(() => guarded(errorEl, updatePair)));
  document.getElementById('rotary-reseed').addEventListener('click', () => {
    seed += 2;
    form.vectors.value = 'random';
    vectors = null;
    update();
  });
  for (const f of [form, pairForm]) f.addEventListener('submit', (e) => e.preventDefault());
  new ResizeObserver(() => drawPair()).observe(canvas.parentElement);
  onThemeChange(drawPair);

  function update() {
    guarded(errorEl, () => {
      updateScores();
      updatePair();
    });
  }
  const scheduled = perFrame(update);
  showValues(form);
  // the first draw in two tasks (as update()): the scores map, then the pair
  const drawn = guarded(errorEl, () => {
    updateScores();
    return true;
  });
  if (!drawn) return;
  await yieldToBrowser();
  guarded(errorEl, updatePair);
}

function sub(i) {
  return String(i).replace(/\d/g, (c) => '₀₁₂₃₄₅₆₇₈₉'[c]);
}

function arrow(ctx, x0, y0, x1, y1, color, width, dash = []) {
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  ctx.lineWidth = width;
  ctx.setLineDash(dash);
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.lineTo(x1, y1);
  ctx.stroke();
  ctx.setLineDash([]);
  const t = Math.atan2(y1 - y0, x1 - x0);
  ctx.beginPath();
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - 10 * Math.cos(t - 0.4), y1 - 10 * Math.sin(t - 0.4));
  ctx.lineTo(x1 - 10 * Math.cos(t + 0.4), y1 - 10 * Math.sin(t + 0.4));
  ctx.closePath();
  ctx.fill();
}

/** Text just outside a vector's tip, on the far side from the centre. */
function label(ctx, text, x, y, cx, cy) {
  const t = Math.atan2(y - cy, x - cx);
  ctx.textAlign = Math.cos(t) >= 0 ? 'left' : 'right';
  ctx.textBaseline = Math.sin(t) >= 0 ? 'top' : 'bottom';
  ctx.fillText(text, x + 8 * Math.cos(t), y + 8 * Math.sin(t));
}

// ---------------------------------------------------------------------------------------------
// Section 8: scaling configs. The presets are the config.json objects of tests/fixtures/rotary/
// (Hub files or the models' documented values: see that folder's README for each one's source).
export const SCALING_PRESETS = [
  { name: 'Llama-3.1-8B (llama3, factor 8)', fixture: 'hf-llama-3.1-8b', config: llama31 },
  { name: 'Qwen2.5-7B-Instruct + YaRN (factor 4)', fixture: 'hf-qwen2.5-7b-instruct-yarn', config: qwen25Yarn },
  { name: 'Phi-3-mini-128k-instruct (longrope)', fixture: 'hf-phi-3-mini-128k-instruct', config: phi3 },
  { name: 'gpt-oss-20b (YaRN, factor 32)', fixture: 'hf-gpt-oss-20b-yarn', config: gptOss },
  { name: 'vicuna-7b-v1.5-16k (linear, factor 4)', fixture: 'hf-vicuna-7b-v1.5-16k-linear', config: vicuna16k },
  { name: 'Llama-2-7B + dynamic NTK (factor 2)', fixture: 'hf-llama-2-7b-dynamic', config: llama2Dynamic },
  { name: 'Llama-2-7B (no scaling)', fixture: 'hf-llama-2-7b', config: llama2 },
  { name: 'GPT-NeoX-20B (rotary on 1/4 of each head)', fixture: 'hf-gpt-neox-20b', config: gptNeox },
  { name: 'GPT-J-6B (interleaved, rotary_dim 64)', fixture: 'hf-gpt-j-6b', config: gptJ },
];

/** The config without its context extension: no rope_scaling (transformers 5's rope_parameters keep their rope_theta). */
function withoutScaling(config) {
  const out = { ...config };
  delete out.rope_scaling;
  const params = config.rope_parameters;
  if (params && typeof params === 'object' && !Array.isArray(params)) {
    out.rope_parameters = { rope_type: 'default', ...(params.rope_theta !== undefined && { rope_theta: params.rope_theta }) };
  }
  return out;
}

/** JSON with two-space indents and each array of numbers on one line (the textarea scrolls sideways). */
export function formatConfig(config) {
  return JSON.stringify(config, null, 2).replace(/\[\s*(-?[\d.eE+-]+(?:,\s*-?[\d.eE+-]+)*)\s*\]/g, (_, nums) => `[${nums.split(/,\s*/).join(', ')}]`);
}

export function setupRopeScaling(pe) {
  const form = document.getElementById('scaling-controls');
  const textarea = document.getElementById('scaling-config');
  const errorEl = document.getElementById('scaling-error');
  const summary = document.getElementById('scaling-summary');
  const readout = document.getElementById('scaling-readout');
  form.dataset.fixtures = JSON.stringify(SCALING_PRESETS.map((p) => p.fixture));
  form.preset.replaceChildren(
    ...SCALING_PRESETS.map((p, i) => Object.assign(document.createElement('option'), { value: String(i), textContent: p.name })),
  );
  let state = null;
  const chart = new LineChart(document.getElementById('scaling-chart'), {
    xLabel: 'pair i',
    yLabel: 'wavelength 2π / wᵢ (positions)',
    height: 340,
    yLog: true,
    onCursor: (u) => {
      const i = u.cursor.idx;
      if (i == null || !state) return;
      const ratio = state.scaled[i] / state.plain[i];
      readout.dataset.pair = String(i);
      readout.textContent =
        `pair ${i}: wavelength ${state.plain[i].toPrecision(6)} unscaled, ${state.scaled[i].toPrecision(6)} scaled ` +
        `(× ${ratio.toPrecision(4)}); w = ${state.rot.inverseFrequencies[i].toExponential(5)} rad per position`;
    },
  });

  function update() {
    readout.textContent = 'Point at the plot to read the wavelengths of a pair.';
    delete readout.dataset.pair;
    guarded(errorEl, () => {
      // the library reads the text (and names what is wrong with it); the page parses it again
      // only to drop the scaling for the unscaled curve
      const rot = pe.rotary({ config: textarea.value });
      let plainRot;
      try {
        const config = JSON.parse(textarea.value);
        plainRot = pe.rotary({ config: withoutScaling(config) });
        const half = rot.inverseFrequencies.length;
        const x = Float64Array.from({ length: half }, (_, i) => i);
        const scaled = Float64Array.from(rot.inverseFrequencies, (w) => TAU / w);
        const plain = Float64Array.from(plainRot.inverseFrequencies, (w) => TAU / w);
        state?.rot.dispose();
        state = { rot, scaled, plain };
        const series = [
          { label: 'without rope_scaling', color: palette[0], width: 2, value: (u, v) => (v == null ? '–' : v.toPrecision(6)) },
          { label: 'with rope_scaling', color: palette[1], width: 2.5, value: (u, v) => (v == null ? '–' : v.toPrecision(6)) },
        ];
        const data = [x, plain, scaled];
        // dynamic NTK and longrope change their frequencies past the original context (per call, as
        // HF does): the set a sequence of the full context length uses
        const rules = config.rope_scaling ?? config.rope_parameters;
        const original = config.original_max_position_embeddings ?? rules?.original_max_position_embeddings;
        let longLength = 0;
        if (rot.scaling === 'dynamic' || rot.scaling === 'longrope') {
          const mpe = config.max_position_embeddings ?? 0;
          longLength = Math.max(mpe, (original ?? mpe) * (typeof rules?.factor === 'number' ? rules.factor : 1));
        }
        if (longLength > 1) {
          const shortUpTo = original ?? config.max_position_embeddings;
          if (shortUpTo) series[1].label = `with rope_scaling, up to ${shortUpTo} tokens`;
          const longSet = rot.inverseFrequenciesFor(longLength);
          series.push({
            label: `with rope_scaling, a ${longLength}-token sequence`,
            color: palette[2],
            width: 2,
            dash: [3, 3],
            value: (u, v) => (v == null ? '–' : v.toPrecision(6)),
          });
          data.push(Float64Array.from(longSet, (w) => TAU / w));
          summary.dataset.longLength = String(longLength);
          summary.dataset.longInverseFrequencies = JSON.stringify(Array.from(longSet));
        } else {
          delete summary.dataset.longLength;
          delete summary.dataset.longInverseFrequencies;
        }
        // the context lengths the config names, as flat lines to compare wavelengths with
        for (const [name, v, color] of [
          ['original context', original, palette[3]],
          ['max_position_embeddings', config.max_position_embeddings, palette[4]],
        ]) {
          if (typeof v === 'number' && v > 0) {
            series.push({ label: `${name} ${v}`, color, width: 1, dash: [6, 4], value: () => String(v) });
            data.push(new Float64Array(half).fill(v));
          }
        }
        chart.set(series, data);
        let changed = 0;
        let lo = Infinity;
        let hi = 0;
        for (let i = 0; i < half; i++) {
          const ratio = scaled[i] / plain[i];
          if (Math.abs(ratio - 1) > 1e-9) changed++;
          lo = Math.min(lo, ratio);
          hi = Math.max(hi, ratio);
        }
        summary.dataset.attentionScaling = String(rot.attentionScaling);
        summary.dataset.headDim = String(rot.headDim);
        summary.dataset.rotaryDim = String(rot.rotaryDim);
        summary.dataset.changed = String(changed);
        summary.dataset.inverseFrequencies = JSON.stringify(Array.from(rot.inverseFrequencies));
        summary.textContent =
          `pe.rotary({ config }): headDim ${rot.headDim}, rotaryDim ${rot.rotaryDim}, layout ${rot.layout}; ` +
          `rot.attentionScaling = ${rot.attentionScaling.toPrecision(6)}. ${changed} of ${half} pairs have a new ` +
          `wavelength, × ${lo.toPrecision(4)} to × ${hi.toPrecision(4)}; the longest is ` +
          `${scaled[half - 1].toPrecision(6)} positions (unscaled ${plain[half - 1].toPrecision(6)}).` +
          (longLength > 1 ? ` A ${longLength}-token sequence uses rot.inverseFrequenciesFor(${longLength}) (dashed).` : '');
      } catch (err) {
        rot.dispose();
        throw err;
      } finally {
        plainRot?.dispose();
      }
    });
    // a bad config leaves the last good plot on screen, faded, under the message
    document.getElementById('scaling-chart').classList.toggle('stale', !errorEl.hidden);
    if (!errorEl.hidden) summary.textContent = '';
  }

  function loadPreset() {
    textarea.value = formatConfig(SCALING_PRESETS[Number(form.preset.value)].config);
    update();
    summary.dataset.preset = form.preset.value;
  }

  form.preset.addEventListener('change', loadPreset);
  textarea.addEventListener('input', perFrame(() => {
    summary.dataset.preset = 'edited';
    update();
  }));
  form.addEventListener('submit', (e) => e.preventDefault());
  loadPreset();
}
