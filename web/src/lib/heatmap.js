// A canvas heatmap with axes, a colour bar and a (row, col, value) readout under the pointer or a
// keyboard cursor. Pixels are written once per redraw into an ImageData at data resolution (one
// pixel per cell, through a 1024-entry colour lookup table) and scaled by drawImage, so a
// 2048 x 512 table redraws in a few milliseconds.
import { themeColor, onThemeChange } from './theme.js';

const LUT_SIZE = 1024;

const luts = new WeakMap(); // interpolator -> its lookup table (sections share d3's interpolators)

/** [r, g, b] of the CSS colours d3's interpolators return ("rgb(r, g, b)" or "#rrggbb"), else null. */
function parseColor(css) {
  const m = /^rgb\((\d+), ?(\d+), ?(\d+)\)$/.exec(css);
  if (m) return [Number(m[1]), Number(m[2]), Number(m[3])];
  const h = /^#([0-9a-f]{6})$/i.exec(css);
  if (h) return [0, 2, 4].map((i) => parseInt(h[1].slice(i, i + 2), 16));
  return null;
}

/**
 * A Uint32 (ABGR little-endian) lookup table sampling a d3 interpolator on [0, 1]. d3's colours
 * are parsed here; any other CSS colour goes through a canvas (1024 fillRects and a readback:
 * several ms per heatmap, which the page's start-up felt).
 */
function makeLut(interpolator) {
  const cached = luts.get(interpolator);
  if (cached) return cached;
  const lut = new Uint32Array(LUT_SIZE);
  const bytes = new Uint8Array(lut.buffer);
  let parsed = true;
  for (let i = 0; i < LUT_SIZE && parsed; i++) {
    const rgb = parseColor(interpolator(i / (LUT_SIZE - 1)));
    if (rgb) bytes.set([...rgb, 255], i * 4);
    else parsed = false;
  }
  if (!parsed) {
    const probe = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
    probe.canvas.width = LUT_SIZE;
    probe.canvas.height = 1;
    for (let i = 0; i < LUT_SIZE; i++) {
      probe.fillStyle = interpolator(i / (LUT_SIZE - 1));
      probe.fillRect(i, 0, 1, 1);
    }
    bytes.set(probe.getImageData(0, 0, LUT_SIZE, 1).data);
  }
  luts.set(interpolator, lut);
  return lut;
}

/** About `count` round tick values covering [0, n - 1] (cell indices). */
export function ticks(n, count) {
  if (n <= 1) return [0];
  const raw = (n - 1) / Math.max(count, 1);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag);
  const out = [];
  for (let v = 0; v <= n - 1; v += step) out.push(v);
  return out;
}

export class Heatmap {
  #strip = null; // the colour bar's gradient (#barStrip)

