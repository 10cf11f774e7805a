// Small helpers shared by the sections: reading form values, showing errors inline, presets.

/** Runs fn; on an exception shows its message in `errorEl` (role=alert) instead of throwing. */
export function guarded(errorEl, fn) {
  try {
    const result = fn();
    errorEl.hidden = true;
    errorEl.textContent = '';
    return result;
  } catch (err) {
    errorEl.hidden = false;
    errorEl.textContent = err instanceof Error ? err.message : String(err);
    return undefined;
  }
}

/** Integer value of a number input, clamped into its min/max, or the fallback when empty. */
export function intValue(input, fallback) {
  const v = Math.round(Number(input.value));
  if (input.value === '' || !Number.isFinite(v)) return fallback;
  const min = input.min === '' ? -Infinity : Number(input.min);
  const max = input.max === '' ? Infinity : Number(input.max);
  return Math.min(Math.max(v, min), max);
}

/** Fills a <select> with posenc's presets (the first one, vaswani, selected). */
export function fillPresets(select, presets) {
  select.replaceChildren(
    ...presets.map((p) => {
      const o = document.createElement('option');
      o.value = p.name;
      o.textContent = p.name;
      o.title = p.source;
      return o;
    }),
  );
}

/** The absolute position of row 0 for a preset with offset 0 (fairseq: paddingIdx + 1 = 2). */
export function firstPosition(presets, name) {
  const p = presets.find((x) => x.name === name);
  if (!p) return 0;
  return typeof p.firstPosition === 'number' ? p.firstPosition : 2;
}

/** Calls fn at most once per animation frame, with the latest arguments. */
export function perFrame(fn) {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      fn();
    });
  };
}

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

/**
 * Resolves in a new task, so the browser can paint and handle input in between: long work split
 * by `await yieldToBrowser()` never freezes the page in one long task. scheduler.yield() where
 * there is one (its continuation runs before other queued tasks), else a zero-delay timeout.
 */
export function yieldToBrowser() {
  if (globalThis.scheduler?.yield) return globalThis.scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Calls `start` once, when `element` comes within `margin` px (above or below) of the viewport. */
export function nearViewport(element, start, margin = 800) {
  const observer = new IntersectionObserver((entries) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    observer.disconnect();
    start();
  }, { rootMargin: `${margin}px 0px` });
  observer.observe(element);
}
