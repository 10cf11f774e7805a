// Section 1: value against position for chosen dims (seed 000: L = 100, D = 50, dims 0, 1, 6).
import { LineChart } from '../lib/chart.js';
import { fillPresets, firstPosition, guarded, intValue } from '../lib/util.js';

export function setupWaves(pe) {
  const form = document.getElementById('waves-controls');
  const errorEl = document.getElementById('waves-error');
  const readout = document.getElementById('waves-readout');
  fillPresets(form.preset, pe.presets);
  let state = null;

  const chart = new LineChart(document.getElementById('waves-chart'), {
    xLabel: 'position',
    yLabel: 'PE(position, dim)',
    height: 320,
    onCursor: (u) => {
      const idx = u.cursor.idx;
      if (idx == null || !state) return;
      const parts = state.dims.map((d) => `dim ${d} = ${state.table[idx * state.dim + d].toFixed(8)}`);
      const position = state.x[idx];
      readout.dataset.position = String(position);
      readout.dataset.values = JSON.stringify(Object.fromEntries(state.dims.map((d) => [d, state.table[idx * state.dim + d]])));
      readout.textContent = `position ${position}: ${parts.join(', ')}`;
    },
  });

  function parseDims(text, dim) {
    const dims = [];
    for (const part of text.split(/[\s,;]+/).filter(Boolean)) {
      const d = Number(part);
      if (!Number.isInteger(d) || d < 0) throw new RangeError(`dims shown: "${part}" is not a dim index (0, 1, 2, ...)`);
      if (d >= dim) throw new RangeError(`dims shown: dim ${d} does not exist when D = ${dim} (dims 0 to ${dim - 1})`);
      if (!dims.includes(d)) dims.push(d);
    }
    if (!dims.length) throw new RangeError('dims shown: give at least one dim, e.g. "0, 1, 6"');
    return dims.slice(0, 10);
  }

  function update() {
    guarded(errorEl, () => {
      const length = intValue(form.length, 100);
      const dim = intValue(form.dim, 50);
      const base = Number(form.base.value);
      const preset = form.preset.value;
      const dims = parseDims(form.dims.value, dim);
      const table = pe.encode(length, dim, { preset, base });
      const first = firstPosition(pe.presets, preset);
      const x = Float64Array.from({ length }, (_, r) => first + r);
      const ys = dims.map((d) => Float64Array.from({ length }, (_, r) => table[r * dim + d]));
      state = { table, dim, dims, x };
      chart.set(dims.map((d) => ({ label: `dim ${d}` })), [x, ...ys]);
    });
  }

  form.addEventListener('input', update);
  form.addEventListener('submit', (e) => e.preventDefault());
  update();
  return { chart };
}