  /**
   * @param {HTMLElement} container
   * @param {{ interpolator: (t: number) => string, rowName: string, colName: string, label: string,
   *           readout: HTMLOutputElement, height?: number, format?: (v: number) => string,
   *           rowValue?: (r: number) => number, colValue?: (c: number) => number }} options
   *   rows run down the y axis and cols across, unless setData is given transpose: true.
   */
  constructor(container, options) {
    this.opts = { height: 320, format: (v) => v.toFixed(7), ...options };
    this.lut = makeLut(options.interpolator);
    container.classList.add('heatmap');
    const wrap = document.createElement('div');
    wrap.className = 'heatmap-wrap';
    this.canvas = document.createElement('canvas');
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', options.label);
    this.canvas.setAttribute('aria-describedby', options.readout.id);
    this.bar = document.createElement('canvas');
    this.bar.className = 'colorbar';
    this.bar.setAttribute('role', 'img');
    wrap.append(this.canvas, this.bar);
    container.replaceChildren(wrap);
    this.container = container;
    this.cells = document.createElement('canvas'); // data resolution, off screen
    this.cursor = null; // { r, c } in data coordinates
    this.data = null;
    this.margin = { left: options.marginLeft ?? 52, right: 8, top: 8, bottom: options.marginBottom ?? 40 };

    this.canvas.addEventListener('pointermove', (e) => this.#pointer(e));
    this.canvas.addEventListener('pointerdown', (e) => this.#pointer(e));
    this.canvas.addEventListener('pointerleave', () => this.#setCursor(null, false));
    this.canvas.addEventListener('keydown', (e) => this.#key(e));
    this.canvas.addEventListener('focus', () => {
      if (!this.cursor && this.data) this.#setCursor({ r: 0, c: 0 }, true);
    });
    new ResizeObserver(() => this.redraw()).observe(container);
    onThemeChange(() => this.redraw());
  }

  /**
   * @param {Float32Array} values rows x cols, row-major
   * @param {{ rows: number, cols: number, min: number, max: number, transpose?: boolean }} shape
   */
  setData(values, { rows, cols, min, max, transpose = false }) {
    this.data = { values, rows, cols, min, max, transpose };
    const w = transpose ? rows : cols;
    const h = transpose ? cols : rows;
    if (this.cells.width !== w || this.cells.height !== h) {
      this.cells.width = w;
      this.cells.height = h;
    }
    const ctx = this.cells.getContext('2d');
    const image = ctx.createImageData(w, h);
    const px = new Uint32Array(image.data.buffer);
    const lut = this.lut;
    const k = (LUT_SIZE - 1) / (max - min || 1);
    if (!transpose) {
      for (let i = 0, n = rows * cols; i < n; i++) {
        let t = ((values[i] - min) * k) | 0;
        px[i] = lut[t < 0 ? 0 : t >= LUT_SIZE ? LUT_SIZE - 1 : t];
      }
    } else {
      // pixel (x = r, y = c) = values[r * cols + c]: a transpose, done in 32 x 32 tiles so reads
      // and writes both stay in cache (3-4x faster than a plain double loop at 2048 x 512)
      const T = 32;
      for (let r0 = 0; r0 < rows; r0 += T) {
        const r1 = Math.min(r0 + T, rows);
        for (let c0 = 0; c0 < cols; c0 += T) {
          const c1 = Math.min(c0 + T, cols);
          for (let r = r0; r < r1; r++) {
            const base = r * cols;
            for (let c = c0; c < c1; c++) {
              let t = ((values[base + c] - min) * k) | 0;
              px[c * rows + r] = lut[t < 0 ? 0 : t >= LUT_SIZE ? LUT_SIZE - 1 : t];
            }
          }
        }
      }
    }
    ctx.putImageData(image, 0, 0);
    if (this.cursor && (this.cursor.r >= rows || this.cursor.c >= cols)) this.cursor = null;
    this.redraw();
    if (this.cursor) this.#emit();
  }

  /** Plot-area geometry in CSS pixels, for tests and pointer mapping. `size`: the canvas's CSS
   * size when the caller knows it (redraw sets it), else it is read from the layout. */
  geometry(size = { width: this.canvas.clientWidth, height: this.canvas.clientHeight }) {
    const { left, right, top, bottom } = this.margin;
    const width = size.width - left - right;
    const height = size.height - top - bottom;
    return { left, top, width, height };
  }

  redraw() {
    // One read of the layout, before any write: sections draw several heatmaps in a row, and a
    // read after a write would lay the page out again for each (the start-up felt it).
    const cssWidth = Math.max(this.container.clientWidth - 76, 120);
    const cssHeight = this.opts.height;
    const dpr = window.devicePixelRatio || 1;
    const c = this.canvas;
    if (c.width !== Math.round(cssWidth * dpr) || c.height !== Math.round(cssHeight * dpr)) {
      c.width = Math.round(cssWidth * dpr);
      c.height = Math.round(cssHeight * dpr);
      c.style.width = `${cssWidth}px`;
      c.style.height = `${cssHeight}px`;
    }
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssWidth, cssHeight);
    if (!this.data) return;
    const g = this.geometry({ width: cssWidth, height: cssHeight });
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.cells, g.left, g.top, g.width, g.height);
    this.#axes(ctx, g, cssHeight);
    this.#cursorBox(ctx, g);
    this.#colorBar(cssHeight, dpr);
    const d = this.data;
    c.dataset.plot = JSON.stringify({ ...g, xCells: this.cells.width, yCells: this.cells.height, transpose: d.transpose });
  }

  #axes(ctx, g, cssHeight) {
    const d = this.data;
    const { rowName, colName } = this.opts;
    const xName = d.transpose ? rowName : colName;
    const yName = d.transpose ? colName : rowName;
    const xCells = this.cells.width;
    const yCells = this.cells.height;
    const xValue = d.transpose ? this.opts.rowValue : this.opts.colValue;
    const yValue = d.transpose ? this.opts.colValue : this.opts.rowValue;
    ctx.fillStyle = themeColor('--fg');
    ctx.strokeStyle = themeColor('--muted');
    ctx.font = '12px system-ui, sans-serif';
    ctx.lineWidth = 1;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    // every cell gets a label when there is room; labels wider than a cell are slanted
    const allX = xCells * 28 <= g.width;
    const xLabels = (allX ? [...Array(xCells).keys()] : ticks(xCells, Math.max(2, Math.floor(g.width / 60))))
      .map((v) => [v, String(xValue ? xValue(v) : v)]);
    const slant = xLabels.some(([, t]) => ctx.measureText(t).width > (g.width / xLabels.length) - 4);
    for (const [v, text] of xLabels) {
      const x = g.left + ((v + 0.5) / xCells) * g.width;
      ctx.beginPath();
      ctx.moveTo(x, g.top + g.height);
      ctx.lineTo(x, g.top + g.height + 4);
      ctx.stroke();
      if (slant) {
        ctx.save();
        ctx.translate(x, g.top + g.height + 6);
        ctx.rotate(-Math.PI / 4);
        ctx.textAlign = 'right';
        ctx.textBaseline = 'middle';
        ctx.fillText(text, 0, 0);
        ctx.restore();
      } else ctx.fillText(text, x, g.top + g.height + 6);
    }
    ctx.textAlign = 'right';
    ctx.textBaseline = 'bottom';
    ctx.fillText(xName, g.left + g.width, cssHeight - 2);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const v of yCells * 15 <= g.height ? [...Array(yCells).keys()] : ticks(yCells, Math.max(2, Math.floor(g.height / 40)))) {
      const y = g.top + ((v + 0.5) / yCells) * g.height;
      ctx.beginPath();
      ctx.moveTo(g.left - 4, y);
      ctx.lineTo(g.left, y);
      ctx.stroke();
      ctx.fillText(String(yValue ? yValue(v) : v), g.left - 6, y);
    }
    ctx.save();
    ctx.translate(12, g.top + g.height / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.fillText(yName, 0, 0);
    ctx.restore();
  }

  #cursorBox(ctx, g) {
    if (!this.cursor) return;
    const d = this.data;
    const x = d.transpose ? this.cursor.r : this.cursor.c;
    const y = d.transpose ? this.cursor.c : this.cursor.r;
    const cw = g.width / this.cells.width;
    const ch = g.height / this.cells.height;
    ctx.strokeStyle = themeColor('--fg');
    ctx.lineWidth = 1.5;
    ctx.strokeRect(g.left + x * cw - 1, g.top + y * ch - 1, Math.max(cw, 3) + 2, Math.max(ch, 3) + 2);
  }

