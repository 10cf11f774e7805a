// Section 14: the 2D RoPE of vision towers (issue 24): Qwen2-VL, Qwen2.5-VL and Pixtral turn a
// patch's query and key by its row in one half of the frequencies and by its column in the other.
// rotary2d(pe, { config }) from posenc/multimodal (on the page's posenc instance): r.cosSin(...)
// gives the cos / sin table of an image's patches in the order the vision tower sees them,
// r.positions(...) the (h, w) of each row; the page puts each row back
// on its cell and draws cos(h · w_k) and cos(w · w'_k) over the grid, and the sequence index of
// every patch (Qwen's 2 x 2 merge blocks, Qwen2.5-VL's attention windows).
import { interpolateRdBu } from 'd3-scale-chromatic';
import { rotary2d } from 'posenc/multimodal';
import { Heatmap } from '../lib/heatmap.js';
import { el, guarded, intValue, perFrame } from '../lib/util.js';
// the vision configs of tests/fixtures/vision_rope/ (Vite keeps only the named key, `config`)
import { config as qwen2Vl } from '../../../tests/fixtures/vision_rope/qwen2_vl.json';
import { config as qwen25Vl } from '../../../tests/fixtures/vision_rope/qwen2_5_vl.json';

// Pixtral-12B's vision_config, as tests/fixtures/vision_rope/pixtral.json's configs[0] (written out:
// importing `configs` would bundle the fixture's tables too; tests/e2e/relative-2d.test.mjs checks
// the page's frequencies and cos values against that fixture's)
export const PIXTRAL_VISION_CONFIG = {
  model_type: 'pixtral',
  hidden_size: 1024,
  intermediate_size: 4096,
  num_hidden_layers: 24,
  num_attention_heads: 16,
  num_channels: 3,
  image_size: 1024,
  patch_size: 16,
  hidden_act: 'silu',
  head_dim: 64,
  rope_theta: 10000.0,
};

/** The models of the select: a config.json as the Hub has it (model_type at the top, vision_config). */
export const VISION_MODELS = [
  { name: 'Qwen2-VL-7B', config: { model_type: 'qwen2_vl', vision_config: qwen2Vl.vision_config } },
  { name: 'Qwen2.5-VL-7B', config: { model_type: 'qwen2_5_vl', vision_config: qwen25Vl.vision_config } },
  { name: 'Pixtral-12B', config: { model_type: 'llava', vision_config: PIXTRAL_VISION_CONFIG } },
];

const isQwen = (config) => config.model_type === 'qwen2_vl' || config.model_type === 'qwen2_5_vl';

