// Several posenc instances in one page, and init() in several module Web Workers at once, in
// Debian's Chromium (playwright-core). The repository root is served on 127.0.0.1 so the page
// imports the built package (dist/browser.js) as a user's page would; every result is compared
// bit for bit with the same computation in Node (tests/browser/instances-work.mjs runs in both),
// and Node's results are checked against the float64 oracle and PyTorch's fixtures.
//
//   npm run build && node --test --test-reporter=spec tests/browser/
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { BOUND, fixtureDir, loadPackage, maxAbsDiff, oracleTable, root } from '../js/helpers.mjs';
import { launchChromium, serveStatic } from './launch.mjs';
import { compute, LAYER_FIXTURE, layerX, makeLayer, toBits } from './instances-work.mjs';

const tagger = JSON.parse(readFileSync(join(fixtureDir, 'model', 'tagger.json'), 'utf8'));
const TOKENS = tagger.cases[0].tokens;
const MODEL_PATH = 'tests/fixtures/model/tagger.safetensors';
const modelBytes = new Uint8Array(readFileSync(join(root, MODEL_PATH)));
const layerFixture = JSON.parse(readFileSync(join(fixtureDir, 'layer', `${LAYER_FIXTURE.name}.json`), 'utf8'));

// ---- the references, computed in Node and checked against the oracles --------------------------
const { init } = await loadPackage();
const nodeSimd = await init({ simd: true });
const nodeBaseline = await init({ simd: false });
const REF = { simd: compute(nodeSimd, modelBytes, TOKENS), baseline: compute(nodeBaseline, modelBytes, TOKENS) };
const REF_INTERLEAVED = {}; // what the interleaved calls of the first test give, per build
for (const [build, pe] of [['simd', nodeSimd], ['baseline', nodeBaseline]]) {
  const enc = pe.encoder({ dim: 64 });
  const layer = makeLayer(pe);
  REF_INTERLEAVED[build] = [0, 1, 2].map((i) => ({
    rows: enc.encode(4, { offset: i * 7 }),
    forward: layer.forward(layerX(8 + i)),
    small: pe.encode(3, 8, { offset: i }),
  }));
  enc.dispose();
  layer.dispose();
}

test('Node references agree with the float64 oracle and PyTorch', () => {
  const positions = (from, n) => Array.from({ length: n }, (_, i) => from + i);
  for (const ref of [REF.simd, REF.baseline]) {
    const vaswani = { dim: 64, layout: 'interleaved', frequencies: 'paper', odd: 'paper' };
    assert.ok(maxAbsDiff(ref.table, oracleTable(vaswani, positions(1000, 64))) <= BOUND);
    const fairseq = { dim: 48, layout: 'split', frequencies: 'half', odd: 'zero-pad' };
    assert.ok(maxAbsDiff(ref.rows, oracleTable(fairseq, positions(5, 16))) <= BOUND); // paddingIdx 1: from 2 + offset
    assert.ok(maxAbsDiff(ref.forward, layerFixture.expected) <= 4e-6, 'layer vs PyTorch');
    assert.ok(maxAbsDiff(ref.attention, layerFixture.attention) <= 1e-6, 'attention vs PyTorch');
    assert.ok(maxAbsDiff(ref.logits, tagger.cases[0].logitsWithPE) <= 1e-5, 'model vs PyTorch');
  }
});

// ---- Chromium ------------------------------------------------------------------------------------
let browser;
let server;
let page;
const problems = [];

