// The demo page's first load (issue 25), measured in Debian's Chromium through playwright-core
// against the built site (web/dist: `npx vite build web`), opened at the top and never scrolled:
//   - what it fetches: every file the page (and any worker) requests until the network is idle,
//     each counted at its gzip -9 size computed here from web/dist (serveDemo sends files
//     uncompressed; gzip -9 is what a compressing server sends, give or take a few bytes of
//     framing), plus the raw sizes;
//   - main-thread long tasks: a PerformanceObserver('longtask') registered by addInitScript,
//     before any of the page's scripts run, so none is missed.
// Every figure is printed; run alone with
//   node --test --test-reporter=spec tests/e2e/first-load.test.mjs
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { launchChromium } from '../browser/launch.mjs';
import { serveDemo, watchPage } from './page.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const site = join(root, 'web', 'dist');

// The README's promise for the first load: under 300 KB gzipped (the same budget as
// demo.test.mjs's static size check, which counts every file but section 11's models). Measured
// (issue 25): 826 KB before, section 11's five models (611 KB) fetched at start; 224 KB after.
const FIRST_LOAD_BUDGET = 300 * 1024;
// Section 11's models: fetched when that section comes near the viewport, never at the top.
const EXTRAPOLATION_MODEL = /(^|\/)(vaswani|rotary|rotary-partial|alibi|none)-[\w-]+\.safetensors$/;
// Chromium reports any main-thread task over 50 ms as a long task; 50 ms cannot be the bound here.
// On this shared 2-core VM (load average 3-4.5 from other builds and browsers while measured) the
// static HTML's first layout and paint alone, with no script at all, runs 75-150 ms, and evaluating
// uPlot (its first Intl.NumberFormat: 50-100 ms) is another such task. Measured (issue 25): before,
// one task of 1.7-2.7 s (section 11's accuracies at start) and one of ~1 s (every section set up in
// one task); after, the longest task of a run about 125 ms (median) and 187 ms (worst) over 32
// runs. The worst runs come within 15-30 ms of 200 ms, too close to hold without flakiness; 250 ms
// keeps a margin over them and still fails any start-up work that is not split into tasks.
const LONG_TASK_CAP_MS = 250;

let browser;
let server;
const problems = [];
let fetched = []; // { path, raw, gz }
let longTasks = []; // { start, duration, name }
let setups = []; // the page's performance.measure entries "setup <section>" (web/src/main.js)

before(async () => {
  assert.ok(statSync(join(site, 'index.html')).isFile(), 'web/dist/index.html missing: run `npx vite build web` first');
  server = await serveDemo(site); // cross-origin isolated, as Vite's servers serve it
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  // Runs in the page before its own scripts: every long task from the first one on is kept.
  await context.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration, name: e.name });
    }).observe({ type: 'longtask', buffered: true });
  });
  const urls = new Set();
  // context-level events also see requests made by the page's workers
  context.on('requestfinished', (req) => urls.add(req.url()));
  const page = await context.newPage();
  watchPage(page, 'page', problems);
  await page.goto(server.url, { waitUntil: 'networkidle', timeout: 60_000 });
  // everything the page sets up at start is done, and one more quiet second for trailing tasks
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60_000 });
  await page.waitForTimeout(1000);
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
  assert.equal(await page.evaluate(() => window.scrollY), 0, 'the page must stay at the top');
  longTasks = await page.evaluate(() => window.__longTasks);
  setups = await page.evaluate(() => performance.getEntriesByType('measure')
    .filter((m) => m.name.startsWith('setup '))
    .map((m) => ({ name: m.name, start: m.startTime, duration: m.duration })));
  await page.goto('about:blank');
  for (const url of urls) {
    const u = new URL(url);
    if (u.origin !== new URL(server.url).origin) continue;
    let path = decodeURIComponent(u.pathname).replace(/^\//, '');
    if (path === '' || path.endsWith('/')) path += 'index.html';
    const bytes = readFileSync(join(site, path));
    fetched.push({ path, raw: bytes.length, gz: gzipSync(bytes, { level: 9 }).length });
  }
  fetched = fetched.sort((a, b) => b.gz - a.gz);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const kb = (n) => (n / 1024).toFixed(1);

test(`first load at the top: at most ${FIRST_LOAD_BUDGET / 1024} KB gzipped`, () => {
  let raw = 0;
  let gz = 0;
  console.log(`  fetched until network idle (${fetched.length} files; gzip -9 of each file of web/dist):`);
  for (const f of fetched) {
    raw += f.raw;
    gz += f.gz;
    console.log(`    ${f.path.padEnd(44)} ${kb(f.raw).padStart(7)} KB  gzip ${kb(f.gz).padStart(6)} KB`);
  }
  console.log(`  total: ${kb(raw)} KB, gzip ${kb(gz)} KB (budget ${FIRST_LOAD_BUDGET / 1024} KB)`);
  assert.ok(fetched.some((f) => f.path.endsWith('.wasm')), 'no .wasm fetched: the page did not start');
  const models = fetched.filter((f) => EXTRAPOLATION_MODEL.test(f.path)).map((f) => f.path);
  assert.deepEqual(models, [], 'section 11\'s models were fetched with the page at the top');
  // the threaded build (issue 26) is fetched by section 6's "1 thread against N" only
  const threaded = fetched.filter((f) => /(^|\/)posenc_threads/.test(f.path)).map((f) => f.path);
  assert.deepEqual(threaded, [], 'the threaded build was fetched at the first load');
  assert.ok(gz <= FIRST_LOAD_BUDGET, `first load ${gz} B gzipped, over ${FIRST_LOAD_BUDGET} B`);
});

test(`no main-thread long task over ${LONG_TASK_CAP_MS} ms while loading at the top`, () => {
  const longest = longTasks.reduce((m, t) => Math.max(m, t.duration), 0);
  const total = longTasks.reduce((s, t) => s + t.duration, 0);
  console.log(`  long tasks (> 50 ms): ${longTasks.length}, longest ${longest.toFixed(0)} ms, total ${total.toFixed(0)} ms`);
  for (const t of longTasks) console.log(`    ${t.duration.toFixed(0).padStart(5)} ms, starting ${t.start.toFixed(0).padStart(6)} ms after navigation (${t.name})`);
  console.log('  section setups (performance.measure; one split into tasks, or waiting on a fetch, spans several):');
  for (const m of setups) console.log(`    ${m.name.padEnd(24)} ${m.duration.toFixed(0).padStart(5)} ms, starting ${m.start.toFixed(0).padStart(6)} ms`);
  assert.ok(longest <= LONG_TASK_CAP_MS, `a long task of ${longest.toFixed(0)} ms (cap ${LONG_TASK_CAP_MS} ms)`);
});

test('no console errors', () => {
  assert.deepEqual(problems, []);
});
