// Issue 26: the demo page and threads, in Debian's Chromium through playwright-core, against the
// built site (web/dist: `npx vite build web`) served twice:
//   - with the cross-origin isolation headers (web/isolation.js), as Vite's dev and preview servers
//     send them: the page is crossOriginIsolated; its header names the build that runs (pe.simd)
//     and its one thread (pe.threads), and that N threads are available; the threaded build is not
//     fetched until section 6's "1 thread against N" runs; that comparison loads it in the
//     benchmark Worker, checks the N-thread results are the bits of one thread, and shows finite
//     medians and ratios (no timing thresholds: the machine is shared);
//   - without them: the page works on one thread, and the header and section 6 say why.
// Run alone with
//   node --test --test-reporter=spec tests/e2e/threads.test.mjs
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../browser/launch.mjs';
import { openDemo, serveDemo } from './page.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const site = join(root, 'web', 'dist');
const THREADED_FILE = /\/posenc_threads(\.worker)?-[\w-]+\.(js|mjs|wasm)$/;

let browser;
const problems = []; // console errors, page and worker errors, failed requests, HTTP errors

/** What the page itself knows, found independently of the demo's code: cross-origin isolation,
 * SharedArrayBuffer, the N the issue asks for (min(4, hardwareConcurrency), at least 2), and wasm
 * SIMD support (a v128 module validated here, the probe of the wasm-feature-detect package). */
function pageFacts(p) {
  return p.evaluate(() => ({
    isolated: globalThis.crossOriginIsolated === true,
    sharedArrayBuffer: typeof SharedArrayBuffer === 'function',
    cores: navigator.hardwareConcurrency,
    n: Math.max(2, Math.min(4, navigator.hardwareConcurrency || 2)),
    simd: WebAssembly.validate(new Uint8Array([
      0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
    ])),
  }));
}

const dataset = (p, selector) => p.locator(selector).evaluate((e) => ({ ...e.dataset }));

