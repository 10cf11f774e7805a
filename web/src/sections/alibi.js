// Section 9: ALiBi (issue 13). pe.alibiSlopes(heads) lists the slopes; pe.alibiBias(heads, L, L,
// { mode }) gives every head's query x key bias in one call, drawn as one heatmap per head. The
// causal mask (-Infinity) gets its own colour, outside the colour scale.
import { interpolateViridis } from 'd3-scale-chromatic';
import { Heatmap } from '../lib/heatmap.js';
import { onThemeChange, themeColor } from '../lib/theme.js';
import { el, guarded, intValue, perFrame } from '../lib/util.js';

const MAX_MAPS = 16;

/** A heatmap whose non-finite cells (the causal mask) are painted in `--masked`, not the scale's end. */
class MaskedHeatmap extends Heatmap {
  setData(values, shape) {
    super.setData(values, shape);
    const { rows, cols } = shape;
    const ctx = this.cells.getContext('2d');
    ctx.fillStyle = themeColor('--masked');
    let masked = false;
    // one rectangle per run of masked cells in a row (the causal mask is one run per row)
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; ) {
        if (Number.isFinite(values[r * cols + c])) {
          c++;
          continue;
        }
        const start = c;
        while (c < cols && !Number.isFinite(values[r * cols + c])) c++;
        ctx.fillRect(start, r, c - start, 1);
        masked = true;
      }
    }
    if (masked) this.redraw();
  }
}

/** A slope as the paper writes it: 1/2^k when it is one, else 2^-x with its decimal value. */
export function formatSlope(s) {
  const k = -Math.log2(s);
  const whole = Math.round(k);
  if (Math.abs(k - whole) < 1e-9) return `1/${2 ** whole}`;
  return `2^−${Number(k.toFixed(4))} = ${s.toPrecision(4)}`;
}

export function setupAlibi(pe) {
  const form = document.getElementById('alibi-controls');
  const errorEl = document.getElementById('alibi-error');
  const slopesEl = document.getElementById('alibi-slopes');
  const box = document.getElementById('alibi-heads');
  const readout = document.getElementById('alibi-readout');
  const maps = []; // reused figures: { fig, caption, heatmap }

  function mapFor(h) {
    if (!maps[h]) {
      const caption = el('figcaption');
      const div = el('div', { class: 'heatmap' });
      const fig = el('figure', { 'data-head': String(h + 1) }, caption, div);
      box.append(fig);
      const heatmap = new MaskedHeatmap(div, {
        interpolator: interpolateViridis,
        rowName: `head ${h + 1}: query`,
        colName: 'key',
        label: `ALiBi bias of head ${h + 1}, query by key`,
        readout,
        height: 230,
        marginLeft: 44,
        marginBottom: 34,
        format: (v) => (v === -Infinity ? '−∞ (masked)' : v.toFixed(5)),
      });
      maps[h] = { fig, caption, heatmap };
    }
    return maps[h];
  }

  function update() {
    for (const span of form.querySelectorAll('.val')) span.textContent = ` ${form[span.dataset.for].value}`;
    guarded(errorEl, () => {
      // heads is passed as typed (0 or -3 get the library's message), capped only to keep the maps few
      const heads = Math.min(Math.round(Number(form.heads.value)), Number(form.heads.max));
      const L = intValue(form.length, 32);
      const mode = form.mode.value;
      document.getElementById('alibi-mask-key').hidden = mode !== 'causal';
      const t0 = performance.now();
      const slopes = pe.alibiSlopes(heads);
      const bias = pe.alibiBias(heads, L, L, { mode });
      const t1 = performance.now();
      slopesEl.dataset.slopes = JSON.stringify(Array.from(slopes));
      slopesEl.textContent =
        `pe.alibiSlopes(${heads}): ` + Array.from(slopes, (s, h) => `h${h + 1} ${formatSlope(s)}`).join(' · ');
      const n = L * L;
      const shown = Math.min(heads, MAX_MAPS);
      let sharedMin = 0;
      for (let i = 0; i < shown * n; i++) if (bias[i] < sharedMin && bias[i] !== -Infinity) sharedMin = bias[i];
      for (let h = 0; h < shown; h++) {
        const values = bias.subarray(h * n, (h + 1) * n);
        let min = 0;
        if (form.shared.checked) min = sharedMin;
        else for (let i = 0; i < n; i++) if (values[i] < min && values[i] !== -Infinity) min = values[i];
        const { fig, caption, heatmap } = mapFor(h);
        fig.hidden = false;
        caption.textContent = `head ${h + 1} · slope ${formatSlope(slopes[h])}`;
        heatmap.setData(values, { rows: L, cols: L, min: min < 0 ? min : -1e-6, max: 0 });
      }
      for (let h = shown; h < maps.length; h++) maps[h].fig.hidden = true;
      const t2 = performance.now();
      box.dataset.shown = String(shown);
      slopesEl.dataset.ms = (t1 - t0).toFixed(2);
      slopesEl.title = `alibiSlopes + alibiBias ${(t1 - t0).toFixed(1)} ms, draw ${(t2 - t1).toFixed(1)} ms`;
      if (heads > shown) slopesEl.textContent += ` (maps of the first ${shown} heads below)`;
    });
  }

  const scheduled = perFrame(update);
  onThemeChange(scheduled); // the mask colour is baked into the cells
  form.addEventListener('input', scheduled);
  form.addEventListener('submit', (e) => e.preventDefault());
  form.querySelector('button[data-heads]').addEventListener('click', (e) => {
    form.heads.value = e.currentTarget.dataset.heads;
    update();
  });
  update();
}
