// Section 5: the tiny trained transformer (tests/fixtures/model/tagger.safetensors, trained by
// tests/fixtures/model/train_tagger.py) tagging who acts / who is acted upon, run by posenc in the
// page with the positional encoding on or off:
//   const model = pe.loadModel(bytes);               // config, vocab and labels from the file
//   model.forward(ids, { pe: true | false })         // logits, L x labels
//   model.attention()                                // every layer's heads x L x L
//   model.dispose()
// Another .safetensors model of the same form (README, "A model from a file") can be loaded with
// the file picker.
import { interpolateBlues, interpolateRdBu } from 'd3-scale-chromatic';
import taggerUrl from '../../../tests/fixtures/model/tagger.safetensors?url';
import { Heatmap } from '../lib/heatmap.js';
import { el, yieldToBrowser } from '../lib/util.js';

const SPECIAL = /^(<.*>|\[.*\])$/; // <pad>...: not words to type
const PAIR = ['the dog bit the man', 'the man bit the dog'];

/**
 * The token embedding table (the file's embedding.weight, vocab x d) as float32: the section
 * shows the first layer's input, embedding x scale + PE, which the model does not hand out.
 */
function readEmbedding(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  const t = header['embedding.weight'];
  const [rows, cols] = t.shape;
  const data = new DataView(bytes.buffer, bytes.byteOffset + 8 + headerLength + t.data_offsets[0]);
  const out = new Float32Array(rows * cols);
  const f32 = new DataView(new ArrayBuffer(4));
  for (let i = 0; i < out.length; i++) {
    if (t.dtype === 'F32') {
      out[i] = data.getFloat32(i * 4, true);
    } else if (t.dtype === 'BF16') {
      f32.setUint32(0, data.getUint16(i * 2, true) << 16);
      out[i] = f32.getFloat32(0);
    } else {
      const h = data.getUint16(i * 2, true); // F16
      const e = (h >> 10) & 31;
      const m = h & 1023;
      const s = h & 32768 ? -1 : 1;
      out[i] = s * (e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1 + m / 1024) * 2 ** (e - 15));
    }
  }
  return { rows, cols, values: out };
}

/** Tag colour class by the tagger's labels: acts (0), acted-upon (1), neither (2). */
function tagClass(name) {
  return name === 'acts' ? 'tag-0' : name === 'acted-upon' ? 'tag-1' : 'tag-2';
}

