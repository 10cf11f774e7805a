// Section 2: the L x D table as a heatmap (diverging RdBu: +1 red, -1 blue), transposable as in
// seed 004's figure. Each control change re-encodes through posenc and redraws once per frame.
import { interpolateRdBu } from 'd3-scale-chromatic';
import { Heatmap } from '../lib/heatmap.js';
import { fillPresets, firstPosition, guarded, intValue, perFrame, yieldToBrowser } from '../lib/util.js';

export async function setupMatrix(pe) {
  const form = document.getElementById('matrix-controls');
  const errorEl = document.getElementById('matrix-error');
  const timing = document.getElementById('matrix-timing');
  fillPresets(form.preset, pe.presets);
  let first = 0;
  let offset = 0;
  let out = new Float32Array(0);

  const heatmap = new Heatmap(document.getElementById('matrix-heatmap'), {
    interpolator: (t) => interpolateRdBu(1 - t),
    rowName: 'position',
    colName: 'dim',
    label: 'Positional encoding matrix heatmap',
    readout: document.getElementById('matrix-readout'),
    height: 340,
    rowValue: (r) => first + offset + r,
    format: (v) => v.toFixed(8),
  });

  const showValues = () => {
    for (const span of form.querySelectorAll('.val')) {
      const input = form[span.dataset.for];
      span.textContent = span.dataset.for === 'logBase' ? ` ${Math.round(10 ** Number(input.value))}` : ` ${input.value}`;
    }
  };

  function update() {
    showValues();
    guarded(errorEl, () => {
      const length = intValue(form.length, 256);
      const dim = intValue(form.dim, 128);
      const preset = form.preset.value;
      const base = 10 ** Number(form.logBase.value);
      offset = intValue(form.offset, 0);
      first = firstPosition(pe.presets, preset);
      if (out.length !== length * dim) out = new Float32Array(length * dim);
      const t0 = performance.now();
      pe.encode(length, dim, { preset, base, offset, out });
      const t1 = performance.now();
      heatmap.setData(out, { rows: length, cols: dim, min: -1, max: 1, transpose: form.transpose.checked });
      const t2 = performance.now();
      timing.dataset.encodeMs = (t1 - t0).toFixed(2);
      timing.dataset.drawMs = (t2 - t1).toFixed(2);
      timing.textContent = `${length} x ${dim} = ${(length * dim).toLocaleString('en')} values · encode ${(t1 - t0).toFixed(1)} ms · draw ${(t2 - t1).toFixed(1)} ms`;
    });
  }

  const scheduled = perFrame(update);
  form.addEventListener('input', scheduled);
  form.addEventListener('submit', (e) => e.preventDefault());
  for (const button of form.querySelectorAll('button[data-size]')) {
    button.addEventListener('click', () => {
      const [l, d] = button.dataset.size.split('x');
      form.length.value = l;
      form.dim.value = d;
      update();
    });
  }
  await yieldToBrowser(); // the heatmap's set-up and its first draw: two tasks
  update();
  return { heatmap };
}
