// Section 7: longer than training. Five copy-back models (tests/fixtures/extrapolation, trained by
// train.py on sequences of up to 32 tokens: output the token two back) that differ only in how
// positions enter: the sinusoidal table, rotary (whole head, half of it), ALiBi, nothing. posenc
// runs each in the page on fresh random sequences (mulberry32, seeded) at 1x..16x the training
// length:
//   const model = pe.loadModel(bytes);          // config.position, config.trainMaxLength...
//   model.forward(tokens, { causal: true })     // logits, L x (symbols + 1)
//   model.attention(layer)                      // heads x L x L
// The models are fetched (not bundled into the JS) when the section starts.
import { interpolateBlues } from 'd3-scale-chromatic';
import vaswaniUrl from '../../../tests/fixtures/extrapolation/vaswani.safetensors?url';
import rotaryUrl from '../../../tests/fixtures/extrapolation/rotary.safetensors?url';
import rotaryPartialUrl from '../../../tests/fixtures/extrapolation/rotary-partial.safetensors?url';
import alibiUrl from '../../../tests/fixtures/extrapolation/alibi.safetensors?url';
import noneUrl from '../../../tests/fixtures/extrapolation/none.safetensors?url';
import { LineChart, palette } from '../lib/chart.js';
import { Heatmap } from '../lib/heatmap.js';
import { mulberry32 } from '../lib/random.js';
import { el } from '../lib/util.js';

const MODELS = [
  ['vaswani', vaswaniUrl],
  ['rotary', rotaryUrl],
  ['rotary-partial', rotaryPartialUrl],
  ['alibi', alibiUrl],
  ['none', noneUrl],
];
const LENGTHS = [32, 64, 128, 256, 512];
const TOKENS_PER_LENGTH = 4096; // sequences per length: 4096 / L (128 of 32 ... 8 of 512)

function sequence(next, length, symbols) {
  return Array.from({ length }, () => Math.floor((next() * symbols) / 2 ** 32));
}

/** Predictions (argmax) and copy-back labels of one sequence. */
function predict(model, tokens) {
  const { numClasses, symbols, copyDistance } = model.config;
  const logits = model.forward(tokens, { causal: true });
  const pred = new Int32Array(tokens.length);
  const label = new Int32Array(tokens.length);
  for (let t = 0; t < tokens.length; t++) {
    let best = 0;
    for (let c = 1; c < numClasses; c++) if (logits[t * numClasses + c] > logits[t * numClasses + best]) best = c;
    pred[t] = best;
    label[t] = t < copyDistance ? symbols : tokens[t - copyDistance];
  }
  return { pred, label };
}

function accuracy(model, length, seed) {
  const next = mulberry32(seed + length);
  let right = 0;
  let total = 0;
  const count = Math.max(1, TOKENS_PER_LENGTH / length);
  for (let s = 0; s < count; s++) {
    const { pred, label } = predict(model, sequence(next, length, model.config.symbols));
    for (let t = 0; t < length; t++) right += pred[t] === label[t] ? 1 : 0;
    total += length;
  }
  return right / total;
}

