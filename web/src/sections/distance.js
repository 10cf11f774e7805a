// Section 4: what the encoding says about distance. PE(p) . PE(q) depends on p - q only; and
// PE(p + k) = R_k PE(p), the rotation pe.shift(k) returns, shown with numbers and the residual.
import { interpolateRdBu } from 'd3-scale-chromatic';
import { LineChart } from '../lib/chart.js';
import { Heatmap } from '../lib/heatmap.js';
import { el, fillPresets, guarded, intValue, yieldToBrowser } from '../lib/util.js';

function dot(a, ai, b, bi, n) {
  let s = 0;
  for (let j = 0; j < n; j++) s += a[ai + j] * b[bi + j];
  return s;
}

export async function setupDistance(pe) {
  const form = document.getElementById('distance-controls');
  const kForm = document.getElementById('distance-k-controls');
  const shiftForm = document.getElementById('shift-controls');
  const errorEl = document.getElementById('distance-error');
  const shiftError = document.getElementById('shift-error');
  fillPresets(form.preset, pe.presets);

  const heatmap = new Heatmap(document.getElementById('distance-heatmap'), {
    interpolator: (t) => interpolateRdBu(1 - t),
    rowName: 'p',
    colName: 'q',
    label: 'Similarity matrix PE(p) dot PE(q)',
    readout: document.getElementById('distance-readout'),
    height: 300,
    format: (v) => v.toFixed(4),
  });
  const chart = new LineChart(document.getElementById('distance-chart'), {
    xLabel: 'k',
    yLabel: 'PE(p) · PE(p + k)',
    height: 300,
  });

  function updateSimilarity() {
    guarded(errorEl, () => {
      const length = intValue(form.length, 100);
      const dim = intValue(form.dim, 64);
      const preset = form.preset.value;
      const table = pe.encode(length, dim, { preset, positions: Array.from({ length }, (_, i) => i) });
      const sim = new Float32Array(length * length);
      let max = 0;
      for (let p = 0; p < length; p++) {
        for (let q = p; q < length; q++) {
          const s = dot(table, p * dim, table, q * dim, dim);
          sim[p * length + q] = s;
          sim[q * length + p] = s;
          if (Math.abs(s) > max) max = Math.abs(s);
        }
      }
      heatmap.setData(sim, { rows: length, cols: length, min: -max, max });
      updateK();
    });
  }

  function updateK() {
    guarded(errorEl, () => {
      const length = intValue(form.length, 100);
      const dim = intValue(form.dim, 64);
      const preset = form.preset.value;
      const p = intValue(kForm.p, 50);
      const ps = [p, p + 1000];
      const K = length - 1;
      const ks = Float64Array.from({ length: 2 * K + 1 }, (_, i) => i - K);
      const ys = ps.map((pp) => {
        const positions = Array.from(ks, (k) => Math.max(pp + k, 0));
        const rows = pe.encode(positions.length, dim, { preset, positions });
        const here = pe.encode(1, dim, { preset, positions: [pp] });
        // plain Array: a typed array would turn the missing (negative position) points into zeros
        return Array.from(ks, (k, i) => (pp + k < 0 ? null : dot(here, 0, rows, i * dim, dim)));
      });
      chart.set(
        ps.map((pp, i) => ({
          label: `p = ${pp}`,
          width: i === 0 ? 4 : 1.5,
          dash: i === 0 ? undefined : [6, 4],
          value: (u, v) => (v == null ? '–' : v.toFixed(4)),
        })),
        [ks, ...ys],
      );
    });
  }

  function updateShift() {
    const table = document.getElementById('shift-table');
    const summary = document.getElementById('shift-summary');
    guarded(shiftError, () => {
      const p = intValue(shiftForm.p, 10);
      const k = intValue(shiftForm.k, 5);
      const dim = intValue(shiftForm.dim, 8);
      const preset = form.preset.value;
      if (p + k < 0) throw new RangeError(`p + k = ${p + k} is negative: choose k >= ${-p}`);
      const R = pe.shift(k, dim, { preset });
      const at = pe.encode(1, dim, { preset, positions: [p] });
      const target = pe.encode(1, dim, { preset, positions: [p + k] });
      const rotated = new Float64Array(dim);
      for (let r = 0; r < dim; r++) rotated[r] = dot(R, r * dim, at, 0, dim);
      let maxResidual = 0;
      const rows = [];
      for (let r = 0; r < dim; r++) {
        const res = rotated[r] - target[r];
        maxResidual = Math.max(maxResidual, Math.abs(res));
        rows.push(
          el('tr', {},
            el('th', { scope: 'row', text: String(r) }),
            el('td', { text: at[r].toFixed(7) }),
            el('td', { text: rotated[r].toFixed(7) }),
            el('td', { text: target[r].toFixed(7) }),
            el('td', { text: res.toExponential(2) }),
          ),
        );
      }
      // the first frequency's sine and cosine columns: (0, 1) interleaved, (0, ceil(D/2)) split
      const layout = pe.presets.find((x) => x.name === preset)?.layout ?? 'interleaved';
      const s = 0;
      const c = layout === 'interleaved' ? 1 : Math.ceil(dim / 2);
      const f = (v) => v.toFixed(5);
      table.replaceChildren(
        el('caption', { text: `R = pe.shift(${k}, ${dim}, { preset: '${preset}' }) applied to PE(${p})` }),
        el('thead', {}, el('tr', {},
          el('th', { scope: 'col', text: 'dim' }),
          el('th', { scope: 'col', text: `PE(${p})` }),
          el('th', { scope: 'col', text: `R_${k} PE(${p})` }),
          el('th', { scope: 'col', text: `PE(${p + k})` }),
          el('th', { scope: 'col', text: 'residual' }),
        )),
        el('tbody', {}, ...rows),
      );
      summary.dataset.maxResidual = String(maxResidual);
      summary.textContent =
        `max |R_${k} PE(${p}) - PE(${p + k})| = ${maxResidual.toExponential(2)} (float32 rounding). ` +
        `R on (dim ${s}, dim ${c}), the first frequency's sine and cosine: ` +
        `[[${f(R[s * dim + s])}, ${f(R[s * dim + c])}], [${f(R[c * dim + s])}, ${f(R[c * dim + c])}]] ` +
        `= [[cos ${k}w₀, sin ${k}w₀], [−sin ${k}w₀, cos ${k}w₀]]; the same 2 x 2 rotation for every p.`;
    });
  }

  form.addEventListener('input', () => {
    updateSimilarity();
    updateShift();
  });
  kForm.addEventListener('input', updateK);
  shiftForm.addEventListener('input', updateShift);
  for (const f of [form, kForm, shiftForm]) f.addEventListener('submit', (e) => e.preventDefault());
  // the first draw in two tasks
  updateSimilarity();
  await yieldToBrowser();
  updateShift();
}