  #colorBar(cssHeight, dpr) {
    const b = this.bar;
    const w = 64;
    b.width = w * dpr;
    b.height = cssHeight * dpr;
    b.style.width = `${w}px`;
    b.style.height = `${cssHeight}px`;
    const ctx = b.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, cssHeight);
    const top = this.margin.top;
    const h = cssHeight - this.margin.top - this.margin.bottom;
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.#barStrip(h), 4, top, 14, h);
    const { min, max } = this.data;
    ctx.fillStyle = themeColor('--fg');
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'left';
    const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Number(v.toPrecision(3)).toString());
    for (const t of [0, 0.25, 0.5, 0.75, 1]) {
      const v = min + t * (max - min);
      ctx.fillText(fmt(v), 22, top + (1 - t) * (h - 1));
    }
    b.setAttribute('aria-label', `colour bar from ${fmt(min)} to ${fmt(max)}`);
  }

  /** The colour bar's gradient, h px high and 1 wide, top = max: one pixel per row from the LUT. */
  #barStrip(h) {
    if (this.#strip?.height === h) return this.#strip;
    const strip = document.createElement('canvas');
    strip.width = 1;
    strip.height = h;
    const ctx = strip.getContext('2d');
    const image = ctx.createImageData(1, h);
    const px = new Uint32Array(image.data.buffer);
    for (let y = 0; y < h; y++) px[y] = this.lut[Math.round((1 - y / Math.max(h - 1, 1)) * (LUT_SIZE - 1))];
    ctx.putImageData(image, 0, 0);
    this.#strip = strip;
    return strip;
  }

  #pointer(e) {
    if (!this.data) return;
    const rect = this.canvas.getBoundingClientRect();
    const g = this.geometry();
    const fx = (e.clientX - rect.left - g.left) / g.width;
    const fy = (e.clientY - rect.top - g.top) / g.height;
    if (fx < 0 || fx >= 1 || fy < 0 || fy >= 1) return;
    const x = Math.floor(fx * this.cells.width);
    const y = Math.floor(fy * this.cells.height);
    this.#setCursor(this.data.transpose ? { r: x, c: y } : { r: y, c: x }, true);
  }

  #key(e) {
    if (!this.data) return;
    const step = e.shiftKey ? 10 : 1;
    const d = this.data;
    const cur = this.cursor ?? { r: 0, c: 0 };
    // arrows move on screen: left/right along the x axis, up/down along y
    const dx = { ArrowLeft: -step, ArrowRight: step }[e.key] ?? 0;
    const dy = { ArrowUp: -step, ArrowDown: step }[e.key] ?? 0;
    if (!dx && !dy) return;
    e.preventDefault();
    const dr = d.transpose ? dx : dy;
    const dc = d.transpose ? dy : dx;
    const clamp = (v, n) => Math.min(Math.max(v, 0), n - 1);
    this.#setCursor({ r: clamp(cur.r + dr, d.rows), c: clamp(cur.c + dc, d.cols) }, true);
  }

  #setCursor(cursor, show) {
    const same = cursor && this.cursor && cursor.r === this.cursor.r && cursor.c === this.cursor.c;
    if (same) return;
    if (!cursor && !show) return; // keep the last reading when the pointer leaves
    this.cursor = cursor;
    this.redraw();
    this.#emit();
  }

  #emit() {
    const { r, c } = this.cursor;
    const d = this.data;
    const value = d.values[r * d.cols + c];
    const out = this.opts.readout;
    const rv = this.opts.rowValue ? this.opts.rowValue(r) : r;
    const cv = this.opts.colValue ? this.opts.colValue(c) : c;
    out.dataset.row = String(rv);
    out.dataset.col = String(cv);
    out.dataset.value = String(value);
    out.textContent = `${this.opts.rowName} ${rv}, ${this.opts.colName} ${cv}: ${this.opts.format(value)}`;
  }
}