/** Lowercased words with their ids; words not in the vocabulary get id -1 (left out). */
export function tokenize(text, vocab) {
  const index = new Map(vocab.map((w, i) => [w, i]));
  const words = text.toLowerCase().match(/[a-z0-9'-]+/g) ?? [];
  return words.map((word) => ({ word, id: index.get(word) ?? -1, unknown: !index.has(word) }));
}

function argmaxRows(logits, rows) {
  const k = logits.length / rows;
  return Array.from({ length: rows }, (_, r) => {
    let best = 0;
    for (let j = 1; j < k; j++) if (logits[r * k + j] > logits[r * k + best]) best = j;
    return best;
  });
}

function tokenChips(tokens, tagIds, tags) {
  return el(
    'div',
    { class: 'tokens', role: 'list' },
    ...tokens.map((t, i) => {
      const tagged = tagIds && tagIds[i] >= 0;
      const tag = tagged ? (tags[tagIds[i]] ?? `tag ${tagIds[i]}`) : '';
      const chip = el('span', { role: 'listitem', class: `token ${t.unknown ? 'unknown' : ''} ${tagged ? tagClass(tag) : ''}` });
      chip.append(t.id < 0 ? el('s', { text: t.word }) : t.word);
      if (t.unknown) chip.append(el('small', { text: 'unknown word, left out' }));
      if (tagged) {
        chip.dataset.tag = tag;
        chip.append(el('small', { text: tag }));
      }
      return chip;
    }),
  );
}

/** A file input to load another .safetensors model (one of your own, trained with the repo's script). */
function modelPicker(pe, body) {
  const input = el('input', { type: 'file', accept: '.safetensors', id: 'transformer-file' });
  input.addEventListener('change', async () => {
    const file = input.files?.[0];
    if (file) await loadAndShow(pe, body, new Uint8Array(await file.arrayBuffer()), file.name);
  });
  return el('p', { class: 'controls' }, el('label', {}, 'load a model (.safetensors) ', input));
}

export async function setupTransformer(pe) {
  const body = document.getElementById('transformer-body');
  let bytes;
  try {
    const response = await fetch(taggerUrl);
    if (!response.ok) throw new Error(`fetching the model: HTTP ${response.status}`);
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (err) {
    failed(body, err);
    body.append(modelPicker(pe, body));
    return;
  }
  await loadAndShow(pe, body, bytes, 'tagger.safetensors');
}

function failed(body, err) {
  document.getElementById('transformer').dataset.model = 'error';
  body.replaceChildren(el('p', { class: 'error', role: 'alert', text: `The transformer model failed to load: ${err.message}` }));
}

let current = null; // the loaded model, disposed when another one replaces it

async function loadAndShow(pe, body, bytes, name) {
  const section = document.getElementById('transformer');
  let model;
  let embedding;
  try {
    model = pe.loadModel(bytes); // checks the file: its errors name the tensor or metadata key
    if (!model.vocab.length) throw new Error('the model file has no vocabulary in its metadata');
    embedding = readEmbedding(bytes);
    section.dataset.modelBytes = String(bytes.length);
  } catch (err) {
    model?.dispose();
    failed(body, err);
    body.append(modelPicker(pe, body));
    return;
  }
  await yieldToBrowser(); // reading the model and drawing it: two tasks
  current?.dispose();
  current = model;
  section.dataset.model = 'ready';
  await buildUi(pe, body, model, embedding);
  const { dModel, heads, numLayers } = model.config;
  body.prepend(
    el('p', { class: 'help', id: 'transformer-model-name', text: `Model: ${name} (${(bytes.length / 1024).toFixed(1)} KB), d = ${dModel}, ${heads} heads, ${numLayers} layer(s), tags: ${model.labels.join(', ')}` }),
  );
  body.append(modelPicker(pe, body));
}

async function buildUi(pe, body, model, embedding) {
  const { heads, embeddingScale, positionalEncoding } = model.config;
  const { vocab, labels } = model;
  const sentence = el('input', { type: 'text', name: 'sentence', value: PAIR[0], size: '32', 'aria-describedby': 'transformer-vocab' });
  const peSwitch = el('input', { type: 'checkbox', name: 'pe', role: 'switch', checked: '' });
  const form = el('form', { class: 'controls', id: 'transformer-controls', autocomplete: 'off' },
    el('label', {}, 'sentence ', sentence),
    el('label', { class: 'check' }, peSwitch, ' positional encoding'),
  );
  const vocabNote = el('p', { class: 'help', id: 'transformer-vocab', text: `Known words: ${vocab.filter((w) => !SPECIAL.test(w)).join(', ')}` });
  const errorEl = el('p', { class: 'error', role: 'alert', id: 'transformer-error', hidden: '' });
  const tokensOut = el('div', { id: 'transformer-tokens', 'aria-live': 'polite' });
  const embedBox = el('div', { class: 'heatmap', id: 'transformer-input' });
  const embedReadout = el('output', { class: 'readout', id: 'transformer-input-readout' });
  const headsBox = el('div', { class: 'heads', id: 'transformer-heads' });
  const pairBox = el('div', { class: 'pair', id: 'transformer-pair' });
  body.replaceChildren(
    form, vocabNote, errorEl,
    el('h3', { text: 'Tokens and tags' }), tokensOut,
    ...(embedding ? [el('h3', { text: 'Input to the first layer: embedding × √d + PE' }), embedBox, embedReadout] : []),
    el('h3', { text: 'Attention of each head (last layer)' }), headsBox,
    el('h3', { text: 'Word order matters only with the positional encoding' }), pairBox,
  );

  const embedMap = embedding
    ? new Heatmap(embedBox, {
        interpolator: (t) => interpolateRdBu(1 - t), rowName: 'token', colName: 'dim', label: 'Model input per token',
        readout: embedReadout, height: 180, format: (v) => v.toFixed(4), marginLeft: 70,
      })
    : null;
  let headMaps = [];

  function run(tokens, usePe) {
    const ids = Int32Array.from(tokens, (t) => t.id);
    const logits = model.forward(ids, { pe: usePe });
    return argmaxRows(logits, ids.length);
  }

  function update() {
    errorEl.hidden = true;
    const tokens = tokenize(sentence.value, vocab);
    const usePe = peSwitch.checked;
    if (!tokens.length) {
      tokensOut.replaceChildren(el('p', { class: 'help', text: 'Type a sentence.' }));
      return;
    }
    // The model has no unknown-word token: such words are shown struck out and left out of its input.
    const known = tokens.filter((t) => t.id >= 0);
    const missing = tokens.filter((t) => t.id < 0);
    try {
      const tagIds = known.length ? run(known, usePe) : [];
      const tagOf = new Map(known.map((t, i) => [t, tagIds[i]]));
      tokensOut.replaceChildren(tokenChips(tokens, tokens.map((t) => tagOf.get(t) ?? -1), labels));
      if (missing.length) {
        const text = `Not in the model's vocabulary, so left out of its input: ${missing.map((t) => `"${t.word}"`).join(', ')}. Try the known words below the box.`;
        tokensOut.append(el('p', { class: 'notice', role: 'status', text }));
      }
      if (!known.length) return;
      drawAttention(known);
      if (embedMap) drawInput(known, usePe);
    } catch (err) {
      errorEl.hidden = false;
      errorEl.textContent = err.message;
    }
  }

  function drawInput(tokens, usePe) {
    const d = embedding.cols;
    const rows = new Float32Array(tokens.length * d);
    tokens.forEach((t, i) => rows.set(embedding.values.subarray(t.id * d, (t.id + 1) * d), i * d));
    // What the model adds (model.hpp): embedding x embeddingScale + PE of its preset (or none).
    if (usePe && positionalEncoding !== 'none') pe.addTo(rows, d, { scale: embeddingScale, preset: positionalEncoding });
    else for (let i = 0; i < rows.length; i++) rows[i] *= embeddingScale;
    let max = 0;
    for (const v of rows) max = Math.max(max, Math.abs(v));
    embedMap.opts.rowValue = (r) => tokens[r]?.word ?? r;
    embedMap.setData(rows, { rows: tokens.length, cols: d, min: -max, max });
  }

  function drawAttention(tokens) {
    const attn = model.attention();
    const L = tokens.length;
    const perLayer = heads * L * L;
    const h = heads;
    const last = attn.subarray(attn.length - perLayer);
    if (headMaps.length !== h) {
      headsBox.replaceChildren();
      headMaps = Array.from({ length: h }, (_, i) => {
        const fig = el('figure', {}, el('figcaption', { text: `head ${i + 1}` }));
        const box = el('div', { class: 'heatmap' });
        const out = el('output', { class: 'readout', id: `transformer-head-${i}-readout` });
        fig.append(box, out);
        headsBox.append(fig);
        return new Heatmap(box, {
          interpolator: interpolateBlues, rowName: 'query', colName: 'key', label: `Attention of head ${i + 1}`,
          readout: out, height: 260, format: (v) => v.toFixed(3), marginLeft: 70, marginBottom: 64,
        });
      });
    }
    headMaps.forEach((map, i) => {
      map.opts.rowValue = (r) => tokens[r]?.word ?? r;
      map.opts.colValue = (c) => tokens[c]?.word ?? c;
      map.setData(last.slice(i * L * L, (i + 1) * L * L), { rows: L, cols: L, min: 0, max: 1 });
    });
  }

  function drawPair() {
    pairBox.replaceChildren(
      ...PAIR.map((text) => {
        const tokens = tokenize(text, vocab);
        const fig = el('figure', { 'data-sentence': text }, el('figcaption', { text: `“${text}”` }));
        if (tokens.some((t) => t.id < 0)) {
          fig.append(el('p', { class: 'notice', text: 'Some of these words are not in the model\'s vocabulary.' }));
          return fig;
        }
        for (const usePe of [true, false]) {
          const chips = tokenChips(tokens, run(tokens, usePe), labels);
          chips.dataset.pe = String(usePe);
          fig.append(el('p', { class: 'help', text: usePe ? 'with PE' : 'without PE' }), chips);
        }
        return fig;
      }),
    );
  }

  form.addEventListener('input', update);
  form.addEventListener('submit', (e) => e.preventDefault());
  drawPair();
  await yieldToBrowser(); // the first draw in two tasks
  update();
}
