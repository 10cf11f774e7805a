// Section 3: seed 002's scaled-down example, seq_len 20 x d_model 6: the table and one plot per column.
import { interpolateRdBu } from 'd3-scale-chromatic';
import { LineChart, palette } from '../lib/chart.js';
import { el, fillPresets, firstPosition } from '../lib/util.js';

const SEQ_LEN = 20;
const D_MODEL = 6;

export function setupExample(pe) {
  const form = document.getElementById('example-controls');
  const tableEl = document.getElementById('example-table');
  const chartsEl = document.getElementById('example-charts');
  fillPresets(form.preset, pe.presets);

  const charts = [];
  for (let c = 0; c < D_MODEL; c++) {
    const box = el('div', { class: 'mini-chart' });
    chartsEl.append(box);
    charts.push(new LineChart(box, { xLabel: 'pos', yLabel: '', height: 150, legend: true, yRange: [-1.1, 1.1], ySplits: [-1, 0, 1], points: true }));
  }

  function update() {
    const preset = form.preset.value;
    const table = pe.encode(SEQ_LEN, D_MODEL, { preset });
    const first = firstPosition(pe.presets, preset);
    const caption = el('caption', { text: `pe = posenc.encode(${SEQ_LEN}, ${D_MODEL}, { preset: '${preset}' }), shape [${SEQ_LEN}, ${D_MODEL}]` });
    const head = el('tr', {}, el('th', { scope: 'col', text: 'pos' }), ...Array.from({ length: D_MODEL }, (_, c) => el('th', { scope: 'col', text: `dim ${c}` })));
    const rows = [];
    for (let r = 0; r < SEQ_LEN; r++) {
      const cells = [el('th', { scope: 'row', text: String(first + r) })];
      for (let c = 0; c < D_MODEL; c++) {
        const v = table[r * D_MODEL + c];
        const td = el('td', { text: v.toFixed(4) });
        td.style.setProperty('--cell', interpolateRdBu(0.5 - v * 0.35));
        cells.push(td);
      }
      rows.push(el('tr', {}, ...cells));
    }
    tableEl.replaceChildren(caption, el('thead', {}, head), el('tbody', {}, ...rows));
    const x = Float64Array.from({ length: SEQ_LEN }, (_, r) => first + r);
    charts.forEach((chart, c) => {
      const y = Float64Array.from({ length: SEQ_LEN }, (_, r) => table[r * D_MODEL + c]);
      chart.set([{ label: `dim ${c}`, color: palette[c % palette.length], value: (u, v) => (v == null ? '–' : v.toFixed(4)) }], [x, y]);
    });
  }

  form.addEventListener('input', update);
  form.addEventListener('submit', (e) => e.preventDefault());
  update();
}
