// init({ threads }) in Debian's Chromium (playwright-core): the repository root is served on
// 127.0.0.1 twice, cross-origin isolated (COOP same-origin + COEP require-corp) and not.
// - Isolated: crossOriginIsolated is true, init({ threads: 2 }) from dist/browser.js starts the
//   pool's worker, and every result (big encodes, explicit positions, addTo, concat, a layer's
//   forward with and without causal, rot.apply) is the same bits as Node's single-thread SIMD
//   build; posenc/encoding too; pe.dispose() ends the worker and the instance still computes; and
//   the same from inside a module Web Worker (the pool's workers are then nested workers).
//   threads: 'auto' gives min(4, navigator.hardwareConcurrency) in both entries (and 4, 3, 1, 1
//   when the page reports 8, 3, no and 0 cores).
// - Not isolated: no SharedArrayBuffer, init({ threads: 2 }) rejects with its Error (page and
//   worker), init() runs one thread with the same bits; threads: 'auto' runs one, no error.
// - Isolated, but a pool worker cannot load (its script 404, served without
//   Cross-Origin-Embedder-Policy, forbidden by the page's CSP, or the glue refused to the worker):
//   init({ threads: 3 }) rejects with an Error naming the worker script, the workers it started
//   end, and init({ threads: 1 }) then runs on the same page.
// Results are compared as SHA-256 digests of their bytes (tests/browser/threads-work.mjs, the same
// code in Node and in the browser). Every wait has a timeout: a hang fails a test.
//
//   npm run build && node --test --test-reporter=spec tests/browser/threads.test.mjs
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { watchPage } from '../e2e/page.mjs';
import { BOUND, loadEncodingPackage, loadPackage, maxAbsDiff, oracleTable, root } from '../js/helpers.mjs';
import { launchChromium, serveStatic } from './launch.mjs';
import { computeEncoding, computeMain, digest } from './threads-work.mjs';

const ISOLATION = Object.freeze({ 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });
const THREADS_ERROR =
  'posenc.init: threads > 1 needs SharedArrayBuffer: Node, or a cross-origin isolated page (docs/API.md, "Threads")';
const WAIT = 30_000; // ms for any one thing the page waits for (init, a worker's answer)

// ---- the references: Node, one thread, SIMD ----------------------------------------------------
const nodeMain = await (await loadPackage()).init({ simd: true });
const nodeEncoding = await (await loadEncodingPackage()).init({ simd: true });
const mainResults = computeMain(nodeMain);
const REF = await digest(mainResults);
const REF_ENCODING = await digest(computeEncoding(nodeEncoding));
const REF_SMALL = await digest({ small: nodeMain.encode(5000, 256) });

test('Node references: encode agrees with the float64 oracle; one thread, SIMD', () => {
  assert.equal(nodeMain.threads, 1);
  assert.equal(nodeMain.simd, true);
  const spec = { dim: 512, layout: 'interleaved', frequencies: 'paper', odd: 'paper' };
  const rows = [0, 1, 777, 12345, 19999];
  const got = new Float32Array(rows.length * 512);
  rows.forEach((r, i) => got.set(mainResults.encode.subarray(r * 512, (r + 1) * 512), i * 512));
  assert.ok(maxAbsDiff(got, oracleTable(spec, rows)) <= BOUND);
  // The references differ from each other (a digest of the wrong thing would be noticed).
  assert.equal(new Set(Object.values(REF).map((r) => r.sha256)).size, Object.keys(REF).length);
});

/** Each result's digest is the reference's: same length, same SHA-256 of the bytes. */
function sameDigests(got, want, what) {
  assert.deepEqual(Object.keys(got ?? {}).sort(), Object.keys(want).sort(), `${what}: result names`);
  for (const [name, w] of Object.entries(want)) {
    const g = got[name];
    assert.equal(g.length, w.length, `${what} ${name}: length`);
    assert.equal(g.sha256, w.sha256, `${what} ${name}: not the same bits as Node's single thread (first values ${g.head} vs ${w.head})`);
  }
}

