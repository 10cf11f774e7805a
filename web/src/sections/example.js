// Section 3: seed 002's scaled-down example, seq_len 20 x d_model 6: the table and one plot per column.
import { interpolateRdBu } from 'd3-scale-chromatic';
import { LineChart, palette } from '../lib/chart.js';
import { el, fillPresets, firstPosition, yieldToBrowser } from '../lib/util.js';

const SEQ_LEN = 20;
const D_MODEL = 6;

export async function setupExample(pe) {
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

  let table;
  let first;
  function drawTable() {
    const preset = form.preset.value;
    table = pe.encode(SEQ_LEN, D_MODEL, { preset });
    first = firstPosition(pe.presets, preset);
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
  }

  /** Column c of the current table in its chart. */
  function drawChart(c) {
    const x = Float64Array.from({ length: SEQ_LEN }, (_, r) => first + r);
    const y = Float64Array.from({ length: SEQ_LEN }, (_, r) => table[r * D_MODEL + c]);
    charts[c].set([{ label: `dim ${c}`, color: palette[c % palette.length], value: (u, v) => (v == null ? '–' : v.toFixed(4)) }], [x, y]);
  }

  function update() {
    drawTable();
    for (let c = 0; c < D_MODEL; c++) drawChart(c);
  }

  form.addEventListener('input', update);
  form.addEventListener('submit', (e) => e.preventDefault());
  // the first draw: the table, then one chart per task (six uPlots at once made one long task)
  drawTable();
  for (let c = 0; c < D_MODEL; c++) {
    await yieldToBrowser();
    drawChart(c);
  }
}
