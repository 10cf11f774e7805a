// What the demo page's end-to-end tests share: serving the built site, collecting a page's
// problems, and telling a drawn canvas from a blank one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serveStatic } from '../browser/launch.mjs';
import { CROSS_ORIGIN_ISOLATION_HEADERS } from '../../web/isolation.js';

/**
 * Serves the built demo (web/dist) as Vite's dev and preview servers do: with the cross-origin
 * isolation headers (web/isolation.js), so the page is crossOriginIsolated and section 6 can run
 * threads. `isolated: false` serves it without them (tests/e2e/threads.test.mjs checks that page
 * falls back to one thread).
 */
export function serveDemo(site, { isolated = true } = {}) {
  return serveStatic(site, { headers: isolated ? { ...CROSS_ORIGIN_ISOLATION_HEADERS } : {} });
}

/** Pushes every console error, page error, failed request, HTTP error and worker console error
 * of page `p` onto `problems`, each prefixed with `label`. */
export function watchPage(p, label, problems) {
  p.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`${label} console error: ${msg.text()}`);
  });
  p.on('pageerror', (err) => problems.push(`${label} page error: ${err.message}`));
  p.on('requestfailed', (req) => problems.push(`${label} request failed: ${req.url()} (${req.failure()?.errorText})`));
  p.on('response', (res) => {
    if (res.status() >= 400) problems.push(`${label} HTTP ${res.status()}: ${res.url()}`);
  });
  p.on('worker', (w) => w.on('console', (msg) => msg.type() === 'error' && problems.push(`${label} worker error: ${msg.text()}`)));
}

/** For each canvas matching `selector`: the fraction of its pixels that differ from its first
 * pixel (0 = blank). */
export async function canvasInk(p, selector) {
  return p.$$eval(selector, (canvases) =>
    canvases.map((c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let differ = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i] !== data[0] || data[i + 1] !== data[1] || data[i + 2] !== data[2] || data[i + 3] !== data[3]) differ++;
      }
      return differ / (data.length / 4);
    }),
  );
}

/** The heatmap canvas inside `container` (web/src/lib/heatmap.js, its data-plot geometry), and
 * where cell (row, col) is on the page. */
export async function cellPoint(p, container, row, col) {
  const canvas = p.locator(`${container} canvas:not(.colorbar)`).first();
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const g = JSON.parse(await canvas.getAttribute('data-plot'));
  const [x, y] = g.transpose ? [row, col] : [col, row];
  return { x: box.x + g.left + ((x + 0.5) / g.xCells) * g.width, y: box.y + g.top + ((y + 0.5) / g.yCells) * g.height };
}

/** Moves the pointer over cell (row, col) of the heatmap inside `container`. */
export async function hoverCell(p, container, row, col) {
  const { x, y } = await cellPoint(p, container, row, col);
  await p.mouse.move(x, y);
}

/**
 * A new page of the demo at `url` in a new context of `browser` (1200 x 900 unless `options` say
 * otherwise), watched for problems (watchPage), once every selector in `ready` is there (the
 * sections' data-ready="true" markers). `onContext(context)`, if given, runs before the page opens
 * (e.g. to see every request from the first one on).
 */
export async function openDemo(browser, url, { options = {}, label = 'page', problems, ready, onContext }) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, ...options });
  onContext?.(context);
  const p = await context.newPage();
  watchPage(p, label, problems);
  await p.goto(url);
  for (const selector of ready) await p.waitForSelector(selector, { timeout: 30_000 });
  return p;
}

/** Points at cell (row, col) of a heatmap and returns the number its readout shows. */
export async function readCell(p, container, readoutId, row, col) {
  await hoverCell(p, container, row, col);
  await p.waitForFunction(
    ([id, r, c]) => {
      const d = document.getElementById(id).dataset;
      return d.row === String(r) && d.col === String(c);
    },
    [readoutId, row, col],
  );
  return Number(await p.locator(`#${readoutId}`).getAttribute('data-value'));
}

/** Sets an input or select and fires `input` as a user's drag or typing would, then waits two frames. */
export async function setInput(p, selector, value) {
  await p.locator(selector).evaluate((el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
  await p.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
}

/**
 * Opens the page in the dark scheme and on a narrow screen (open(options, label)), runs
 * before(p, label) (e.g. a choice the views need), checks that the page does not scroll sideways,
 * runs each(p, label) (screenshots) and closes it.
 */
export async function darkAndNarrow(open, each, before = async () => {}) {
  for (const [label, options] of [
    ['dark', { colorScheme: 'dark' }],
    ['narrow', { viewport: { width: 380, height: 800 }, deviceScaleFactor: 2 }],
  ]) {
    const p = await open(options, label);
    await before(p, label);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `${label}: the page scrolls sideways by ${overflow}px`);
    await each(p, label);
    await p.context().close();
  }
}

/**
 * Registers the tests a suite of demo sections ends with: the dark scheme and a narrow screen
 * render `sections` (element ids) without sideways scrolling, each screenshot by shoot(p, id,
 * name); every control in them is labelled (on page(), the suite's open page); and `problems`
 * (console errors, page errors, failed requests) stayed empty. open(options, label) opens a page.
 */
export function sectionChecks({ what, sections, open, shoot, page, problems }) {
  test(`dark scheme and a narrow screen render ${what} without sideways scrolling`, () =>
    darkAndNarrow(open, async (p, label) => {
      for (const id of sections) await shoot(p, id, `${label}-${id}`);
    }));

  test('every new control is labelled', async () => {
    const unlabelled = await page().$$eval(
      sections.map((id) => `#${id} input, #${id} select, #${id} button, #${id} textarea`).join(', '),
      (els) => els.filter((e) => !(e.labels?.length || e.getAttribute('aria-label') || e.textContent.trim())).map((e) => e.outerHTML),
    );
    assert.deepEqual(unlabelled, []);
  });

  test('no console errors and no failed requests', () => {
    assert.deepEqual(problems, []);
  });
}
