// Section 10: the fixed 2D sin-cos encoding of ViT patch grids (MAE, timm), issue 13.
// pe.encode2d(h, w, dim, { preset, clsToken }) once per change; the page slices one channel into
// an h x w image, draws a row of channels side by side, and dots one patch's embedding with every
// patch's (2D locality). Which coordinate a channel follows is read off the numbers, not assumed.
import { interpolateRdBu, interpolateViridis } from 'd3-scale-chromatic';
import { Heatmap } from '../lib/heatmap.js';
import { el, guarded, intValue, perFrame } from '../lib/util.js';

const GRID_CHANNELS = 12;

/** A 256-entry [r, g, b] table of a d3 interpolator, for the small channel images. */
function rgbTable(interpolator) {
  const probe = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
  probe.canvas.width = 256;
  probe.canvas.height = 1;
  for (let i = 0; i < 256; i++) {
    probe.fillStyle = interpolator(i / 255);
    probe.fillRect(i, 0, 1, 1);
  }
  return probe.getImageData(0, 0, 256, 1).data;
}

/** Whether a channel image varies along x (within rows), along y (within columns), both or neither. */
export function channelAxis(img, h, w) {
  let alongX = 0;
  let alongY = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = img[y * w + x];
      alongX = Math.max(alongX, Math.abs(v - img[y * w]));
      alongY = Math.max(alongY, Math.abs(v - img[x]));
    }
  }
  const eps = 1e-6;
  if (alongX > eps && alongY > eps) return 'x and y';
  if (alongX > eps) return 'x';
  if (alongY > eps) return 'y';
  return 'neither';
}