before(async () => {
  assert.ok(statSync(join(root, 'dist', 'browser.js')).isFile(), 'dist/ missing: run `npm run build` first');
  server = await serveStatic(root);
  browser = await launchChromium();
  page = await browser.newPage();
  page.on('console', (msg) => msg.type() === 'error' && problems.push(`console error: ${msg.text()}`));
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()}`));
  page.on('response', (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
  page.on('worker', (w) => w.on('console', (msg) => msg.type() === 'error' && problems.push(`worker error: ${msg.text()}`)));
  await page.goto(`${server.url}tests/browser/instances.html`);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Asserts that bits (an array of uint32 bit patterns from the page) is expected, bit for bit. */
function sameBits(bits, expected, what) {
  assert.equal(bits?.length, expected.length, `${what}: length`);
  const want = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < want.length; i++) {
    if (bits[i] !== want[i]) {
      const got = new Float32Array(new Uint32Array([bits[i]]).buffer)[0];
      assert.fail(`${what}: element ${i} is ${got}, expected ${expected[i]} (bit for bit)`);
    }
  }
}

function sameResults(bitsByName, expected, what) {
  assert.deepEqual(Object.keys(bitsByName).sort(), Object.keys(expected).sort(), `${what}: result names`);
  for (const name of Object.keys(expected)) sameBits(bitsByName[name], expected[name], `${what} ${name}`);
}

test('three instances in one page (SIMD, baseline, SIMD) are independent', { timeout: 60_000 }, async () => {
  const r = await page.evaluate(async ({ modelPath, tokens }) => {
    const { init } = await import('/dist/browser.js');
    const { compute, layerX, makeLayer, toBits } = await import('/tests/browser/instances-work.mjs');
    const bytes = new Uint8Array(await (await fetch(`/${modelPath}`)).arrayBuffer());
    const instances = [await init(), await init({ simd: false }), await init()];
    // The same objects in each instance: they likely sit at the same wasm addresses.
    const encs = instances.map((pe) => pe.encoder({ dim: 64 }));
    const layers = instances.map(makeLayer);
    const interleaved = instances.map(() => []);
    for (let i = 0; i < 3; i++) {
      instances.forEach((pe, k) => {
        interleaved[k].push(toBits({
          rows: encs[k].encode(4, { offset: i * 7 }),
          forward: layers[k].forward(layerX(8 + i)),
          small: pe.encode(3, 8, { offset: i }),
        }));
      });
    }
    const full = instances.map((pe) => toBits(compute(pe, bytes, tokens)));
    const simd = instances.map((pe) => pe.simd);
    const memories = instances.map((pe) => pe._module.HEAPU8.buffer);
    const separateMemories = memories.every((m, k) => memories.indexOf(m) === k);
    // Dispose everything the first instance made and drop it; the others go on.
    encs[0].dispose();
    layers[0].dispose();
    instances[0] = null;
    const afterDispose = [1, 2].map((k) => ({
      interleaved: toBits({
        rows: encs[k].encode(4, { offset: 0 }),
        forward: layers[k].forward(layerX(8)),
        small: instances[k].encode(3, 8, { offset: 0 }),
      }),
      full: toBits(compute(instances[k], bytes, tokens)),
    }));
    return {
      simd,
      separateMemories,
      interleaved,
      full,
      afterDispose,
    };
  }, { modelPath: MODEL_PATH, tokens: TOKENS });

  assert.deepEqual(r.simd, [true, false, true]);
  assert.ok(r.separateMemories, 'each instance has its own wasm memory');
  const builds = ['simd', 'baseline', 'simd'];
  builds.forEach((build, k) => {
    r.interleaved[k].forEach((bits, i) => sameResults(bits, REF_INTERLEAVED[build][i], `instance ${k} call ${i}`));
    sameResults(r.full[k], REF[build], `instance ${k} compute()`);
  });
  [1, 2].forEach((k, j) => {
    sameResults(r.afterDispose[j].interleaved, REF_INTERLEAVED[builds[k]][0], `instance ${k} after instance 0 was disposed`);
    sameResults(r.afterDispose[j].full, REF[builds[k]], `instance ${k} compute() after instance 0 was disposed`);
  });
  assert.deepEqual(problems, []);
});

test('memory growth in one instance leaves another instance and earlier results unchanged', { timeout: 60_000 }, async () => {
  const r = await page.evaluate(async () => {
    const { init } = await import('/dist/browser.js');
    const { layerX, makeLayer, toBits } = await import('/tests/browser/instances-work.mjs');
    const a = await init();
    const b = await init();
    const encA = a.encoder({ dim: 64 });
    const encB = b.encoder({ dim: 64 });
    const layerA = makeLayer(a);
    const layerB = makeLayer(b);
    const snapshot = () => toBits({
      a: encA.encode(8, { offset: 3 }),
      aLayer: layerA.forward(layerX(8)),
      b: encB.encode(8, { offset: 3 }),
      bLayer: layerB.forward(layerX(8)),
      bTable: b.encode(16, 64),
    });
    const kept = b.encode(16, 64); // a result held across the other instance's growth
    const before = snapshot();
    const sizes = [a._module.HEAPU8.length, b._module.HEAPU8.length];
    // Grow a's memory: a 4096 x 4096 shift matrix (64 MB of wasm memory) and a 2048-token forward
    // (its attention alone is 4 x 2048 x 2048 floats).
    const shift = a.shift(1, 4096);
    const longForward = layerA.forward(layerX(2048));
    const grown = [a._module.HEAPU8.length, b._module.HEAPU8.length];
    return {
      sizes,
      grown,
      before,
      after: snapshot(),
      kept: toBits({ kept }).kept,
      shift: toBits({ head: shift.subarray(0, 8192), tail: shift.subarray(shift.length - 8192) }),
      longForwardTail: toBits({ tail: longForward.subarray(longForward.length - 64 * 8) }).tail,
    };
  });
  assert.ok(r.grown[0] >= r.sizes[0] + 64 * 2 ** 20, `instance a's memory grew: ${r.sizes[0]} -> ${r.grown[0]}`);
  assert.equal(r.grown[1], r.sizes[1], "instance b's memory did not change");
  assert.deepEqual(r.after, r.before, 'results after the growth are the same bits as before');
  assert.deepEqual(r.kept, r.before.bTable, 'a result kept across the growth still holds its values');
  const enc = nodeSimd.encoder({ dim: 64 });
  sameBits(r.before.a, enc.encode(8, { offset: 3 }), 'encoder rows');
  enc.dispose();
  sameBits(r.before.aLayer, REF_INTERLEAVED.simd[0].forward, 'layer forward');
  sameBits(r.before.bTable, nodeSimd.encode(16, 64), 'encode(16, 64)');
  const shift = nodeSimd.shift(1, 4096);
  sameBits(r.shift.head, shift.subarray(0, 8192), 'shift(1, 4096) first rows');
  sameBits(r.shift.tail, shift.subarray(shift.length - 8192), 'shift(1, 4096) last rows');
  const longLayer = makeLayer(nodeSimd);
  const longForward = longLayer.forward(layerX(2048));
  longLayer.dispose();
  sameBits(r.longForwardTail, longForward.subarray(longForward.length - 64 * 8), '2048-token forward, last rows');
  assert.deepEqual(problems, []);
});

