// Section 8, per layer: a real model's config.json read decoder layer by decoder layer, each by its
// model_type's own rule, with pe.rotary({ config, layer }) (null: no RoPE on that layer) and
// pe.attentionMask / pe.queryScales. A strip of the layers, coloured by their RoPE; the wavelengths
// 2 pi / w_i of every distinct RoPE among them; what the selected layer is.
import { LineChart, palette } from '../lib/chart.js';
import { el, guarded, perFrame } from '../lib/util.js';
import { LAYER_MODELS } from '../models.js';

const TAU = 2 * Math.PI;
// The attention of a layer is read off pe.attentionMask for the last two of PROBE keys: a sliding
// window (or chunk) shorter than PROBE shows there.
const PROBE = 16384;
// Where a layer's query temperature is shown (Llama 4's NoPE layers).
const SCALE_AT = [0, 8190, 8191, 65535, 262143];
const LETTER = { sliding: 'S', chunked: 'C', full: 'F', linear: 'L', other: '?' };
const fmtInt = (v) => v.toLocaleString('en-US');
const fmtLength = (v) => (v < 1000 ? v.toPrecision(4) : fmtInt(Math.round(v)));

/** JSON with two-space indents and each array of numbers or strings on one line. */
function formatConfig(config) {
  return JSON.stringify(config, null, 2).replace(/\[\s*((?:-?[\d.eE+-]+|"[^"\n]*")(?:,\s*(?:-?[\d.eE+-]+|"[^"\n]*"))*)\s*\]/g, (_, items) => `[${items.split(/,\s*/).join(', ')}]`);
}

/** num_hidden_layers at the top of the config or in its text_config. */
function layerCount(config) {
  const n = config?.num_hidden_layers ?? config?.text_config?.num_hidden_layers;
  if (!Number.isInteger(n) || n < 1 || n > 512) {
    throw new RangeError('the layer strip needs num_hidden_layers (at the top or in text_config), an integer from 1 to 512');
  }
  return n;
}

/** The keys one mask row allows, when they are one contiguous run [first, last] (else null). */
function keyRun(row) {
  const first = row.indexOf(1);
  if (first < 0) return null;
  const last = row.lastIndexOf(1);
  const gap = row.indexOf(0, first);
  return gap >= 0 && gap < last ? null : { first, last, count: last - first + 1 };
}

/** A layer's attention from its mask rows for queries at PROBE - 2 and PROBE - 1 (null: linear attention). */
function readAttention(mask) {
  if (!mask) return { kind: 'linear', text: 'linear attention: no mask (pe.attentionMask gives null), no positions' };
  const q = PROBE - 1;
  const r0 = keyRun(mask.subarray(0, PROBE));
  const r1 = keyRun(mask.subarray(PROBE));
  if (r0 && r1 && r0.last === q - 1 && r1.last === q) {
    if (r1.first === 0 && r0.first === 0) return { kind: 'full', text: 'causal: each query sees every key up to itself' };
    if (r1.count === r0.count) {
      return { kind: 'sliding', window: r1.count, text: `sliding window: each query sees the last ${fmtInt(r1.count)} keys (itself included)` };
    }
    if (r1.first === r0.first) {
      return { kind: 'chunked', text: `chunked: a query sees the keys of its own chunk only (the query at ${fmtInt(q)} sees ${fmtInt(r1.first)}–${fmtInt(q)})` };
    }
  }
  return { kind: 'other', text: `the query at ${fmtInt(q)} sees ${r1 ? `keys ${fmtInt(r1.first)}–${fmtInt(r1.last)}` : 'a set of keys that is not one run'}` };
}

/** Base theta read off the first two frequencies, w0 / w1 = theta^(2 / rotaryDim) (scaling keeps the fast pairs). */
function thetaOf(inv, rotaryDim) {
  if (inv.length < 2) return NaN;
  return Number(((inv[0] / inv[1]) ** (rotaryDim / 2)).toPrecision(4));
}