export function setupSincos2d(pe) {
  const form = document.getElementById('sincos2d-controls');
  const channelForm = document.getElementById('sincos2d-channel-controls');
  const patchForm = document.getElementById('sincos2d-patch-controls');
  const errorEl = document.getElementById('sincos2d-error');
  const summary = document.getElementById('sincos2d-summary');
  const gridBox = document.getElementById('sincos2d-channels');
  const rdbu = (t) => interpolateRdBu(1 - t);
  const table = rgbTable(rdbu);
  let state = null; // { E, h, w, dim, cls }

  const channelMap = new Heatmap(document.getElementById('sincos2d-heatmap'), {
    interpolator: rdbu,
    rowName: 'patch row y',
    colName: 'patch col x',
    label: 'One channel of the 2D encoding over the patch grid',
    readout: document.getElementById('sincos2d-readout'),
    height: 300,
    format: (v) => v.toFixed(6),
  });
  const simReadout = document.getElementById('sincos2d-sim-readout');
  const simMap = new Heatmap(document.getElementById('sincos2d-similarity'), {
    interpolator: interpolateViridis,
    rowName: 'patch row y',
    colName: 'patch col x',
    label: 'Dot product of the chosen patch encoding with every patch encoding; click a patch to choose it',
    readout: simReadout,
    height: 300,
    format: (v) => v.toFixed(4),
  });
  // click (or Enter on) a cell of the similarity map: it becomes the reference patch
  const pick = () => {
    if (simReadout.dataset.row === undefined) return;
    patchForm.row.value = simReadout.dataset.row;
    patchForm.col.value = simReadout.dataset.col;
    updateSimilarity();
  };
  simMap.canvas.addEventListener('click', pick);
  simMap.canvas.addEventListener('keydown', (e) => e.key === 'Enter' && pick());

  function showValues() {
    for (const span of channelForm.querySelectorAll('.val')) span.textContent = ` ${channelForm[span.dataset.for].value}`;
  }

  function channelImage(ch) {
    const { E, h, w, dim, cls } = state;
    const img = new Float32Array(h * w);
    for (let i = 0; i < h * w; i++) img[i] = E[(cls + i) * dim + ch];
    return img;
  }

  function encode() {
    const h = intValue(form.height, 14);
    const w = intValue(form.width, 14);
    const dim = intValue(form.dim, 256);
    const preset = form.preset.value;
    const clsToken = form.clsToken.checked;
    const t0 = performance.now();
    const E = pe.encode2d(h, w, dim, { preset, clsToken });
    const ms = performance.now() - t0;
    state = { E, h, w, dim, cls: clsToken ? 1 : 0, preset, ms };
    channelForm.channel.max = String(dim - 1);
    patchForm.row.max = String(h - 1);
    patchForm.col.max = String(w - 1);
    if (Number(patchForm.row.value) > h - 1) patchForm.row.value = String(h - 1);
    if (Number(patchForm.col.value) > w - 1) patchForm.col.value = String(w - 1);
    drawGrid();
  }

  function updateChannel() {
    showValues();
    const { h, w, dim, cls, E, preset, ms } = state;
    const ch = intValue(channelForm.channel, 1);
    const img = channelImage(ch);
    channelMap.setData(img, { rows: h, cols: w, min: -1, max: 1 });
    const axis = channelAxis(img, h, w);
    summary.dataset.axis = axis;
    summary.dataset.channel = String(ch);
    let clsNote = '';
    if (cls) {
      let clsMax = 0;
      for (let j = 0; j < dim; j++) clsMax = Math.max(clsMax, Math.abs(E[j]));
      summary.dataset.clsMax = String(clsMax);
      clsNote = ` The cls token is row 0 of the output (then the ${h * w} patches); its largest |value| is ${clsMax}.`;
    } else delete summary.dataset.clsMax;
    summary.textContent =
      `pe.encode2d(${h}, ${w}, ${dim}, { preset: '${preset}'${cls ? ', clsToken: true' : ''} }) in ${ms.toFixed(1)} ms: ` +
      `${E.length.toLocaleString('en')} values. Channel ${ch} changes along ${axis === 'x' ? 'x (across the columns) only' : axis === 'y' ? 'y (down the rows) only' : axis}.` +
      clsNote;
    for (const fig of gridBox.children) fig.classList.toggle('current', fig.dataset.channel === String(ch));
  }

  function updateSimilarity() {
    const { E, h, w, dim, cls } = state;
    const r = Math.min(intValue(patchForm.row, 0), h - 1);
    const c = Math.min(intValue(patchForm.col, 0), w - 1);
    const ref = (cls + r * w + c) * dim;
    const S = new Float32Array(h * w);
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < h * w; i++) {
      const o = (cls + i) * dim;
      let s = 0;
      for (let j = 0; j < dim; j++) s += E[ref + j] * E[o + j];
      S[i] = s;
      min = Math.min(min, s);
      max = Math.max(max, s);
    }
    simMap.setData(S, { rows: h, cols: w, min, max: max > min ? max : min + 1 });
    simMap.canvas.dataset.patch = `${r},${c}`;
    simMap.canvas.dataset.self = String(S[r * w + c]);
  }

  function drawGrid() {
    const { h, w, dim } = state;
    // three channels from each quarter of the channels (fast, medium, slow waves in both presets'
    // blocks of sines and cosines); what each follows is read off its values below
    const q = dim / 4;
    const channels = [...new Set([0, 1, 2, 3].flatMap((b) => [0, q / 8, q / 4].map((o) => Math.floor(b * q + o))))]
      .filter((c) => c < dim)
      .slice(0, GRID_CHANNELS);
    const figs = channels.map((ch) => {
      const img = channelImage(ch);
      const canvas = el('canvas', { width: String(w), height: String(h), role: 'img', 'aria-label': `channel ${ch} over the ${h} x ${w} grid` });
      const ctx = canvas.getContext('2d');
      const image = ctx.createImageData(w, h);
      for (let i = 0; i < h * w; i++) {
        const t = Math.min(Math.max(Math.round(((img[i] + 1) / 2) * 255), 0), 255);
        image.data.set(table.subarray(t * 4, t * 4 + 4), i * 4);
      }
      ctx.putImageData(image, 0, 0);
      const button = el('button', { type: 'button', title: `show channel ${ch} above`, 'aria-label': `channel ${ch}`, onclick: () => {
        channelForm.channel.value = String(ch);
        updateChannel();
      } }, canvas);
      return el('figure', { 'data-channel': String(ch) }, button, el('figcaption', { text: `ch ${ch} · ${channelAxis(img, h, w)}` }));
    });
    gridBox.replaceChildren(...figs);
  }

  function update() {
    guarded(errorEl, () => {
      encode();
      updateChannel();
      updateSimilarity();
    });
  }

  form.addEventListener('input', perFrame(update));
  channelForm.addEventListener('input', perFrame(() => state && guarded(errorEl, updateChannel)));
  patchForm.addEventListener('input', perFrame(() => state && guarded(errorEl, updateSimilarity)));
  for (const f of [form, channelForm, patchForm]) f.addEventListener('submit', (e) => e.preventDefault());
  update();
}
