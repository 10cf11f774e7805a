// Section 12: multimodal position ids of Qwen2-VL, Qwen2.5-VL and Qwen3-VL. A short prompt (text, an
// image or a video, text) as the processor lays it out; ropeIndex from posenc/multimodal gives the
// t, h and w position of every token and the rope delta; pe.rotary({ config }) says which frequency
// pairs of a head turn with each of the three (rot.mropeSection, read back from rot.cosSin).
// Everything drawn is a few hundred DOM cells at most: no canvas.
import { ropeIndex } from 'posenc/multimodal';
import { el, guarded, intValue, perFrame } from '../lib/util.js';
import { VL_MODELS } from '../models.js';

const BEFORE = ['Describe', ' the', ' picture', ' in', ' a', ' few', ' words', ':'];
const AFTER = ['The', ' cat', ' sits', ' on', ' a', ' red', ' sofa', '.'];
const AXES = ['t', 'h', 'w'];
// The README's example: Qwen2-VL, no text before, an image of 2 x 3 tokens (grid [1, 4, 6]), 2 tokens after.
const README_EXAMPLE = { model: '0', before: 0, media: 'image', h: 2, w: 3, after: 2 };

/** A key of a Qwen-VL config: at the top, else in text_config. */
function key(config, name) {
  return config[name] ?? config.text_config?.[name];
}

/**
 * The tokens of the prompt and ropeIndex's options for them: text before, <|vision_start|>, the
 * image's (or video's) pad tokens, <|vision_end|>, text after. Qwen3-VL splits a video into its frames,
 * each after a timestamp ("<0.5 seconds>", one token here; the tokenizer makes several of it).
 */
function buildPrompt(vl, o) {
  const c = vl.config;
  const ids = {
    start: key(c, 'vision_start_token_id'),
    end: key(c, 'vision_end_token_id'),
    image: key(c, 'image_token_id'),
    video: key(c, 'video_token_id'),
  };
  const merge = c.vision_config.spatial_merge_size;
  const video = o.media === 'video';
  const t = video ? o.t : 1;
  const tokens = [];
  const text = (label, id) => tokens.push({ kind: 'text', label, id });
  BEFORE.slice(0, o.before).forEach((word, i) => text(word, 1000 + i));
  const vision = (frame) => {
    tokens.push({ kind: 'special', label: '<vs>', title: '<|vision_start|>', id: ids.start });
    const frames = frame === undefined ? [...Array(t).keys()] : [frame];
    for (const f of frames) {
      for (let r = 0; r < o.h; r++) {
        for (let col = 0; col < o.w; col++) {
          tokens.push({ kind: 'vision', label: video ? 'vid' : 'img', title: `${video ? 'video' : 'image'} pad: frame ${f}, row ${r}, column ${col}`, id: video ? ids.video : ids.image, frame: f, row: r, col });
        }
      }
    }
    tokens.push({ kind: 'special', label: '<ve>', title: '<|vision_end|>', id: ids.end });
  };
  const perFrameRuns = video && /^qwen3_vl/.test(c.model_type);
  if (perFrameRuns) {
    for (let f = 0; f < t; f++) {
      tokens.push({ kind: 'text', stamp: true, label: `<${(f * o.seconds).toFixed(1)} s>`, title: `the timestamp of frame ${f} (one token here; the tokenizer makes several of it)`, id: 2000 + f });
      vision(f);
    }
  } else {
    vision();
  }
  AFTER.slice(0, o.after).forEach((word, i) => text(word, 3000 + i));
  const grid = [[t, o.h * merge, o.w * merge]];
  const options = { inputIds: tokens.map((tk) => tk.id) };
  options[video ? 'videoGridThw' : 'imageGridThw'] = grid;
  if (video && c.model_type === 'qwen2_5_vl') options.secondPerGridTs = [o.seconds];
  return { tokens, options, grid, merge, perFrameRuns };
}

/** "[text ×3, 151652, 151655 ×6, 151653, text ×2]": runs of one id folded. */
function idsText(tokens) {
  const nameOf = (tk) => (tk.stamp ? 'timestamp' : tk.kind === 'text' ? 'text' : String(tk.id));
  const parts = [];
  for (let i = 0; i < tokens.length;) {
    const name = nameOf(tokens[i]);
    let j = i + 1;
    while (j < tokens.length && nameOf(tokens[j]) === name) j++;
    parts.push(j - i > 1 ? `${name} ×${j - i}` : name);
    i = j;
  }
  return `[${parts.join(', ')}]`;
}