export async function setupExtrapolation(pe) {
  const body = document.getElementById('extrapolation-body');
  const models = [];
  for (const [name, url] of MODELS) {
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    models.push({ name, model: pe.loadModel(bytes) });
  }
  const train = models[0].model.config.trainMaxLength;
  const heads = models[0].model.config.heads;
  const layers = models[0].model.config.numLayers;

  const lengthSelect = el('select', { name: 'length' },
    ...LENGTHS.map((L) => el('option', { value: String(L), text: `${L} (${L / train}x)` })));
  lengthSelect.value = '256';
  const headSelect = el('select', { name: 'head' },
    ...Array.from({ length: heads }, (_, h) => el('option', { value: String(h), text: `head ${h + 1}` })));
  const layerSelect = el('select', { name: 'layer' },
    ...Array.from({ length: layers }, (_, l) => el('option', { value: String(l), text: `layer ${l}` })));
  const seedOut = el('output', { id: 'extrapolation-seed' });
  let seed = 1;
  const newButton = el('button', { type: 'button', id: 'extrapolation-new', text: 'new sequences' });
  const controls = el('form', { class: 'controls', id: 'extrapolation-controls', autocomplete: 'off' },
    el('label', {}, 'length ', lengthSelect), el('label', {}, 'attention ', layerSelect, ' ', headSelect),
    newButton, el('span', {}, ' seed ', seedOut));

  const table = el('table', { class: 'numbers', id: 'extrapolation-table' });
  const strips = el('div', { class: 'extrapolation-strips', id: 'extrapolation-strips' });
  const mapsBox = el('div', { class: 'extrapolation-maps' });
  const maps = models.map(({ name }) => {
    const box = el('div', { class: 'heatmap' });
    const out = el('output', { class: 'readout', id: `extrapolation-${name}-readout` });
    mapsBox.append(el('figure', {}, el('figcaption', { text: name }), box, out));
    return new Heatmap(box, {
      interpolator: interpolateBlues, rowName: 'query', colName: 'key', label: `Attention of ${name}`,
      readout: out, height: 220, format: (v) => v.toFixed(3),
    });
  });
  const chartBox = el('div', { class: 'chart', id: 'extrapolation-chart' });
  body.replaceChildren(controls,
    el('h3', { text: 'Accuracy at the chosen length (fresh sequences)' }), table,
    el('h3', { text: 'One sequence: each cell a position, red where the prediction is wrong' }), strips,
    el('h3', { text: 'Attention, query down, key across: the key to copy is two left of the diagonal' }), mapsBox,
    el('h3', { text: 'Accuracy against length' }), chartBox);
  const chart = new LineChart(chartBox, { xLabel: 'sequence length', yLabel: 'accuracy', yRange: [0, 1], height: 260 });

  function drawLength() {
    const L = Number(lengthSelect.value);
    const layer = Number(layerSelect.value);
    const head = Number(headSelect.value);
    const rows = [el('tr', {}, el('th', { text: 'method' }), el('th', { text: `accuracy at ${L}` }))];
    const one = sequence(mulberry32(seed * 7919 + L), L, models[0].model.config.symbols);
    strips.replaceChildren();
    models.forEach(({ name, model }, i) => {
      const acc = accuracy(model, L, seed);
      rows.push(el('tr', { 'data-method': name }, el('td', { text: name }),
        el('td', { class: 'accuracy', 'data-accuracy': String(acc), text: acc.toFixed(3) })));
      const { pred, label } = predict(model, one);
      const strip = el('div', { class: 'strip', 'data-method': name, title: name });
      let wrong = 0;
      for (let t = 0; t < L; t++) {
        const ok = pred[t] === label[t];
        wrong += ok ? 0 : 1;
        strip.append(el('span', { class: ok ? 'cell ok' : 'cell wrong', title: `position ${t}: ${pred[t]} (label ${label[t]})` }));
      }
      strips.append(el('div', { class: 'strip-row' }, el('span', { class: 'strip-name', text: `${name} (${wrong} wrong)` }), strip));
      const att = model.attention(layer);
      maps[i].setData(att.slice(head * L * L, (head + 1) * L * L), { rows: L, cols: L, min: 0, max: 1 });
    });
    table.replaceChildren(...rows);
  }

  function drawChart() {
    const data = [LENGTHS, ...models.map(({ model }) => LENGTHS.map((L) => accuracy(model, L, seed)))];
    chart.set(models.map(({ name }, i) => ({ label: name, color: palette[i] })), data);
    chartBox.dataset.ready = 'true';
  }

  function redraw() {
    seedOut.textContent = String(seed);
    drawLength();
    drawChart();
  }
  lengthSelect.addEventListener('change', drawLength);
  layerSelect.addEventListener('change', drawLength);
  headSelect.addEventListener('change', drawLength);
  newButton.addEventListener('click', () => {
    seed += 1;
    redraw();
  });
  redraw();
}