// ---- Chromium ------------------------------------------------------------------------------------
let browser;
const servers = {};
// servers.failing: what it does instead of serving a file (serveStatic's route), set by each test.
let failure;
before(async () => {
  assert.ok(statSync(join(root, 'dist', 'posenc_threads.worker.js')).isFile(), 'dist/ missing: run `npm run build` first');
  servers.isolated = await serveStatic(root, { headers: ISOLATION });
  servers.plain = await serveStatic(root);
  servers.failing = await serveStatic(root, { headers: ISOLATION, route: (pathname) => failure?.(pathname) });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await servers.isolated?.close();
  await servers.plain?.close();
  await servers.failing?.close();
});

/** A fresh page of tests/browser/threads.html on `server`, its problems collected, its workers listed. */
async function openPage(server, label) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = [];
  const workers = [];
  watchPage(page, label, problems);
  page.on('worker', (w) => {
    const entry = { url: new URL(w.url()).pathname, closed: false };
    workers.push(entry);
    w.on('close', () => (entry.closed = true));
  });
  await page.goto(`${server.url}tests/browser/threads.html`);
  return { page, problems, workers, close: () => context.close() };
}

/** The worker scripts of the threaded builds that `workers` (from openPage) started. */
const poolWorkers = (workers) => workers.filter((w) => /\/dist\/posenc(_encoding)?_threads\.worker\.js$/.test(w.url));