export function setupRotary2d(pe) {
  const form = document.getElementById('rotary2d-controls');
  const errorEl = document.getElementById('rotary2d-error');
  const callEl = document.getElementById('rotary2d-call');
  const summary = document.getElementById('rotary2d-summary');
  const orderGrid = document.getElementById('rotary2d-order');
  const orderCaption = document.getElementById('rotary2d-order-caption');
  const hCaption = document.getElementById('rotary2d-h-caption');
  const wCaption = document.getElementById('rotary2d-w-caption');
  form.model.replaceChildren(...VISION_MODELS.map((m, i) => el('option', { value: String(i), text: m.name })));
  const rdbu = (t) => interpolateRdBu(1 - t);
  const common = { interpolator: rdbu, rowName: 'patch row h', colName: 'patch column w', height: 240, format: (v) => v.toFixed(6) };
  const hMap = new Heatmap(document.getElementById('rotary2d-hmap'), {
    ...common,
    label: 'cos of the row angle h times w_k over the patch grid',
    readout: document.getElementById('rotary2d-h-readout'),
  });
  const wMap = new Heatmap(document.getElementById('rotary2d-wmap'), {
    ...common,
    label: 'cos of the column angle w times w_k over the patch grid',
    readout: document.getElementById('rotary2d-w-readout'),
  });
  const instances = new Map(); // model index -> rotary2d instance (a few KB each, kept for the page's life)

  function rotaryFor(index) {
    let r = instances.get(index);
    if (!r) {
      r = rotary2d(pe, { config: VISION_MODELS[index].config });
      instances.set(index, r);
    }
    return r;
  }

  function update() {
    for (const span of form.querySelectorAll('.val')) span.textContent = ` ${form[span.dataset.for].value}`;
    const index = Number(form.model.value);
    const { config } = VISION_MODELS[index];
    const qwen = isQwen(config);
    const windowed = config.model_type === 'qwen2_5_vl';
    form.order.closest('label').hidden = !windowed;
    const r = rotaryFor(index);
    // Qwen's grids are in whole merge blocks: the inputs step by the merge size
    const merge = r.spatialMergeSize ?? 1;
    for (const input of [form.height, form.width]) {
      input.step = String(merge);
      input.max = String(Math.min(32, r.maxPatchesPerSide ?? 32));
    }
    const quarter = r.headDim / 4;
    form.k.max = String(quarter - 1);
    // the grid goes to posenc as typed (an odd Qwen grid gets the library's message)
    const H = Math.round(Number(form.height.value));
    const W = Math.round(Number(form.width.value));
    const k = Math.min(intValue(form.k, 2), quarter - 1);
    const order = windowed ? form.order.value : 'patch';
    const args = qwen ? { gridThw: [[1, H, W]], ...(windowed && { order }) } : { height: H, width: W };
    const t0 = performance.now();
    const { cos } = r.cosSin(args);
    const ms = performance.now() - t0;
    const pos = r.positions(args);
    const window = order === 'window' ? r.windowTokens : 0;
    const vc = config.vision_config;
    const hImg = new Float32Array(H * W);
    const wImg = new Float32Array(H * W);
    const seq = new Int32Array(H * W);
    for (let i = 0; i < H * W; i++) {
      const cell = pos.h[i] * W + pos.w[i];
      hImg[cell] = cos[i * r.headDim + k];
      wImg[cell] = cos[i * r.headDim + quarter + k];
      seq[cell] = i;
    }
    hMap.setData(hImg, { rows: H, cols: W, min: -1, max: 1 });
    wMap.setData(wImg, { rows: H, cols: W, min: -1, max: 1 });
    const wh = r.inverseFrequencies[k];
    const ww = r.inverseFrequencies[quarter + k];
    const fmt = (v) => Number(v.toPrecision(6)).toString();
    hCaption.textContent = `cos(h · ${fmt(wh)}): column ${k} of each row`;
    wCaption.textContent = `cos(w · ${fmt(ww)}): column ${quarter} + ${k} = ${quarter + k}`;

    // the sequence index of every patch; shading shows the merge blocks (and the windows)
    const cellsEls = [];
    for (let h = 0; h < H; h++) {
      for (let w = 0; w < W; w++) {
        const b = (Math.floor(h / merge) + Math.floor(w / merge)) % 2;
        const win = window ? (Math.floor(h / merge / window) + Math.floor(w / merge / window)) % 2 : 0;
        const i = seq[h * W + w];
        cellsEls.push(el('span', { class: `b${qwen ? b : 0} w${win}`, title: `patch (h, w) = (${h}, ${w}): row ${i} of the table`, text: String(i) }));
      }
    }
    orderGrid.replaceChildren(...cellsEls);
    orderGrid.style.gridTemplateColumns = `repeat(${W}, minmax(0, 1fr))`;
    orderGrid.setAttribute('aria-label', `${H} rows of ${W} patches, each labelled with its row in the cos / sin table`);
    orderGrid.dataset.order = Array.from(seq).join(' ');
    // a wide grid's numbers get the whole row under the two maps
    orderGrid.closest('figure').classList.toggle('wide', W > 12);
    orderCaption.textContent = !qwen
      ? 'Sequence index of each patch: row-major'
      : window
        ? `Sequence index: ${window} x ${window} windows of ${merge} x ${merge} blocks (window_size ${vc.window_size} / ${merge} / patch_size ${vc.patch_size})`
        : `Sequence index: ${merge} x ${merge} merge blocks row-major, patches row-major inside a block`;

    const call = qwen ? `{ gridThw: [[1, ${H}, ${W}]]${windowed ? `, order: '${order}'` : ''} }` : `{ height: ${H}, width: ${W} }`;
    callEl.textContent =
      `r = rotary2d(pe, { config }) (model '${r.model}', headDim ${r.headDim}, base ${r.base}); r.cosSin(${call}) in ${ms.toFixed(2)} ms: ` +
      `cos and sin [${H * W}, ${r.headDim}]. A row holds the h angles h · w_k in columns 0–${quarter - 1} and the w angles in ${quarter}–${2 * quarter - 1}, ` +
      `then both again (rotate_half pairs column c with c + ${2 * quarter}); r.positions(${call}) gives each row's (h, w).` +
      (qwen ? '' : ` Pixtral's rows take the even frequencies of a ${r.headDim}-dim RoPE and its columns the odd ones, so w_k and w'_k differ.`);
    Object.assign(summary.dataset, { model: r.model, headDim: String(r.headDim), k: String(k), wh: String(wh), ww: String(ww), height: String(H), width: String(W) });
  }

  const scheduled = perFrame(() => guarded(errorEl, update));
  form.addEventListener('input', scheduled);
  form.addEventListener('change', scheduled);
  form.addEventListener('submit', (e) => e.preventDefault());
  guarded(errorEl, update);
}