/** Every layer of `config`: its RoPE group, attention and layer type. */
function readModel(pe, config) {
  const n = layerCount(config);
  const layers = [];
  const groups = [];
  for (let l = 0; l < n; l++) {
    const rot = pe.rotary({ config, layer: l });
    let group = null;
    let info = null;
    if (rot) {
      try {
        const inv = rot.inverseFrequencies;
        info = {
          modelType: rot.modelType,
          layerType: rot.layerType,
          headDim: rot.headDim,
          rotaryDim: rot.rotaryDim,
          layout: rot.layout,
          scaling: rot.scaling,
          attentionScaling: rot.attentionScaling,
          softmaxScaleFactor: rot.softmaxScaleFactor,
          mropeSection: rot.mropeSection && [...rot.mropeSection],
          mropeInterleaved: rot.mropeInterleaved,
        };
        const key = JSON.stringify([info.headDim, info.rotaryDim, info.layout, info.scaling, info.attentionScaling,
          info.softmaxScaleFactor, info.mropeSection, info.mropeInterleaved, Array.from(inv)]);
        group = groups.find((g) => g.key === key);
        if (!group) {
          group = { key, index: groups.length, inv, info, theta: thetaOf(inv, info.rotaryDim), layers: [], layerTypes: new Set() };
          groups.push(group);
        }
        group.layers.push(l);
        if (info.layerType) group.layerTypes.add(info.layerType);
      } finally {
        rot.dispose();
      }
    }
    const mask = pe.attentionMask(config, { layer: l, queryLength: 2, keyLength: PROBE, offset: PROBE - 2 });
    layers.push({ index: l, group, info, attention: readAttention(mask) });
  }
  return { layers, groups };
}

function groupColor(group) {
  return palette[group.index % palette.length];
}

/** "θ 10,000" (and the scaling when there is one). */
function groupName(group) {
  const theta = Number.isFinite(group.theta) ? `θ ${fmtInt(group.theta)}` : 'one pair';
  return group.info.scaling === 'default' ? theta : `${theta}, ${group.info.scaling}`;
}

function layerTypesText(group) {
  const types = [...group.layerTypes].map((t) => t.replace(/_attention$/, ''));
  return types.length ? ` (${types.join(', ')})` : '';
}