describe('a cross-origin isolated page', () => {
  let p;
  before(async () => (p = await openPage(servers.isolated, 'isolated')));
  after(() => p?.close());

  test('init({ threads: 2 }): 2 threads, the same bits as one thread in Node; dispose() ends the worker', { timeout: 120_000 }, async () => {
    const r = await p.page.evaluate(async (wait) => {
      const { init } = await import('/dist/browser.js');
      const { computeMain, digest, withTimeout } = await import('/tests/browser/threads-work.mjs');
      const pe = await withTimeout(init({ threads: 2 }), wait, 'init({ threads: 2 })');
      const results = await digest(computeMain(pe));
      const state = { isolated: crossOriginIsolated, threads: pe.threads, simd: pe.simd, shared: pe._module.HEAPU8.buffer instanceof SharedArrayBuffer };
      pe.dispose();
      pe.dispose(); // twice is harmless
      // After dispose() the instance computes on this thread.
      const afterDispose = await digest({ small: pe.encode(5000, 256) });
      return { ...state, results, afterDispose };
    }, WAIT);
    assert.equal(r.isolated, true, 'crossOriginIsolated');
    assert.equal(r.threads, 2);
    assert.equal(r.simd, true);
    assert.ok(r.shared, 'the memory is a SharedArrayBuffer');
    sameDigests(r.results, REF, 'threads 2');
    sameDigests(r.afterDispose, REF_SMALL, 'after dispose()');
    const pool = poolWorkers(p.workers);
    assert.deepEqual(pool.map((w) => w.url), ['/dist/posenc_threads.worker.js'], 'one pool worker was started');
    // dispose() terminated it (playwright reports the close asynchronously).
    for (let i = 0; i < 50 && !pool[0].closed; i++) await new Promise((ok) => setTimeout(ok, 100));
    assert.ok(pool[0].closed, 'the pool worker ended after dispose()');
    assert.deepEqual(p.problems, []);
  });

  test('posenc/encoding: init({ threads: 2 }), the same bits as one thread in Node', { timeout: 120_000 }, async () => {
    const before = poolWorkers(p.workers).length;
    const r = await p.page.evaluate(async (wait) => {
      const { init } = await import('/dist/encoding-browser.js');
      const { computeEncoding, digest, withTimeout } = await import('/tests/browser/threads-work.mjs');
      const pe = await withTimeout(init({ threads: 2 }), wait, 'posenc/encoding init({ threads: 2 })');
      const results = await digest(computeEncoding(pe));
      const threads = pe.threads;
      pe.dispose();
      return { threads, results, transformer: typeof pe.encoderLayer };
    }, WAIT);
    assert.equal(r.threads, 2);
    assert.equal(r.transformer, 'undefined');
    sameDigests(r.results, REF_ENCODING, 'posenc/encoding threads 2');
    assert.deepEqual(poolWorkers(p.workers).slice(before).map((w) => w.url), ['/dist/posenc_encoding_threads.worker.js']);
    assert.deepEqual(p.problems, []);
  });

  test('init({ threads: 2 }) inside a module Web Worker (nested pool worker): the same bits', { timeout: 120_000 }, async () => {
    const before = poolWorkers(p.workers).length;
    const r = await p.page.evaluate(async (wait) => {
      const { inModuleWorker } = await import('/tests/browser/threads-work.mjs');
      return inModuleWorker({ threads: 2 }, 4 * wait);
    }, WAIT);
    assert.equal(r.error, undefined, r.error?.stack);
    assert.equal(r.crossOriginIsolated, true, "the worker inherits the page's isolation");
    assert.equal(r.threads, 2);
    sameDigests(r.results, REF, 'module worker, threads 2');
    assert.equal(poolWorkers(p.workers).length, before + 1, 'the worker started one pool worker');
    assert.deepEqual(p.problems, []);
  });

  test("init({ threads: 'auto' }): min(4, navigator.hardwareConcurrency), both entries, the same bits", { timeout: 120_000 }, async () => {
    const before = poolWorkers(p.workers).length;
    const r = await p.page.evaluate(async (wait) => {
      const main = await import('/dist/browser.js');
      const encoding = await import('/dist/encoding-browser.js');
      const { digest, withTimeout } = await import('/tests/browser/threads-work.mjs');
      const run = async (entry, label) => {
        const pe = await withTimeout(entry.init({ threads: 'auto' }), wait, `${label} init({ threads: 'auto' })`);
        const result = { threads: pe.threads, simd: pe.simd, small: await digest({ small: pe.encode(5000, 256) }) };
        pe.dispose();
        return result;
      };
      const cores = navigator.hardwareConcurrency;
      const real = [await run(main, 'posenc'), await run(encoding, 'posenc/encoding')];
      // Other counts through the same property (restored afterwards): 8 cores -> 4, none -> 1.
      const seen = [];
      try {
        for (const reported of [8, 3, undefined, 0]) {
          Object.defineProperty(navigator, 'hardwareConcurrency', { value: reported, configurable: true });
          seen.push((await run(main, `${reported} cores`)).threads);
        }
      } finally {
        delete navigator.hardwareConcurrency;
      }
      return { cores, restored: navigator.hardwareConcurrency === cores, real, seen };
    }, WAIT);
    assert.ok(Number.isInteger(r.cores) && r.cores >= 1, `navigator.hardwareConcurrency ${r.cores}`);
    assert.ok(r.restored);
    for (const got of r.real) {
      assert.equal(got.threads, Math.min(4, r.cores));
      assert.equal(got.simd, true);
      sameDigests(got.small, REF_SMALL, "threads: 'auto'");
    }
    assert.deepEqual(r.seen, [4, 3, 1, 1]);
    // Each instance with n > 1 threads started its n - 1 pool workers.
    const want = 2 * (Math.min(4, r.cores) - 1) + 3 + 2;
    assert.equal(poolWorkers(p.workers).length - before, want, 'pool workers started');
    assert.deepEqual(p.problems, []);
  });

  test('{ simd: false, threads: 2 } is a RangeError; threads: 17 too', { timeout: 30_000 }, async () => {
    const r = await p.page.evaluate(async () => {
      const { init } = await import('/dist/browser.js');
      const errors = [];
      for (const options of [{ simd: false, threads: 2 }, { threads: 17 }]) {
        errors.push(await init(options).then(() => null, (err) => ({ name: err.name, message: err.message })));
      }
      return errors;
    });
    assert.equal(r[0]?.name, 'RangeError');
    assert.match(r[0].message, /^posenc\.init: threads > 1 runs the SIMD build only/);
    assert.equal(r[1]?.name, 'RangeError');
    assert.match(r[1].message, /^posenc\.init: /);
    assert.deepEqual(p.problems, []);
  });
});

