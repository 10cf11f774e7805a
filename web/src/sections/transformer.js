// Section 5: the tiny trained transformer (issue 5) tagging who acts / who is acted upon, run by
// posenc in the page, with the positional encoding on or off.
//
// Contract with the model API (bindings/js/layer.js):
//   const model = pe.loadModel(uint8Array);
//   model.forward(tokenIds, { pe: true | false })  -> logits, Float32Array [L x tags]
//   model.attention()                              -> Float32Array [layers x heads x L x L] (or [heads x L x L])
//   model.dispose()
// The vocabulary, the tag names and the config are read from the .safetensors metadata
// (`__metadata__`), or from model.metadata / model.vocab / model.config when the API exposes them.
//
// The model file is found at build time: the first .safetensors under the folders below (Vite
// emits it as an asset and the page fetches it lazily). When the API or the file is missing, the
// section says so plainly instead of failing.
import { interpolateBlues, interpolateRdBu } from 'd3-scale-chromatic';
import { Heatmap } from '../lib/heatmap.js';
import { el } from '../lib/util.js';

const MODEL_FILES = import.meta.glob(
  [
    '../../../models/**/*.safetensors',
    '../../../examples/**/*.safetensors',
    '../../../tests/fixtures/model/**/*.safetensors',
    '../../../tests/fixtures/demo/**/*.safetensors',
    '../../../tests/fixtures/**/*tagger*.safetensors',
    '../../../tests/fixtures/**/*demo*.safetensors',
    '../../../train/**/*.safetensors',
    '../../../training/**/*.safetensors',
    '../../public/**/*.safetensors',
  ],
  { query: '?url', import: 'default' },
);

const UNK_NAMES = ['<unk>', '[UNK]', '<UNK>', 'unk', '<oov>'];
const SPECIAL = /^(<.*>|\[.*\])$/; // <pad>, <unk>, [CLS]...: not words to type
const PAIR = ['the dog bit the man', 'the man bit the dog'];

/** Picks the demo model among the matched files: names that say so first, bad-input fixtures never. */
function pickModelFile() {
  const names = Object.keys(MODEL_FILES).filter((n) => !/bad|trunc|malform|invalid|corrupt|wrong|broken/i.test(n));
  const score = (n) => (/demo|tagger|role|agent/i.test(n) ? 0 : /model/i.test(n) ? 1 : 2);
  names.sort((a, b) => score(a) - score(b) || a.localeCompare(b));
  return names[0];
}