/** For each of the rot's rotaryDim / 2 pairs, which position row turns it: 0 t, 1 h, 2 w (from rot.cosSin). */
function pairAxes(rot) {
  const half = rot.rotaryDim / 2;
  const axes = new Int8Array(half).fill(-1);
  for (let a = 0; a < 3; a++) {
    const rows = [[0], [0], [0]];
    rows[a] = [1];
    const { sin } = rot.cosSin(1, { positions: rows });
    // the pair's sine sits at dim i in the 'half' layout (HF's layout: both dims of the pair hold it)
    for (let i = 0; i < half; i++) {
      const d = rot.layout === 'interleaved' ? 2 * i : i;
      if (sin[d] !== 0) axes[i] = a;
    }
  }
  return axes;
}

/** "pairs 0–15 turn with t, 16–39 with h, 40–63 with w" (or the counts when interleaved). */
function axesText(axes, rot) {
  const runs = [];
  for (let i = 0; i < axes.length; i++) {
    const last = runs[runs.length - 1];
    if (last && last.axis === axes[i]) last.to = i;
    else runs.push({ axis: axes[i], from: i, to: i });
  }
  const counts = [0, 1, 2].map((a) => axes.filter((v) => v === a).length);
  const section = `rot.mropeSection [${rot.mropeSection.join(', ')}]${rot.mropeInterleaved ? ', rot.mropeInterleaved' : ''}`;
  if (runs.length <= 3) {
    return `${section}: of the ${axes.length} pairs of a head, ` +
      runs.map((r, k) => `${k ? '' : 'pairs '}${r.from}–${r.to} turn with ${AXES[r.axis]}`).join(', ') + '.';
  }
  return `${section}: t, h and w take turns pair by pair (${counts[0]} pairs with t, ${counts[1]} with h, ` +
    `${counts[2]} with w), so each axis has fast and slow frequencies.`;
}