describe('a page without cross-origin isolation falls back', () => {
  let p;
  before(async () => (p = await openPage(servers.plain, 'not isolated')));
  after(() => p?.close());

  test('init({ threads: 2 }) rejects with its Error; init() runs one thread with the same bits', { timeout: 120_000 }, async () => {
    const r = await p.page.evaluate(async (wait) => {
      const { init } = await import('/dist/browser.js');
      const encoding = await import('/dist/encoding-browser.js');
      const { computeMain, digest, withTimeout } = await import('/tests/browser/threads-work.mjs');
      const failure = (err) => ({ name: err.name, message: err.message, isError: err instanceof Error });
      const refused = await withTimeout(init({ threads: 2 }).then(() => null, failure), wait, 'init({ threads: 2 })');
      const refusedEncoding = await withTimeout(encoding.init({ threads: 4 }).then(() => null, failure), wait, 'encoding init');
      const pe = await withTimeout(init(), wait, 'init()');
      const one = await withTimeout(init({ threads: 1 }), wait, 'init({ threads: 1 })');
      return {
        isolated: crossOriginIsolated,
        sab: typeof SharedArrayBuffer,
        refused,
        refusedEncoding,
        threads: [pe.threads, one.threads],
        results: await digest(computeMain(pe)),
      };
    }, WAIT);
    assert.equal(r.isolated, false, 'crossOriginIsolated');
    assert.equal(r.sab, 'undefined', 'no SharedArrayBuffer');
    for (const refused of [r.refused, r.refusedEncoding]) {
      assert.deepEqual(refused, { name: 'Error', message: THREADS_ERROR, isError: true });
    }
    assert.deepEqual(r.threads, [1, 1]);
    sameDigests(r.results, REF, 'not isolated, one thread');
    assert.deepEqual(poolWorkers(p.workers), [], 'no pool worker was started');
    assert.deepEqual(p.problems, []);
  });

  test("init({ threads: 'auto' }) runs one thread without an error, both entries", { timeout: 60_000 }, async () => {
    const r = await p.page.evaluate(async (wait) => {
      const { digest, withTimeout } = await import('/tests/browser/threads-work.mjs');
      const out = [];
      // 8 cores reported (4 threads if the page were isolated), whatever this machine has.
      Object.defineProperty(navigator, 'hardwareConcurrency', { value: 8, configurable: true });
      try {
        for (const url of ['/dist/browser.js', '/dist/encoding-browser.js']) {
          const { init } = await import(url);
          const pe = await withTimeout(init({ threads: 'auto' }), wait, `${url} init({ threads: 'auto' })`);
          out.push({ threads: pe.threads, simd: pe.simd, small: await digest({ small: pe.encode(5000, 256) }) });
        }
      } finally {
        delete navigator.hardwareConcurrency;
      }
      return { isolated: crossOriginIsolated, out };
    }, WAIT);
    assert.equal(r.isolated, false);
    for (const got of r.out) {
      assert.equal(got.threads, 1);
      assert.equal(got.simd, true);
      sameDigests(got.small, REF_SMALL, "not isolated, threads: 'auto'");
    }
    assert.deepEqual(poolWorkers(p.workers), [], 'no pool worker was started');
    assert.deepEqual(p.problems, []);
  });

  test('in a module Web Worker too: init({ threads: 2 }) rejects with its Error', { timeout: 60_000 }, async () => {
    const r = await p.page.evaluate(async (wait) => {
      const { inModuleWorker } = await import('/tests/browser/threads-work.mjs');
      return inModuleWorker({ threads: 2 }, wait);
    }, WAIT);
    assert.equal(r.crossOriginIsolated, false);
    assert.equal(r.error?.name, 'Error');
    assert.equal(r.error.message, THREADS_ERROR);
    assert.deepEqual(p.problems, []);
  });
});