/** The header of a .safetensors file: { tensors: {name: {dtype, shape, data_offsets}}, metadata, dataStart }. */
export function readSafetensorsHeader(bytes) {
  if (bytes.length < 8) throw new RangeError('model file: shorter than a safetensors header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  if (8 + n > bytes.length) throw new RangeError('model file: header length past the end of the file');
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const { __metadata__: metadata = {}, ...tensors } = header;
  return { tensors, metadata, dataStart: 8 + n };
}

function parseMaybeJson(v) {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (t.startsWith('[') || t.startsWith('{')) {
    try {
      return JSON.parse(t);
    } catch {
      return v;
    }
  }
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  return v;
}

/** Vocabulary (id -> word), tag names and config from whatever the model and the file say. */
function describeModel(model, header) {
  const md = {};
  for (const [k, v] of Object.entries(header.metadata)) md[k] = parseMaybeJson(v);
  const fromModel = (k) => (model && model[k] !== undefined ? model[k] : undefined);
  const mdModel = fromModel('metadata') ?? {};
  const pick = (...keys) => {
    for (const k of keys) {
      const v = fromModel(k) ?? mdModel[k] ?? md[k] ?? md.config?.[k];
      if (v !== undefined) return parseMaybeJson(v);
    }
    return undefined;
  };
  let vocab = pick('vocab', 'vocabulary', 'tokens', 'words', 'itos', 'id2word');
  if (vocab && !Array.isArray(vocab) && typeof vocab === 'object') {
    const inv = [];
    for (const [word, id] of Object.entries(vocab)) inv[Number(id)] = word;
    vocab = inv;
  }
  if (typeof vocab === 'string') vocab = vocab.split(/[\s,]+/).filter(Boolean);
  let tags = pick('tags', 'labels', 'classes', 'tag_names', 'tagNames', 'id2tag');
  if (tags && !Array.isArray(tags) && typeof tags === 'object') {
    const inv = [];
    for (const [name, id] of Object.entries(tags)) inv[Number(id)] = name;
    tags = inv.every((x) => typeof x === 'string') ? inv : Object.values(tags);
  }
  if (typeof tags === 'string') tags = tags.split(/[\s,]+/).filter(Boolean);
  const config = { ...(typeof md.config === 'object' ? md.config : {}), ...(model?.config ?? {}) };
  const num = (...keys) => {
    for (const k of keys) {
      const v = Number(config[k] ?? md[k] ?? mdModel[k]);
      if (Number.isFinite(v) && v > 0) return v;
    }
    return undefined;
  };
  return {
    vocab: vocab ?? [],
    tags: tags ?? [],
    heads: num('heads', 'nHeads', 'n_heads', 'num_heads', 'nhead'),
    layers: num('layers', 'nLayers', 'n_layers', 'num_layers'),
    dModel: num('dModel', 'd_model', 'dim', 'hidden_size'),
    preset: config.preset ?? md.preset ?? md.positional_encoding ?? md.pe ?? 'vaswani',
    scale: Number(config.embeddingScale ?? md.embedding_scale ?? md.scale ?? NaN),
    config,
    metadata: md,
  };
}

/** Tag colour class by meaning: the one who acts (0), the one acted upon (1), neither (2). */
function tagClass(name) {
  if (/agent|actor|subj|doer|acts\b|^a$|^act/i.test(name) && !/acted|upon/i.test(name)) return 'tag-0';
  if (/patient|obj|acted|upon|undergo|^p$/i.test(name)) return 'tag-1';
  return 'tag-2';
}

/** Lowercased words; unknown ones map to the unknown token when the vocabulary has one. */
export function tokenize(text, vocab) {
  const index = new Map(vocab.map((w, i) => [w, i]));
  const unkName = UNK_NAMES.find((u) => index.has(u));
  const words = text.toLowerCase().match(/[a-z0-9']+/g) ?? [];
  return words.map((word) => {
    const id = index.get(word);
    if (id !== undefined) return { word, id, unknown: false };
    return { word, id: unkName !== undefined ? index.get(unkName) : -1, unknown: true, unkName };
  });
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
      if (t.unknown) chip.append(el('small', { text: t.id >= 0 ? `unknown → ${t.unkName}` : 'unknown word, left out' }));
      if (tagged) {
        chip.dataset.tag = tag;
        chip.append(el('small', { text: tag }));
      }
      return chip;
    }),
  );
}

function notAvailable(body, why) {
  const section = document.getElementById('transformer');
  section.dataset.model = 'unavailable';
  body.replaceChildren(
    el('p', { class: 'notice', role: 'status', id: 'transformer-status' },
      el('strong', { text: 'The transformer model is not available in this build. ' }),
      why,
    ),
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
  const file = pickModelFile();
  if (typeof pe.loadModel !== 'function') {
    notAvailable(body, 'This posenc build has no pe.loadModel (the transformer layer API is not in the package yet).');
    return;
  }
  if (!file) {
    notAvailable(body, 'No trained model file (.safetensors) was found when the page was built; you can load one below.');
    body.append(modelPicker(pe, body));
    return;
  }
  let bytes;
  try {
    const url = await MODEL_FILES[file]();
    const response = await fetch(url);
    if (!response.ok) throw new Error(`fetching the model: HTTP ${response.status}`);
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (err) {
    failed(body, err);
    return;
  }
  await loadAndShow(pe, body, bytes, file.split('/').pop());
}

function failed(body, err) {
  document.getElementById('transformer').dataset.model = 'error';
  body.replaceChildren(el('p', { class: 'error', role: 'alert', text: `The transformer model failed to load: ${err.message}` }));
  console.error(err);
}

let current = null; // the loaded model, disposed when another one replaces it

async function loadAndShow(pe, body, bytes, name) {
  const section = document.getElementById('transformer');
  let model;
  let info;
  let embedding = null;
  try {
    const header = readSafetensorsHeader(bytes);
    model = pe.loadModel(bytes);
    info = describeModel(model, header);
    embedding = readEmbedding(bytes, header, info);
    if (!info.vocab.length) throw new Error('the model file has no vocabulary in its metadata');
    section.dataset.modelBytes = String(bytes.length);
  } catch (err) {
    model?.dispose?.();
    failed(body, err);
    body.append(modelPicker(pe, body));
    return;
  }
  current?.dispose?.();
  current = model;
  section.dataset.model = 'ready';
  buildUi(pe, body, model, info, embedding);
  body.prepend(
    el('p', { class: 'help', id: 'transformer-model-name', text: `Model: ${name} (${(bytes.length / 1024).toFixed(1)} KB), d = ${info.dModel ?? embedding?.cols ?? '?'}, ${info.heads ?? '?'} heads, ${info.layers ?? '?'} layer(s), tags: ${info.tags.join(', ')}` }),
  );
  body.append(modelPicker(pe, body));
}

/** The token embedding table [vocab x d] as float32, when the file has an obvious one. */
function readEmbedding(bytes, header, info) {
  const entries = Object.entries(header.tensors).filter(([, t]) => t.shape?.length === 2 && t.shape[0] === info.vocab.length);
  const found = entries.find(([name]) => /emb/i.test(name)) ?? entries[0];
  if (!found) return null;
  const [name, t] = found;
  const [rows, cols] = t.shape;
  const start = header.dataStart + t.data_offsets[0];
  const view = new DataView(bytes.buffer, bytes.byteOffset + start, t.data_offsets[1] - t.data_offsets[0]);
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < out.length; i++) {
    if (t.dtype === 'F32') out[i] = view.getFloat32(i * 4, true);
    else if (t.dtype === 'BF16') {
      const u = new DataView(new ArrayBuffer(4));
      u.setUint32(0, view.getUint16(i * 2, true) << 16);
      out[i] = u.getFloat32(0);
    } else if (t.dtype === 'F16') {
      const h = view.getUint16(i * 2, true);
      const e = (h >> 10) & 31;
      const m = h & 1023;
      const s = h & 32768 ? -1 : 1;
      out[i] = s * (e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1 + m / 1024) * 2 ** (e - 15));
    } else return null;
  }
  return { name, rows, cols, values: out };
}