export function setupMrope(pe) {
  const form = document.getElementById('mrope-controls');
  const errorEl = document.getElementById('mrope-error');
  const call = document.getElementById('mrope-call');
  const table = document.getElementById('mrope-table');
  const summary = document.getElementById('mrope-summary');
  const grids = document.getElementById('mrope-grids');
  const pairsEl = document.getElementById('mrope-pairs');
  const pairsSummary = document.getElementById('mrope-pairs-summary');
  const pairsKey = document.getElementById('mrope-pairs-key');
  form.model.replaceChildren(...VL_MODELS.map((m, i) => el('option', { value: String(i), text: m.name })));
  const axesCache = new Map(); // model index -> { axes, text }

  function options() {
    const media = form.media.value;
    const timed = media === 'video' && VL_MODELS[Number(form.model.value)].config.model_type !== 'qwen2_vl';
    // the frame count and the time only where they apply (hidden, they are out of the tab order)
    form.t.closest('label').hidden = media !== 'video';
    form.seconds.closest('label').hidden = !timed;
    return {
      media,
      before: intValue(form.before, 0),
      after: intValue(form.after, 0),
      h: intValue(form.h, 2),
      w: intValue(form.w, 3),
      t: intValue(form.t, 2),
      seconds: Math.min(Math.max(Number(form.seconds.value) || 0, 0), 8),
    };
  }

  function drawPairs(index) {
    let entry = axesCache.get(index);
    if (!entry) {
      const rot = pe.rotary({ config: VL_MODELS[index].config });
      try {
        const axes = pairAxes(rot);
        entry = { axes, text: axesText(axes, rot), section: [...rot.mropeSection] };
      } finally {
        rot.dispose();
      }
      axesCache.set(index, entry);
    }
    pairsEl.replaceChildren(...Array.from(entry.axes, (a, i) => el('span', { class: `axis-${AXES[a]}`, title: `pair ${i}: ${AXES[a]}` })));
    pairsEl.style.gridTemplateColumns = `repeat(${entry.axes.length}, minmax(0, 1fr))`;
    pairsEl.setAttribute('aria-label', entry.text);
    pairsEl.dataset.axes = Array.from(entry.axes, (a) => AXES[a]).join('');
    pairsKey.replaceChildren(...AXES.map((a) => el('span', {}, el('span', { class: `swatch axis-${a}`, 'aria-hidden': 'true' }), `with ${a}`)));
    pairsSummary.textContent = entry.text;
  }

  function update() {
    const index = Number(form.model.value);
    const vl = VL_MODELS[index];
    const o = options();
    const prompt = buildPrompt(vl, o);
    const { positions, ropeDelta } = ropeIndex(vl.config, prompt.options);
    const L = prompt.tokens.length;
    const rows = [0, 1, 2].map((a) => positions.subarray(a * L, (a + 1) * L));
    const next = L + ropeDelta;
    // the table: a column per token, rows token / index / t / h / w, and the next (generated) token
    const head = el('tr', {}, el('th', { scope: 'col', text: 'token' }),
      ...prompt.tokens.map((tk) => el('th', { scope: 'col', class: tk.kind, text: tk.label, ...(tk.title && { title: tk.title }) })),
      el('th', { scope: 'col', class: 'next', text: 'next', title: 'the first generated token' }));
    const index0 = el('tr', {}, el('th', { scope: 'row', text: 'index' }),
      ...prompt.tokens.map((tk, i) => el('td', { class: tk.kind, text: String(i) })),
      el('td', { class: 'next', text: String(L) }));
    const body = rows.map((row, a) => el('tr', { 'data-axis': AXES[a] }, el('th', { scope: 'row', text: AXES[a] }),
      ...prompt.tokens.map((tk, i) => {
        // a jump: the position is not one more than the token before's on this axis
        const jump = i > 0 && row[i] !== row[i - 1] + 1 && tk.kind !== 'vision';
        return el('td', { class: `${tk.kind}${jump ? ' jump' : ''}`, text: String(row[i]) });
      }),
      el('td', { class: 'next', text: String(next) })));
    table.replaceChildren(
      el('caption', { text: `ropeIndex(config, …).positions: the t row, then h, then w (${L} tokens)` }),
      el('thead', {}, head),
      el('tbody', {}, index0, ...body),
    );
    const max = Math.max(...positions);
    Object.assign(summary.dataset, {
      length: String(L),
      t: rows[0].join(' '),
      h: rows[1].join(' '),
      w: rows[2].join(' '),
      delta: String(ropeDelta),
      model: vl.config.model_type,
    });
    summary.textContent =
      `ropeDelta = ${ropeDelta}: the ${L} tokens of the prompt reach position ${max} at most, so the first generated ` +
      `token goes to ${max} + 1 = ${L} + (${ropeDelta}) = ${next} on t, h and w alike, the next to ${next + 1}, and so on ` +
      `(decoding: position = cache position + ropeDelta).`;
    const gridKey = o.media === 'video' ? 'videoGridThw' : 'imageGridThw';
    const extra = prompt.options.secondPerGridTs ? `, secondPerGridTs: [${prompt.options.secondPerGridTs}]` : '';
    // HF's current get_rope_index moves the text on by the grid's longer side only: a video's t can run past it
    const firstVision = prompt.tokens.findIndex((tk) => tk.kind === 'vision');
    const start = rows[0][firstVision];
    let lastT = start;
    prompt.tokens.forEach((tk, i) => { if (tk.kind === 'vision') lastT = Math.max(lastT, rows[0][i]); });
    const side = Math.max(o.h, o.w);
    const overrun = !prompt.perFrameRuns && lastT - start > side - 1
      ? ` The text after the video goes on from ${start} + max(h, w) = ${start + side}, below its last frame's t ${lastT}: ` +
        'Hugging Face\'s current get_rope_index moves on by the grid\'s longer side only.'
      : '';
    call.textContent =
      `ropeIndex(config, { inputIds: ${idsText(prompt.tokens)}, ${gridKey}: [[${prompt.grid[0].join(', ')}]]${extra} }): ` +
      `[t, h, w] = [${prompt.grid[0].join(', ')}] patches, ${o.h} x ${o.w} tokens per frame after the ` +
      `${prompt.merge} x ${prompt.merge} merge.` +
      (prompt.perFrameRuns ? ' Qwen3-VL puts each frame in its own run after a timestamp (one token here; the tokenizer makes several): the time is in the text, and each frame starts its own t.' : '') +
      (extra ? ` Qwen2.5-VL: frame f is at t = start + f x tokens_per_second (${vl.config.vision_config.tokens_per_second}) x ${o.seconds} s.` : '') +
      overrun;
    // the vision tokens on their grid, one grid per frame
    const frames = new Map();
    prompt.tokens.forEach((tk, i) => {
      if (tk.kind !== 'vision') return;
      if (!frames.has(tk.frame)) frames.set(tk.frame, []);
      frames.get(tk.frame).push(el('span', { title: `${tk.title}: (t, h, w) = (${rows[0][i]}, ${rows[1][i]}, ${rows[2][i]})`, text: `${rows[0][i]},${rows[1][i]},${rows[2][i]}` }));
    });
    grids.replaceChildren(...[...frames].map(([f, cells]) => {
      const grid = el('div', { class: 'mrope-grid', role: 'img', 'aria-label': `frame ${f}: ${o.h} rows of ${o.w} tokens, each labelled t,h,w` }, ...cells);
      grid.style.gridTemplateColumns = `repeat(${o.w}, auto)`;
      return el('figure', {}, grid, el('figcaption', { text: frames.size > 1 ? `frame ${f}` : `${o.h} x ${o.w} tokens` }));
    }));
    drawPairs(index);
  }

  const scheduled = perFrame(() => guarded(errorEl, update));
  form.addEventListener('input', scheduled);
  form.addEventListener('change', scheduled);
  form.addEventListener('submit', (e) => e.preventDefault());
  document.getElementById('mrope-readme').addEventListener('click', () => {
    for (const [name, value] of Object.entries(README_EXAMPLE)) form[name].value = String(value);
    guarded(errorEl, update);
  });
  guarded(errorEl, update);
}