export function setupRopeLayers(pe) {
  const form = document.getElementById('layers-controls');
  const textarea = document.getElementById('layers-config');
  const errorEl = document.getElementById('layers-error');
  const strip = document.getElementById('layers-strip');
  const cells = document.getElementById('layers-cells');
  const legend = document.getElementById('layers-legend');
  const info = document.getElementById('layers-info');
  const readout = document.getElementById('layers-readout');
  const chartEl = document.getElementById('layers-chart');
  form.dataset.fixtures = JSON.stringify(LAYER_MODELS.map((m) => m.fixture));
  form.model.replaceChildren(...LAYER_MODELS.map((m, i) => el('option', { value: String(i), text: m.name })));
  const cache = new Map(); // config text -> readModel's result (the last few)
  let model = null; // { text, config, layers, groups, ms }
  let selected = 0;

  const chart = new LineChart(chartEl, {
    xLabel: 'pair i',
    yLabel: 'wavelength 2π / wᵢ (positions)',
    height: 300,
    yLog: true,
    onCursor: (u) => {
      const i = u.cursor.idx;
      if (i == null || !model) return;
      readout.dataset.pair = String(i);
      readout.textContent = `pair ${i}, wavelength in positions: ` + model.groups
        .filter((g) => i < g.inv.length)
        .map((g) => `${fmtLength(TAU / g.inv[i])} (${groupName(g)})`)
        .join(', ');
    },
  });

  function read(text) {
    const config = JSON.parse(text);
    let result = cache.get(text);
    if (!result) {
      const t0 = performance.now();
      result = readModel(pe, config);
      result.ms = performance.now() - t0;
      cache.set(text, result);
      if (cache.size > 12) cache.delete(cache.keys().next().value);
    }
    return { text, config, ...result };
  }

  function drawStrip() {
    const { layers, groups } = model;
    const noRope = layers.filter((l) => !l.group);
    strip.dataset.layers = String(layers.length);
    strip.dataset.noRope = String(noRope.length);
    strip.dataset.groups = String(groups.length);
    cells.replaceChildren(
      ...layers.map((l) => {
        const letter = LETTER[l.attention.kind];
        const what = l.group
          ? `${groupName(l.group)}, rotaryDim ${l.info.rotaryDim} of ${l.info.headDim}`
          : l.attention.kind === 'linear' ? 'no RoPE (linear attention)' : 'no RoPE (NoPE)';
        const label = el('label', {
          class: `layer-cell${l.group ? '' : ' no-rope'}`,
          title: `layer ${l.index}: ${what}; ${l.info?.layerType ?? l.attention.kind + ' attention'}`,
          'data-layer': String(l.index),
          'data-rope': l.group ? String(l.group.index) : 'none',
          'data-kind': l.attention.kind,
        },
        el('input', { type: 'radio', name: 'rope-layer', value: String(l.index), 'aria-label': `layer ${l.index}: ${what}, ${l.attention.kind} attention` }),
        el('span', { class: 'n', text: String(l.index), 'aria-hidden': 'true' }),
        el('span', { class: 'k', text: letter, 'aria-hidden': 'true' }));
        if (l.group) label.style.setProperty('--c', groupColor(l.group));
        return label;
      }),
    );
    const items = groups.map((g) =>
      el('li', { 'data-rope': String(g.index), 'data-theta': String(g.theta), 'data-scaling': g.info.scaling },
        el('span', { class: 'swatch', style: `background:${groupColor(g)}`, 'aria-hidden': 'true' }),
        `${groupName(g)}: ${g.layers.length} ${g.layers.length === 1 ? 'layer' : 'layers'}${layerTypesText(g)}`),
    );
    if (noRope.length) {
      const linear = noRope.filter((l) => l.attention.kind === 'linear').length;
      const why = linear === noRope.length ? 'linear attention' : linear ? `${linear} linear attention, ${noRope.length - linear} NoPE` : 'NoPE';
      items.push(el('li', { 'data-rope': 'none' }, el('span', { class: 'swatch no-rope', 'aria-hidden': 'true' }), `no RoPE: ${noRope.length} ${noRope.length === 1 ? 'layer' : 'layers'} (${why})`));
    }
    const kinds = [...new Set(layers.map((l) => l.attention.kind))];
    const keyText = { sliding: 'S sliding window', chunked: 'C chunked', full: 'F full (causal)', linear: 'L linear attention', other: '? other mask' };
    items.push(el('li', { class: 'letters' }, kinds.map((k) => keyText[k]).join(' · ')));
    legend.replaceChildren(...items);
  }

  function drawChart() {
    const { groups, layers, config } = model;
    const layer = layers[selected];
    const half = Math.max(1, ...groups.map((g) => g.inv.length));
    const x = Float64Array.from({ length: half }, (_, i) => i);
    const series = [];
    const data = [x];
    for (const g of groups) {
      const mine = layer.group === g;
      series.push({
        label: `${mine ? '▸ ' : ''}${groupName(g)} (${g.layers.length} ${g.layers.length === 1 ? 'layer' : 'layers'})`,
        color: groupColor(g),
        width: mine ? 3 : 1.5,
        value: (u, v) => (v == null ? '–' : v.toPrecision(6)),
      });
      data.push(Array.from({ length: half }, (_, i) => (i < g.inv.length ? TAU / g.inv[i] : null)));
    }
    const text = config.text_config && typeof config.text_config === 'object' ? config.text_config : config;
    const mpe = config.max_position_embeddings ?? text.max_position_embeddings;
    for (const [name, v, color] of [
      [`layer ${selected}'s window`, layer.attention.window, palette[7]],
      ['max_position_embeddings', mpe, palette[9]],
    ]) {
      if (typeof v === 'number' && v > 0) {
        series.push({ label: `${name} ${fmtInt(v)}`, color, width: 1, dash: [6, 4], value: () => String(v) });
        data.push(new Float64Array(half).fill(v));
      }
    }
    if (!groups.length) {
      // no layer has RoPE: an empty plot that says so in its legend
      series.push({ label: 'no layer has RoPE', color: palette[9], width: 1, value: () => '–' });
      data.push(new Float64Array(half).fill(1));
    }
    chart.set(series, data);
  }

  function drawInfo() {
    const l = model.layers[selected];
    const rule = pe.rotaryModelTypes.find((m) => m.modelType === (l.info?.modelType ?? model.config.model_type));
    const rows = [[`pe.rotary({ config, layer: ${l.index} })`, l.group ? 'a Rotary' : 'null: no RoPE on this layer']];
    if (l.info) {
      const i = l.info;
      const g = l.group;
      rows.push(
        ['modelType', i.modelType],
        ['layerType', String(i.layerType)],
        ['θ (from w₀ / w₁), scaling', `${Number.isFinite(g.theta) ? fmtInt(g.theta) : '–'}, ${i.scaling} (attentionScaling ${i.attentionScaling.toPrecision(6)})`],
        ['rotaryDim / headDim', `${i.rotaryDim} / ${i.headDim}`],
        ['layout', i.layout],
        ['softmaxScaleFactor', i.softmaxScaleFactor.toPrecision(6)],
        ['longest wavelength', `${fmtLength(TAU / g.inv[g.inv.length - 1])} positions (pair ${g.inv.length - 1})`],
      );
      if (i.mropeSection) rows.push(['mropeSection', `[${i.mropeSection.join(', ')}]${i.mropeInterleaved ? ', interleaved' : ''} (t, h, w)`]);
    } else {
      rows.push(['model_type', String(model.config.model_type)]);
    }
    rows.push(['pe.attentionMask', l.attention.text]);
    const scales = SCALE_AT.map((p) => pe.queryScales(model.config, { layer: l.index, length: 1, offset: p }));
    if (scales[0]) {
      rows.push(['pe.queryScales', SCALE_AT.map((p, k) => `× ${scales[k][0].toPrecision(5)} at ${fmtInt(p)}`).join('; ')]);
    }
    if (rule) rows.push(['rule: layers', rule.layers], ['rule: attention', rule.attention]);
    info.replaceChildren(
      el('caption', { text: `layer ${l.index} of ${model.layers.length}` }),
      el('tbody', {}, ...rows.map(([k, v]) => el('tr', {}, el('th', { scope: 'row', text: k }), el('td', { text: v })))),
    );
    Object.assign(info.dataset, {
      layer: String(l.index),
      rope: l.group ? String(l.group.index) : 'none',
      modelType: l.info?.modelType ?? '',
      layerType: l.info?.layerType ?? '',
      rotaryDim: l.info ? String(l.info.rotaryDim) : '',
      headDim: l.info ? String(l.info.headDim) : '',
      layout: l.info?.layout ?? '',
      attention: l.attention.kind,
      queryScales: scales[0] ? JSON.stringify(scales.map((s) => s[0])) : '',
      longestWavelength: l.group ? String(TAU / l.group.inv[l.group.inv.length - 1]) : '',
    });
  }

  function select(index) {
    if (!model) return;
    selected = Math.min(Math.max(index, 0), model.layers.length - 1);
    for (const input of cells.querySelectorAll('input')) input.checked = Number(input.value) === selected;
    guarded(errorEl, () => {
      drawInfo();
      drawChart();
    });
  }

  function update() {
    const next = guarded(errorEl, () => read(textarea.value));
    chartEl.classList.toggle('stale', !next);
    strip.classList.toggle('stale', !next);
    if (!next) return;
    model = next;
    strip.dataset.ms = model.ms.toFixed(1);
    drawStrip();
    select(Math.min(selected, model.layers.length - 1));
  }

  function loadModel() {
    textarea.value = formatConfig(LAYER_MODELS[Number(form.model.value)].config);
    strip.dataset.model = form.model.value;
    update();
  }

  form.model.addEventListener('change', loadModel);
  form.addEventListener('submit', (e) => e.preventDefault());
  cells.addEventListener('change', (e) => {
    if (e.target.name === 'rope-layer') select(Number(e.target.value));
  });
  textarea.addEventListener('input', perFrame(() => {
    strip.dataset.model = 'edited';
    update();
  }));
  loadModel();
}