function buildUi(pe, body, model, info, embedding) {
  const heads = info.heads;
  const sentence = el('input', { type: 'text', name: 'sentence', value: PAIR[0], size: '32', 'aria-describedby': 'transformer-vocab' });
  const peSwitch = el('input', { type: 'checkbox', name: 'pe', role: 'switch', checked: '' });
  const form = el('form', { class: 'controls', id: 'transformer-controls', autocomplete: 'off' },
    el('label', {}, 'sentence ', sentence),
    el('label', { class: 'check' }, peSwitch, ' positional encoding'),
  );
  const vocabNote = el('p', { class: 'help', id: 'transformer-vocab', text: `Known words: ${info.vocab.filter((w) => !SPECIAL.test(w)).join(', ')}` });
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
    const tokens = tokenize(sentence.value, info.vocab);
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
      tokensOut.replaceChildren(tokenChips(tokens, tokens.map((t) => tagOf.get(t) ?? -1), info.tags));
      const replaced = tokens.filter((t) => t.unknown && t.id >= 0);
      const notes = [];
      if (replaced.length) notes.push(`Unknown words (${replaced.map((t) => t.word).join(', ')}) were replaced by ${replaced[0].unkName}; their tags are guesses.`);
      if (missing.length) notes.push(`Not in the model's vocabulary, so left out of its input: ${missing.map((t) => `"${t.word}"`).join(', ')}. Try the known words below the box.`);
      if (notes.length) tokensOut.append(el('p', { class: 'notice', role: 'status', text: notes.join(' ') }));
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
    const scale = Number.isFinite(info.scale) ? info.scale : Math.sqrt(d);
    if (usePe) pe.addTo(rows, d, { scale, preset: info.preset });
    else for (let i = 0; i < rows.length; i++) rows[i] *= scale;
    let max = 0;
    for (const v of rows) max = Math.max(max, Math.abs(v));
    embedMap.opts.rowValue = (r) => tokens[r]?.word ?? r;
    embedMap.setData(rows, { rows: tokens.length, cols: d, min: -max, max });
  }

  function drawAttention(tokens) {
    const attn = model.attention();
    const L = tokens.length;
    const perLayer = (heads ?? attn.length / (L * L)) * L * L;
    const h = perLayer / (L * L);
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
        const tokens = tokenize(text, info.vocab);
        const fig = el('figure', { 'data-sentence': text }, el('figcaption', { text: `“${text}”` }));
        if (tokens.some((t) => t.id < 0)) {
          fig.append(el('p', { class: 'notice', text: 'Some of these words are not in the model\'s vocabulary.' }));
          return fig;
        }
        for (const usePe of [true, false]) {
          const chips = tokenChips(tokens, run(tokens, usePe), info.tags);
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
  update();
}
