// Colours come from CSS custom properties (style.css), which follow prefers-color-scheme; canvas
// and uPlot drawings read them here and redraw when the scheme changes.
const listeners = new Set();
const media = window.matchMedia('(prefers-color-scheme: dark)');
media.addEventListener('change', () => listeners.forEach((fn) => fn()));

/** The current value of a CSS custom property on :root, e.g. themeColor('--fg'). */
export function themeColor(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

/** Calls fn whenever the colour scheme changes. */
export function onThemeChange(fn) {
  listeners.add(fn);
}