before(async () => {
  assert.ok(statSync(join(site, 'index.html')).isFile(), 'web/dist/index.html missing: run `npx vite build web` first');
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

describe('cross-origin isolated page (the headers of Vite\'s dev and preview servers)', () => {
  let server;
  let page;
  const requests = [];
  before(async () => {
    server = await serveDemo(site);
    // context-level, from the first request on: also those of the page's workers and nested workers
    const onContext = (context) => context.on('request', (req) => requests.push(req.url()));
    page = await openDemo(browser, server.url, { label: 'isolated', problems, ready: ['body[data-ready="true"]'], onContext });
  });
  after(async () => {
    await page?.context().close();
    await server?.close();
  });

  test('the server sends COOP and COEP, and the page is cross-origin isolated', async () => {
    const res = await page.request.get(server.url);
    assert.equal(res.headers()['cross-origin-opener-policy'], 'same-origin');
    assert.equal(res.headers()['cross-origin-embedder-policy'], 'require-corp');
    const facts = await pageFacts(page);
    console.log(`  ${JSON.stringify(facts)}`);
    assert.equal(facts.isolated, true);
    assert.equal(facts.sharedArrayBuffer, true);
  });

  test('the header shows the build that runs, its one thread, and that N threads are available', async () => {
    const facts = await pageFacts(page);
    const info = await dataset(page, '#build-info');
    const text = await page.locator('#build-info').innerText();
    console.log(`  header: "${text}" ${JSON.stringify(info)}`);
    assert.equal(info.simd, String(facts.simd));
    assert.match(text, facts.simd ? /^wasm SIMD build, / : /^wasm baseline build/);
    // the page's own instance stays on one thread: threads are for section 6's comparison
    assert.equal(info.threads, '1');
    assert.match(text, /, 1 thread; /);
    assert.equal(info.isolated, 'true');
    assert.equal(info.threadsAvailable, String(facts.simd ? facts.n : 1));
    assert.ok(Number(info.threadsAvailable) > 1, 'an isolated page with wasm SIMD has threads');
    assert.match(text, new RegExp(`cross-origin isolated, so section 6 also runs it on ${facts.n} threads`));
    // section 6 is ready to compare, and says with how many
    assert.equal(await page.locator('#speed-threads-run').isDisabled(), false);
    assert.equal(await page.locator('#speed-threads-controls').getAttribute('data-threads'), String(facts.n));
    assert.equal(await page.locator('#speed-threads-n').innerText(), `${facts.n} threads, median ms`);
    assert.match(await page.locator('#speed-threads-note').innerText(), new RegExp(`cross-origin isolated: the comparison runs 1 thread against ${facts.n} `));
  });

  test('the threaded build is not fetched before the comparison runs', () => {
    // from the page's first request until every section is set up (body ready)
    assert.ok(requests.some((u) => /\/posenc_simd-[\w-]+\.wasm$/.test(new URL(u).pathname)), 'the page fetched no SIMD build: requests not seen?');
    const threaded = requests.filter((u) => THREADED_FILE.test(new URL(u).pathname));
    assert.deepEqual(threaded, []);
  });

  test('6 speed, 1 thread against N: runs in the worker and shows finite medians and ratios', async () => {
    const facts = await pageFacts(page);
    const before = requests.length;
    await page.locator('#speed-threads-run').scrollIntoViewIfNeeded();
    // the longest gap between frames on the page meanwhile (printed: the main thread only adds rows)
    await page.evaluate(() => {
      window.__gap = { max: 0, last: performance.now(), on: true };
      const tick = (now) => {
        window.__gap.max = Math.max(window.__gap.max, now - window.__gap.last);
        window.__gap.last = now;
        if (window.__gap.on) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await page.locator('#speed-threads-run').click();
    assert.equal(await page.locator('#speed-threads-run').isDisabled(), true, 'the button is disabled while it runs');
    assert.equal(await page.locator('#speed-run').isDisabled(), true, 'the other benchmark waits meanwhile');
    await page.waitForSelector('#speed-threads-status[data-state="done"], #speed-threads-status[data-state="error"]', { timeout: 180_000 });
    const status = await page.locator('#speed-threads-status').innerText();
    const gap = await page.evaluate(() => {
      window.__gap.on = false;
      return window.__gap.max;
    });
    console.log(`  status: ${status}; longest frame gap on the page meanwhile ${gap.toFixed(0)} ms`);
    assert.equal(await page.locator('#speed-threads-status').getAttribute('data-state'), 'done', status);
    assert.equal(await page.locator('#speed-threads-run').isDisabled(), false);
    assert.equal(await page.locator('#speed-run').isDisabled(), false);

    // what the worker's instances reported: the one-thread SIMD build, and the threaded one with N
    const form = await dataset(page, '#speed-threads-controls');
    assert.deepEqual({ simd: form.simd, one: form.oneThread, many: form.manyThreads }, { simd: 'true', one: '1', many: String(facts.n) });

    const rows = await page.locator('#speed-threads-table tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({ ...tr.dataset, cells: [...tr.children].map((td) => td.textContent) })));
    assert.deepEqual(rows.map((r) => r.kind), ['encode', 'addTo', 'rope', 'rope-f16']);
    assert.deepEqual(rows.map((r) => r.cells[0]), ['encode 100000 x 512 into out', 'addTo 8192 x 1024', 'rot.apply [2048, 32, 128]', 'rot.apply [2048, 32, 128] float16']);
    for (const r of rows) {
      const [task, ms1, msN, ratio, speedup] = r.cells;
      console.log(`  ${task.padEnd(30)} 1 thread ${ms1.padStart(7)} ms   ${r.threads} threads ${msN.padStart(7)} ms   ${ratio} (${speedup}), ${r.runs} runs each`);
      assert.equal(r.threads, String(facts.n));
      assert.equal(r.sameBits, 'true', `${task}: N threads gave other bits than 1 thread`);
      assert.ok(Number(r.runs) >= 5, `${task}: ${r.runs} timed runs`);
      for (const [name, v] of [['1 thread ms', ms1], ['N threads ms', msN], ['ratio', ratio]]) {
        assert.ok(Number.isFinite(Number(v)) && Number(v) > 0, `${task}: ${name} is "${v}"`);
      }
      assert.match(speedup, /^\d+\.\d\dx$/);
      // the shown ratio is the shown medians' ratio (to the rounding of the shown digits)
      assert.ok(Math.abs(Number(ratio) - Number(msN) / Number(ms1)) < 0.02 + 0.06 * Number(ratio), `${task}: ${ratio} vs ${msN} / ${ms1}`);
    }

    // the comparison fetched the threaded build: its glue, its pool worker script and its .wasm
    const fetched = requests.slice(before).map((u) => new URL(u).pathname).filter((p) => THREADED_FILE.test(p));
    console.log(`  fetched for the comparison: ${[...new Set(fetched)].map((p) => p.split('/').pop()).join(', ')}`);
    assert.ok(fetched.some((p) => p.endsWith('.wasm')), 'no posenc_threads .wasm fetched');
    assert.ok(fetched.some((p) => /posenc_threads\.worker-/.test(p)), 'no pool worker script fetched');
    assert.ok(fetched.some((p) => /posenc_threads-[\w-]+\.js$/.test(p)), 'no threaded glue fetched');
  });
});

describe('the page NOT cross-origin isolated (served without the headers)', () => {
  let server;
  let page;
  before(async () => {
    server = await serveDemo(site, { isolated: false });
    page = await openDemo(browser, server.url, { label: 'not isolated', problems, ready: ['body[data-ready="true"]'] });
  });
  after(async () => {
    await page?.context().close();
    await server?.close();
  });

  test('falls back to one thread, and the header and section 6 say why', async () => {
    const res = await page.request.get(server.url);
    assert.equal(res.headers()['cross-origin-opener-policy'], undefined);
    assert.equal(res.headers()['cross-origin-embedder-policy'], undefined);
    const facts = await pageFacts(page);
    console.log(`  ${JSON.stringify(facts)}`);
    assert.equal(facts.isolated, false);

    const info = await dataset(page, '#build-info');
    const text = await page.locator('#build-info').innerText();
    console.log(`  header: "${text}"`);
    assert.deepEqual(info, { simd: String(facts.simd), threads: '1', isolated: 'false', threadsAvailable: '1' });
    assert.match(text, /, 1 thread; not cross-origin isolated, so no threads here$/);

    assert.equal(await page.locator('#speed-threads-run').isDisabled(), true);
    assert.equal(await page.locator('#speed-threads-status').getAttribute('data-state'), 'unavailable');
    assert.equal(await page.locator('#speed-threads-status').innerText(), 'threads unavailable here');
    const note = await page.locator('#speed-threads-note').innerText();
    console.log(`  section 6: "${note}"`);
    assert.match(note, /^This page is not cross-origin isolated \(it is served without the headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp\)/);
    assert.match(note, /posenc runs on one thread\.$/);
    assert.equal(await page.locator('#speed-threads-table tbody tr').count(), 0);
    // the rest of section 6 still runs here
    assert.equal(await page.locator('#speed-run').isDisabled(), false);
  });
});

test('no console errors, page errors or failed requests on either page', () => {
  assert.deepEqual(problems, []);
});
