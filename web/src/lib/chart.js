// Line charts with uPlot: themed axes, the width of their container, and uPlot's own legend
// (which shows the values under the cursor).
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { schemeTableau10 } from 'd3-scale-chromatic';
import { themeColor, onThemeChange } from './theme.js';

export const palette = schemeTableau10;

function axis(label, splits) {
  return {
    splits,
    label,
    stroke: themeColor('--fg'),
    grid: { stroke: themeColor('--grid'), width: 1 },
    ticks: { stroke: themeColor('--grid'), width: 1 },
    font: '12px system-ui, sans-serif',
    labelFont: '12px system-ui, sans-serif',
  };
}

/**
 * A chart that rebuilds itself (cheaply) when its series change or the theme changes.
 * @param {HTMLElement} container
 * @param {{ xLabel: string, yLabel: string, height?: number, legend?: boolean, title?: string,
 *           yRange?: [number, number], yLog?: boolean, onCursor?: (u: uPlot) => void, points?: boolean }} options
 *   yLog: a log10 y axis (every y value must be positive).
 */
export class LineChart {
  constructor(container, options) {
    this.container = container;
    this.options = { height: 300, legend: true, ...options };
    this.plot = null;
    this.series = null;
    new ResizeObserver(() => this.#resize()).observe(container);
    onThemeChange(() => this.series && this.set(this.series, this.data, true));
  }

  /**
   * @param {{ label: string, color?: string, value?: (u: uPlot, v: number) => string }[]} series y series
   * @param {ArrayLike<number>[]} data [x, y1, y2, ...]
   */
  set(series, data, rebuild = false) {
    const sameShape =
      this.plot && !rebuild && this.series && this.series.length === series.length &&
      this.series.every((s, i) => s.label === series[i].label);
    this.series = series;
    this.data = data;
    if (sameShape) {
      this.plot.setData(data);
      return;
    }
    this.plot?.destroy();
    const o = this.options;
    const opts = {
      title: o.title,
      width: this.#width(),
      height: o.height,
      legend: { show: o.legend, live: true },
      cursor: { drag: { x: false, y: false }, points: { size: 7 } },
      scales: { x: { time: false }, y: o.yLog ? { distr: 3, log: 10 } : o.yRange ? { range: o.yRange } : { auto: true } },
      axes: [axis(o.xLabel), axis(o.yLabel, o.ySplits && (() => o.ySplits))],
      series: [
        { label: o.xLabel, value: (u, v) => (v == null ? '–' : String(v)) },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color ?? palette[i % palette.length],
          width: s.width ?? 1.5,
          dash: s.dash,
          points: { show: o.points ?? false, size: 4 },
          value: s.value ?? ((u, v) => (v == null ? '–' : v.toFixed(6))),
        })),
      ],
      hooks: o.onCursor ? { setCursor: [o.onCursor] } : {},
    };
    if (o.yLog) {
      // powers of ten in short form (1k, 10M): long numbers would not fit beside the axis
      const short = (v) => (v >= 1e9 ? `${v / 1e9}G` : v >= 1e6 ? `${v / 1e6}M` : v >= 1e3 ? `${v / 1e3}k` : String(v));
      opts.axes[1].values = (u, splits) => splits.map((v) => (Number.isInteger(Math.log10(v)) ? short(v) : ''));
      opts.axes[1].size = 56;
    }
    this.plot = new uPlot(opts, data, this.container);
    this.#keyboard();
    if (o.title) this.plot.root.querySelector('.u-title')?.setAttribute('role', 'heading');
  }

  /** The plot area takes focus; left/right arrows (shift: 10 steps) move the cursor along x. */
  #keyboard() {
    const over = this.plot.over;
    over.tabIndex = 0;
    over.setAttribute('role', 'img');
    over.setAttribute('aria-label', `${this.options.title ?? 'line chart'}: use the left and right arrow keys to read values`);
    over.addEventListener('keydown', (e) => {
      const step = { ArrowLeft: -1, ArrowRight: 1, Home: -Infinity, End: Infinity }[e.key];
      if (step === undefined) return;
      e.preventDefault();
      const u = this.plot;
      const n = u.data[0].length;
      const cur = u.cursor.idx;
      const idx = cur == null ? 0 : Math.min(Math.max(cur + (e.shiftKey ? 10 * step : step), 0), n - 1);
      const ys = u.data.slice(1).map((d) => d[idx]).filter((v) => v != null);
      const y = ys.length ? ys[0] : 0;
      u.setCursor({ left: u.valToPos(u.data[0][idx], 'x'), top: u.valToPos(y, 'y') });
    });
    over.addEventListener('focus', () => {
      if (this.plot.cursor.idx == null) over.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight' }));
    });
  }

  #width() {
    return Math.max(this.container.clientWidth, 160);
  }

  #resize() {
    if (this.plot && Math.abs(this.plot.width - this.#width()) > 1) {
      this.plot.setSize({ width: this.#width(), height: this.options.height });
    }
  }
}
