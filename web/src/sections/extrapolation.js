// Section 7: longer than training. Five copy-back models (tests/fixtures/extrapolation, trained by
// train.py on sequences of up to 32 tokens: output the token two back) that differ only in how
// positions enter: the sinusoidal table, rotary (whole head, half of it), ALiBi, nothing. posenc
// runs each in the page on fresh random sequences (mulberry32, seeded) at 1x..16x the training
// length:
//   const model = pe.loadModel(bytes);          // config.position, config.trainMaxLength...
//   model.forward(tokens, { causal: true })     // logits, L x (symbols + 1)
//   model.attention(layer)                      // heads x L x L
// The models are fetched (not bundled into the JS) when the section starts: main.js starts it when
// it comes near the viewport, not with the page. Its accuracies (5 models x 4096 tokens per length)
// are computed in steps between which the browser gets the main thread back (the first draw and
// the chart; a changed control redraws the table at once), and kept per (model, length, seed).
import { interpolateBlues } from 'd3-scale-chromatic';
import vaswaniUrl from '../../../tests/fixtures/extrapolation/vaswani.safetensors?url';
import rotaryUrl from '../../../tests/fixtures/extrapolation/rotary.safetensors?url';
import rotaryPartialUrl from '../../../tests/fixtures/extrapolation/rotary-partial.safetensors?url';
import alibiUrl from '../../../tests/fixtures/extrapolation/alibi.safetensors?url';
import noneUrl from '../../../tests/fixtures/extrapolation/none.safetensors?url';
import { LineChart, palette } from '../lib/chart.js';
import { Heatmap } from '../lib/heatmap.js';
import { mulberry32 } from '../lib/random.js';
import { el, yieldToBrowser } from '../lib/util.js';

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

/**
 * Accuracy of `model` at `length` on fresh sequences of `seed`: a generator that yields after each
 * sequence (a forward pass) and returns the accuracy. `run` drains it at once; `runYielding`
 * hands the main thread back between steps.
 */
function* accuracySteps(model, length, seed) {
  const next = mulberry32(seed + length);
  let right = 0;
  let total = 0;
  const count = Math.max(1, TOKENS_PER_LENGTH / length);
  for (let s = 0; s < count; s++) {
    const { pred, label } = predict(model, sequence(next, length, model.config.symbols));
    for (let t = 0; t < length; t++) right += pred[t] === label[t] ? 1 : 0;
    total += length;
    yield;
  }
  return right / total;
}

/** Runs steps to the end in this task; returns the generator's value. */
function run(steps) {
  for (;;) {
    const { done, value } = steps.next();
    if (done) return value;
  }
}

/** Runs steps, a new task every ~`sliceMs` ms; stops (returns { cancelled: true }) once `live()` is false. */
async function runYielding(steps, live, sliceMs = 40) {
  let start = performance.now();
  for (;;) {
    const { done, value } = steps.next();
    if (done) return { value };
    if (performance.now() - start > sliceMs) {
      await yieldToBrowser();
      if (!live()) return { cancelled: true };
      start = performance.now();
    }
  }
}

export async function setupExtrapolation(pe) {
  const body = document.getElementById('extrapolation-body');
  const files = await Promise.all(MODELS.map(async ([name, url]) => {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`fetching the ${name} model: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }));
  const models = [];
  for (const [i, [name]] of MODELS.entries()) {
    await yieldToBrowser(); // one model read per task
    models.push({ name, model: pe.loadModel(files[i]) });
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

  // accuracy per `${name} ${length} ${seed}`: the chart's values are the table's at each length
  const accuracies = new Map();
  function* cachedAccuracySteps({ name, model }, L, s) {
    const key = `${name} ${L} ${s}`;
    if (!accuracies.has(key)) accuracies.set(key, yield* accuracySteps(model, L, s));
    return accuracies.get(key);
  }

  let lengthDraw = 0; // the latest table draw: an older one still running stops
  /** The table, strips and attention maps at the chosen length: a generator of steps. */
  function* drawLengthSteps() {
    const L = Number(lengthSelect.value);
    const layer = Number(layerSelect.value);
    const head = Number(headSelect.value);
    const s = seed;
    const rows = [el('tr', {}, el('th', { text: 'method' }), el('th', { text: `accuracy at ${L}` }))];
    const one = sequence(mulberry32(s * 7919 + L), L, models[0].model.config.symbols);
    const stripRows = [];
    for (const [i, entry] of models.entries()) {
      const { name, model } = entry;
      const acc = yield* cachedAccuracySteps(entry, L, s);
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
      stripRows.push(el('div', { class: 'strip-row' }, el('span', { class: 'strip-name', text: `${name} (${wrong} wrong)` }), strip));
      const att = model.attention(layer);
      maps[i].setData(att.slice(head * L * L, (head + 1) * L * L), { rows: L, cols: L, min: 0, max: 1 });
      yield;
    }
    strips.replaceChildren(...stripRows);
    table.replaceChildren(...rows);
  }

  /** A changed control: the table at once (its accuracies come from the chart when it has them). */
  function drawLength() {
    lengthDraw += 1;
    run(drawLengthSteps());
  }

  let chartDraw = 0;
  /** Accuracy against length for every model, in steps; false when a newer draw replaced it. */
  async function drawChart() {
    const id = ++chartDraw;
    const s = seed;
    chartBox.dataset.ready = 'false';
    const steps = (function* () {
      const ys = [];
      for (const entry of models) {
        const y = [];
        for (const L of LENGTHS) y.push(yield* cachedAccuracySteps(entry, L, s));
        ys.push(y);
      }
      return ys;
    })();
    const { value: ys, cancelled } = await runYielding(steps, () => id === chartDraw);
    if (cancelled) return false;
    chart.set(models.map(({ name }, i) => ({ label: name, color: palette[i] })), [LENGTHS, ...ys]);
    chartBox.dataset.ready = 'true';
    return true;
  }

  /** The first draw and new sequences: the table, then the chart, each in steps. */
  async function redraw() {
    const s = seed;
    seedOut.textContent = String(s);
    const id = ++lengthDraw;
    chartDraw += 1; // a chart of older sequences stops
    await runYielding(drawLengthSteps(), () => id === lengthDraw); // a changed control redraws it
    if (s === seed) await drawChart(); // else newer sequences draw theirs
  }
  lengthSelect.addEventListener('change', drawLength);
  layerSelect.addEventListener('change', drawLength);
  headSelect.addEventListener('change', drawLength);
  newButton.addEventListener('click', () => {
    seed += 1;
    redraw();
  });
  await redraw();
}