test('init() in 4 module Web Workers at once: each result is bit for bit the main thread\'s', { timeout: 60_000 }, async () => {
  const r = await page.evaluate(async ({ modelPath, tokens }) => {
    const { init } = await import('/dist/browser.js');
    const { compute, toBits } = await import('/tests/browser/instances-work.mjs');
    const bytes = new Uint8Array(await (await fetch(`/${modelPath}`)).arrayBuffer());
    const workers = Array.from({ length: 4 }, () => new Worker('/tests/browser/instances-worker.mjs', { type: 'module' }));
    // All four are asked in the same task, so their init() calls run at the same time.
    const replies = workers.map(
      (worker, id) =>
        new Promise((resolve, reject) => {
          worker.onmessage = ({ data }) => (data.error ? reject(new Error(`worker ${id}: ${data.error}`)) : resolve(data));
          worker.onerror = (event) => reject(new Error(`worker ${id}: ${event.message}`));
          worker.postMessage({ id, options: id % 2 ? { simd: false } : undefined, modelUrl: `/${modelPath}`, tokens });
        }),
    );
    const fromWorkers = await Promise.all(replies);
    workers.forEach((w) => w.terminate());
    const main = {
      simd: toBits(compute(await init(), bytes, tokens)),
      baseline: toBits(compute(await init({ simd: false }), bytes, tokens)),
    };
    return { fromWorkers, main };
  }, { modelPath: MODEL_PATH, tokens: TOKENS });

  assert.equal(r.fromWorkers.length, 4);
  sameResults(r.main.simd, REF.simd, 'main thread, SIMD');
  sameResults(r.main.baseline, REF.baseline, 'main thread, baseline');
  const first = Math.min(...r.fromWorkers.map((w) => w.origin + w.started));
  for (const w of r.fromWorkers) {
    const build = w.id % 2 ? 'baseline' : 'simd';
    assert.equal(w.simd, build === 'simd', `worker ${w.id} runs the ${build} build`);
    assert.deepEqual(w.results, r.main[build], `worker ${w.id}: the main thread's bits`);
    const start = w.origin + w.started - first;
    console.log(`  worker ${w.id} (${build}): init() started at +${start.toFixed(0)} ms, took ${(w.initialized - w.started).toFixed(0)} ms`);
  }
  assert.deepEqual(problems, []);
});