describe('an isolated page where a pool worker cannot load', () => {
  const WORKER = '/dist/posenc_threads.worker.js';
  const GLUE = '/dist/posenc_threads.mjs';
  const FETCH_FAILED = 'its script could not be fetched or was refused';
  // [what fails, serveStatic route, what the message says after the worker's URL, and how many
  //  pool workers the page saw start, where that is certain]
  const glueRequests = { count: 0 };
  const SCENARIOS = [
    ['the worker script is 404', (path) => (path === WORKER ? { status: 404 } : undefined), FETCH_FAILED],
    ['the worker script is served without Cross-Origin-Embedder-Policy', (path) => (path === WORKER ? { headers: {} } : undefined), FETCH_FAILED],
    [
      "the page's Content-Security-Policy forbids workers",
      (path) => (path.endsWith('.html') ? { headers: { ...ISOLATION, 'Content-Security-Policy': "worker-src 'none'" } } : undefined),
      FETCH_FAILED,
    ],
    // The page imports the glue (request 1), then each of the 2 workers (2 and 3): the second
    // worker to ask is refused, the first one gets it (and may have loaded: it ends too).
    [
      'the glue is refused to the second worker',
      (path) => (path === GLUE && ++glueRequests.count > 2 ? { status: 404 } : undefined),
      'Uncaught TypeError: Failed to fetch dynamically imported module',
      2,
    ],
  ];
  for (const [scenario, route, what, started] of SCENARIOS) {
    test(`${scenario}: init({ threads: 3 }) rejects, its workers end, one thread still runs`, { timeout: 120_000 }, async () => {
      glueRequests.count = 0;
      failure = route;
      const p = await openPage(servers.failing, scenario);
      try {
        const r = await p.page.evaluate(async (wait) => {
          const { init } = await import('/dist/browser.js');
          const { digest, withTimeout } = await import('/tests/browser/threads-work.mjs');
          const failed = await withTimeout(
            init({ threads: 3 }).then(
              (pe) => (pe.dispose(), null),
              (err) => ({ name: err.name, message: err.message, isError: err instanceof Error, cause: typeof err.cause }),
            ),
            wait,
            'init({ threads: 3 })',
          );
          const pe = await withTimeout(init({ threads: 1 }), wait, 'init({ threads: 1 })');
          return { failed, threads: pe.threads, small: await digest({ small: pe.encode(5000, 256) }) };
        }, WAIT);
        assert.ok(r.failed, 'init({ threads: 3 }) rejected');
        assert.equal(r.failed.name, 'Error');
        assert.ok(r.failed.isError);
        assert.equal(r.failed.cause, 'object', 'the worker\'s error (or event) is the cause');
        const start = `posenc.init: a worker of the thread pool failed to load (${servers.failing.url}dist/posenc_threads.worker.js: ${what}`;
        assert.ok(r.failed.message.startsWith(start), `${r.failed.message}\n  should start with\n${start}`);
        assert.ok(r.failed.message.endsWith('init({ threads: 1 }) runs without workers (docs/API.md, "Threads")'), r.failed.message);
        assert.equal(r.threads, 1);
        sameDigests(r.small, REF_SMALL, 'one thread after the failure');
        // Every pool worker the page started has ended (playwright reports closes asynchronously).
        const pool = poolWorkers(p.workers);
        if (started !== undefined) assert.equal(pool.length, started, 'pool workers started');
        for (let i = 0; i < 50 && pool.some((w) => !w.closed); i++) await new Promise((ok) => setTimeout(ok, 100));
        assert.deepEqual(pool.filter((w) => !w.closed), [], 'every pool worker ended');
        // Handled: no uncaught error on the page (the failed requests and the CSP report are expected).
        assert.deepEqual(p.problems.filter((problem) => problem.includes('page error')), []);
      } finally {
        failure = undefined;
        await p.close();
      }
    });
  }
});
