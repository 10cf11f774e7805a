// The threaded build (init({ threads }) > 1: SIMD + pthreads, a pool of workers per instance):
// every result the same bits as the single-threaded SIMD build, in both entries; pe.threads;
// pe.dispose() stops the workers; a process that used threads exits by itself; a pool worker that
// cannot load makes init() reject (not hang) and every worker it started ends.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { layerInput, layerState, lcgValues } from '../fixtures/layer/lcg.mjs';
import { fixtureDir, loadEncodingPackage, loadPackage, root } from './helpers.mjs';

const { init } = await loadPackage();
const encodingEntry = await loadEncodingPackage();

const sameBits = (a, b, what) => {
  assert.equal(a.length, b.length, `${what}: length`);
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) {
    if (x[i] !== y[i]) assert.fail(`${what}: element ${i} differs (${a[i]} vs ${b[i]})`);
  }
};

// A deterministic pseudo-random Float32Array in [-1, 1): the fixtures' LCG.
const noise = (n, seed) => lcgValues(seed, n, 1);

describe('threads: the same bits as one thread', () => {
  let one;
  let two;
  let four;
  before(async () => {
    one = await init({ simd: true });
    two = await init({ threads: 2 });
    four = await init({ threads: 4 });
  });
  after(() => {
    two.dispose();
    four.dispose();
  });

  test('pe.threads says what runs', () => {
    assert.equal(one.threads, 1);
    assert.equal(two.threads, 2);
    assert.equal(four.threads, 4);
    assert.equal(two.simd, true);
  });

  const tables = [
    ['100 x 512 (one chunk)', [100, 512]],
    ['20000 x 512', [20000, 512]],
    ['3001 x 1024 from offset 77', [3001, 1024, { offset: 77 }]],
    ['5000 x 96, split layout', [5000, 96, { preset: 'tf-tutorial' }]],
    ['4000 x 255 (odd)', [4000, 255]],
    ['2500 x 128 at fractional offset 0.5', [2500, 128, { offset: 0.5 }]],
    ['fairseq with a padding mask', [4096, 256, { preset: 'fairseq', paddingMask: Uint8Array.from({ length: 4096 }, (_, i) => (i % 5 === 0 ? 1 : 0)) }]],
    ['explicit positions', [3000, 512, { positions: Float64Array.from({ length: 3000 }, (_, i) => (i * 7919) % 1000003) }]],
  ];
  for (const [name, args] of tables) {
    test(`encode ${name}`, () => {
      const want = one.encode(...args);
      sameBits(two.encode(...args), want, 'threads 2');
      sameBits(four.encode(...args), want, 'threads 4');
    });
  }

  test('16-bit outputs and rot.apply on 16-bit data (the glue re-takes HEAPU16 too)', () => {
    const bits = (a) => new Uint16Array(a.buffer, a.byteOffset, a.length);
    for (const dtype of ['float16', 'bfloat16']) {
      const want = bits(one.encode(20000, 256, { dtype }));
      for (const pe of [two, four]) assert.deepEqual(bits(pe.encode(20000, 256, { dtype })), want);
      const rots = [one, two, four].map((pe) => pe.rotary({ preset: 'llama-2-7b' }));
      try {
        const [c1, c2, c4] = rots.map((rot) => rot.cosSin(3000, { offset: 5, dtype }));
        for (const c of [c2, c4]) {
          assert.deepEqual(bits(c.cos), bits(c1.cos));
          assert.deepEqual(bits(c.sin), bits(c1.sin));
        }
        const q = Uint16Array.from({ length: 600 * 8 * 128 }, (_, i) => 0x3c00 | (i * 7919) % 1024);
        const [q1, q2, q4] = rots.map((rot) => rot.apply(q.slice(), { heads: 8, offset: 3, dtype }));
        assert.deepEqual(q2, q1);
        assert.deepEqual(q4, q1);
      } finally {
        for (const rot of rots) rot.dispose();
      }
    }
  });

  test('encode into out, addTo (scaled) and concat', () => {
    const [L, d] = [9000, 512];
    const out = new Float32Array(L * d);
    sameBits(two.encode(L, d, { out }), one.encode(L, d), 'encode out');
    const x = noise(L * d, 1);
    const want = one.addTo(x.slice(), d, { scale: Math.sqrt(d) });
    sameBits(two.addTo(x.slice(), d, { scale: Math.sqrt(d) }), want, 'addTo');
    sameBits(four.addTo(x.slice(), d, { scale: Math.sqrt(d) }), want, 'addTo 4');
    const e = noise(L * 64, 2);
    sameBits(two.concat(e, 64, d), one.concat(e, 64, d), 'concat');
    const enc1 = one.encoder({ dim: d });
    const enc2 = two.encoder({ dim: d });
    sameBits(enc2.encode(L, { offset: 3 }), enc1.encode(L, { offset: 3 }), 'enc.encode');
    sameBits(enc2.addTo(x.slice(), { offset: 5 }), enc1.addTo(x.slice(), { offset: 5 }), 'enc.addTo');
    enc1.dispose();
    enc2.dispose();
  });

  test('every other family runs on the threaded build with the same bits', () => {
    const rope = { headDim: 128, base: 10000 };
    const r1 = one.rotary(rope);
    const r2 = two.rotary(rope);
    const { cos, sin } = r1.cosSin(2048);
    const c2 = r2.cosSin(2048);
    sameBits(c2.cos, cos, 'cosSin cos');
    sameBits(c2.sin, sin, 'cosSin sin');
    const q = noise(512 * 8 * 128, 3);
    sameBits(r2.apply(q.slice(), { heads: 8 }), r1.apply(q.slice(), { heads: 8 }), 'rot.apply');
    r1.dispose();
    r2.dispose();
    // Big calls, split between the threads: layouts, offsets, explicit positions, a scaling rule.
    const positions = Float64Array.from({ length: 3000 }, (_, i) => (i * 7919) % 100003);
    for (const options of [
      { headDim: 128, rotaryDim: 96, layout: 'interleaved' },
      { headDim: 64, scaling: { type: 'yarn', factor: 4, originalMaxPositions: 4096 } },
    ]) {
      const a = one.rotary(options);
      const b = four.rotary(options);
      const x = noise(3000 * 16 * options.headDim, 5);
      for (const rows of [{ offset: 0 }, { offset: 4321 }, { positions }]) {
        sameBits(b.apply(x.slice(), { heads: 16, ...rows }), a.apply(x.slice(), { heads: 16, ...rows }), `rot.apply ${JSON.stringify(options)}`);
        const want = a.cosSin(3000, rows);
        const got = b.cosSin(3000, rows);
        sameBits(got.cos, want.cos, 'cosSin cos');
        sameBits(got.sin, want.sin, 'cosSin sin');
      }
      a.dispose();
      b.dispose();
    }
    sameBits(two.alibiBias(8, 300, 300), one.alibiBias(8, 300, 300), 'alibiBias');
    sameBits(two.encode2d(14, 14, 256), one.encode2d(14, 14, 256), 'encode2d');
    const config = { dModel: 64, heads: 4, ffDim: 128 };
    const weights = layerState(7, 64, 128);
    const l1 = one.encoderLayer({ config, weights });
    const l2 = two.encoderLayer({ config, weights });
    const x = layerInput(8, 100, 64);
    sameBits(l2.forward(x), l1.forward(x), 'layer.forward');
    l1.dispose();
    l2.dispose();
  });

  // The threaded build pipelines rot.apply and rot.cosSin (bindings/js/rotary.js runRows): chunks of
  // 64K values per share, computed by the workers while the previous chunk is copied out and the
  // next one in. Many chunks each, every row form the JS side sends.
  test('rot.apply (float32 and 16-bit) and rot.cosSin in pipelined chunks: the same bits in every form', () => {
    const length = 6000;
    const dynamic = { headDim: 64, scaling: { type: 'dynamic', factor: 2, originalMaxPositions: 2048 } };
    for (const [options, form] of [
      [{ headDim: 128 }, {}],
      [{ headDim: 128, rotaryDim: 64, layout: 'interleaved' }, { offset: 12345 }],
      // a frequency set made for the call (beyond the original context), kept until finish()
      [dynamic, { offset: 100 }],
      [{ headDim: 128, layout: 'deinterleave' }, { positions: Float64Array.from({ length }, (_, i) => (i * 7919) % 1000003) }],
      [{ headDim: 128 }, { offset: 0.25 }], // fractional: not split, still through the pipeline
    ]) {
      const a = one.rotary(options);
      const what = JSON.stringify([options, Object.keys(form)]);
      for (const pe of [two, four]) {
        const b = pe.rotary(options);
        const hd = options.headDim;
        const x = noise(length * 8 * hd, 11);
        sameBits(b.apply(x.slice(), { heads: 8, ...form }), a.apply(x.slice(), { heads: 8, ...form }), `apply ${what}`);
        const bhsd = { order: 'bhsd', batch: 2, heads: 4, ...form };
        if (form.positions) bhsd.positions = [form.positions, form.positions];
        sameBits(b.apply(x.slice(), bhsd), a.apply(x.slice(), bhsd), `apply bhsd ${what}`);
        // 16-bit data: each share widened, rotated and rounded back on its own thread
        const q = Uint16Array.from({ length: x.length }, (_, i) => (i % 3 ? 0x3c00 : 0xb800) | ((i * 7919) % 1024));
        for (const dtype of ['float16', 'bfloat16']) {
          assert.deepEqual(b.apply(q.slice(), { heads: 8, ...form, dtype }), a.apply(q.slice(), { heads: 8, ...form, dtype }), `16-bit apply ${dtype} ${what}`);
          assert.deepEqual(b.apply(q.slice(), { ...bhsd, dtype }), a.apply(q.slice(), { ...bhsd, dtype }), `16-bit apply bhsd ${dtype} ${what}`);
        }
        for (const cache of ['hf', 'ort']) {
          const want = a.cosSin(length, { ...form, cache });
          const got = b.cosSin(length, { ...form, cache });
          sameBits(got.cos, want.cos, `cosSin cos ${cache} ${what}`);
          sameBits(got.sin, want.sin, `cosSin sin ${cache} ${what}`);
          // 16-bit tables: each share computes its rows in a buffer and converts them into place
          for (const dtype of ['float16', 'bfloat16']) {
            const [w, g] = [a, b].map((r) => r.cosSin(length, { ...form, cache, dtype }));
            assert.deepEqual(new Uint16Array(g.cos.buffer), new Uint16Array(w.cos.buffer), `16-bit cosSin cos ${dtype} ${cache} ${what}`);
            assert.deepEqual(new Uint16Array(g.sin.buffer), new Uint16Array(w.sin.buffer), `16-bit cosSin sin ${dtype} ${cache} ${what}`);
          }
        }
        b.dispose();
      }
      a.dispose();
    }
    // Multimodal (t, h, w) positions, split by the core too, and per-sequence offsets into caller
    // buffers.
    const config = {
      model_type: 'qwen2_vl', hidden_size: 1536, num_attention_heads: 12, rope_theta: 1000000,
      rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] },
    };
    const m1 = one.rotary({ config });
    const three = [0, 1, 2].map((k) => Float64Array.from({ length }, (_, i) => Math.floor(i / (k + 1))));
    const x = noise(length * 12 * 128, 4);
    const q = Uint16Array.from({ length: length * 12 * 128 }, (_, i) => 0x3c00 | ((i * 7919) % 1024));
    const out = (n) => ({ cos: new Float32Array(n), sin: new Float32Array(n) });
    const o1 = out(2 * length * 128);
    m1.cosSin(length, { offset: [3, 70000], out: o1 });
    for (const pe of [two, four]) {
      const m = pe.rotary({ config });
      sameBits(m.apply(x.slice(), { heads: 12, positions: three }), m1.apply(x.slice(), { heads: 12, positions: three }), 'mrope apply');
      const bhsd = { order: 'bhsd', batch: 1, heads: 12, positions: [three] };
      sameBits(m.apply(x.slice(), bhsd), m1.apply(x.slice(), bhsd), 'mrope apply bhsd');
      assert.deepEqual(m.apply(q.slice(), { heads: 12, positions: three, dtype: 'float16' }), m1.apply(q.slice(), { heads: 12, positions: three, dtype: 'float16' }), 'mrope 16-bit apply');
      for (const cache of ['hf', 'ort']) {
        const want = m1.cosSin(length, { positions: three, cache });
        const got = m.cosSin(length, { positions: three, cache });
        sameBits(got.cos, want.cos, `mrope cosSin cos ${cache}`);
        sameBits(got.sin, want.sin, `mrope cosSin sin ${cache}`);
      }
      const o = out(2 * length * 128);
      m.cosSin(length, { offset: [3, 70000], out: o });
      sameBits(o.cos, o1.cos, 'per-sequence offsets cos');
      sameBits(o.sin, o1.sin, 'per-sequence offsets sin');
      m.dispose();
    }
    m1.dispose();
    // An odd head dim (its last channel does not rotate), NaNs with payloads there and elsewhere:
    // the 16-bit rotation gives one thread's bits (each value through float32 and back).
    // (5001 rows: shares with an odd number of rows, so odd runs of 16-bit values)
    const odd = { headDim: 65, rotaryDim: 64 };
    const rows = 5001;
    const a = one.rotary(odd);
    const nan = Uint16Array.from({ length: rows * 3 * 65 }, (_, i) => (i % 65 === 64 || i % 7 === 0 ? 0x7c01 : 0x3c00 | ((i * 7919) % 1024)));
    for (const pe of [two, four]) {
      const b = pe.rotary(odd);
      for (const order of [{ heads: 3 }, { order: 'bhsd', batch: 1, heads: 3 }]) {
        for (const dtype of ['float16', 'bfloat16']) {
          assert.deepEqual(b.apply(nan.slice(), { ...order, dtype }), a.apply(nan.slice(), { ...order, dtype }), `odd head dim ${dtype} ${JSON.stringify(order)}`);
        }
        sameBits(b.apply(noise(rows * 3 * 65, 9), order), a.apply(noise(rows * 3 * 65, 9), order), `odd head dim float32 ${JSON.stringify(order)}`);
      }
      b.dispose();
    }
    a.dispose();
  });

  test('the layer and the model split their products and softmax rows with the same bits', () => {
    for (const [d, heads, ff, L] of [[128, 4, 256, 400], [256, 8, 512, 160]]) {
      const weights = layerState(5, d, ff);
      for (const position of ['none', 'rotary', 'alibi']) {
        const config = { dModel: d, heads, ffDim: ff, position };
        const l1 = one.encoderLayer({ config, weights });
        const l2 = four.encoderLayer({ config, weights });
        const x = layerInput(6, L, d);
        const keyPaddingMask = Uint8Array.from({ length: L }, (_, i) => (i % 9 === 0 ? 1 : 0));
        for (const options of [{}, { causal: true }, { keyPaddingMask }]) {
          sameBits(l2.forward(x, options), l1.forward(x, options), `layer d${d} ${position} ${JSON.stringify(Object.keys(options))}`);
        }
        l1.dispose();
        l2.dispose();
      }
    }
    for (const method of ['none', 'rotary-partial', 'alibi']) {
      const bytes = readFileSync(join(fixtureDir, 'extrapolation', `${method}.safetensors`));
      const m1 = one.loadModel(bytes);
      const m2 = two.loadModel(bytes);
      const tokens = Array.from({ length: 700 }, (_, i) => (i * 7) % m1.config.symbols);
      sameBits(m2.forward(tokens, { causal: true }), m1.forward(tokens, { causal: true }), `model ${method}`);
      m1.dispose();
      m2.dispose();
    }
  });

  test('posenc/encoding runs threads too', async () => {
    const e2 = await encodingEntry.init({ threads: 2 });
    try {
      assert.equal(e2.threads, 2);
      sameBits(e2.encode(10000, 384), one.encode(10000, 384), 'encoding entry');
    } finally {
      e2.dispose();
    }
  });
});

// ---- threads: 'auto' (issue 26's rule): min(4, the cores Node reports) with the SIMD build -------
describe("threads: 'auto'", () => {
  const cores = availableParallelism();
  test(`resolves to min(4, os.availableParallelism()) = ${Math.min(4, cores)} in both entries, with the same bits`, async () => {
    const one = await init({ simd: true });
    const auto = await init({ threads: 'auto' });
    const autoEncoding = await encodingEntry.init({ threads: 'auto' });
    try {
      assert.equal(auto.threads, Math.min(4, cores));
      assert.equal(autoEncoding.threads, Math.min(4, cores));
      assert.equal(auto.simd, true);
      sameBits(auto.encode(20000, 512), one.encode(20000, 512), "threads: 'auto'");
      sameBits(autoEncoding.encode(3001, 1024, { offset: 77 }), one.encode(3001, 1024, { offset: 77 }), "posenc/encoding threads: 'auto'");
    } finally {
      auto.dispose();
      autoEncoding.dispose();
    }
  });

  test("with simd: false: 1 thread, the baseline build, no error", async () => {
    for (const entry of [{ init }, encodingEntry]) {
      const pe = await entry.init({ threads: 'auto', simd: false });
      assert.equal(pe.threads, 1);
      assert.equal(pe.simd, false);
      pe.dispose();
    }
  });

  // The count comes from node:os: a child process reports other counts through it (the entry
  // imports node:os as a namespace; syncBuiltinESMExports makes the patched functions its exports).
  const autoWith = (patch) => {
    const entry = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
    const script = `import os from 'node:os';
import { syncBuiltinESMExports } from 'node:module';
${patch}
syncBuiltinESMExports();
const out = [];
for (const name of ['node.js', 'encoding-node.js']) {
  const { init } = await import(${JSON.stringify(pathToFileURL(entry).href)} + '/' + name);
  const pe = await init({ threads: 'auto' });
  out.push(pe.threads, pe.encode(3000, 256).length);
  pe.dispose();
}
console.log(out.join(' '));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60000 });
    assert.equal(run.status, 0, `exit status ${run.status} (signal ${run.signal}): ${run.stderr}`);
    return run.stdout.trim().split(' ').map(Number);
  };
  for (const [reported, want] of [[8, 4], [3, 3], [1, 1]]) {
    test(`${reported} cores reported -> ${want} threads`, { timeout: 60_000 }, () => {
      assert.deepEqual(autoWith(`os.availableParallelism = () => ${reported};`), [want, 3000 * 256, want, 3000 * 256]);
    });
  }
  test('without os.availableParallelism: the CPU count (os.cpus().length)', { timeout: 60_000 }, () => {
    const patch = 'os.availableParallelism = undefined; os.cpus = () => [{}, {}, {}];';
    assert.deepEqual(autoWith(patch), [3, 3000 * 256, 3, 3000 * 256]);
  });
});

test('pe.dispose() stops the workers; the instance still computes on its own thread', async () => {
  const pe = await init({ threads: 3 });
  const want = pe.encode(5000, 256);
  assert.equal(pe.threads, 3);
  pe.dispose();
  assert.equal(pe.threads, 1, 'pe.threads says what runs after dispose()');
  pe.dispose();
  sameBits(pe.encode(5000, 256), want, 'after dispose');
});

test('a process that used threads exits by itself, without dispose()', () => {
  const entry = pathToFileURL(join(root, 'dist', 'node.js')).href;
  const script = `const { init } = await import(${JSON.stringify(process.env.POSENC_PACKAGE_DIR ? pathToFileURL(join(process.env.POSENC_PACKAGE_DIR, 'dist', 'node.js')).href : entry)});
const pe = await init({ threads: 2 });
console.log(pe.threads, pe.encode(20000, 512).length);`;
  const started = Date.now();
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20000 });
  const seconds = (Date.now() - started) / 1000;
  assert.equal(run.status, 0, `exit status ${run.status} (signal ${run.signal}): ${run.stderr}`);
  assert.equal(run.stdout.trim(), `2 ${20000 * 512}`);
  assert.ok(seconds < 5, `the process took ${seconds} s to exit`);
});

// ---- a pool worker that cannot load ------------------------------------------------------------
// A copy of the package's dist/ in a temporary directory (dist/ itself is never touched), whose
// worker script is replaced, scenario by scenario, by one that fails in each way a worker can.
// Each worker thread reads the script afresh, so one import of the copy's entries serves them all.
describe('a pool worker that cannot load: init() rejects, every worker ends', () => {
  const packageDist = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
  let dir;
  let copy;
  let NodeWorker;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'posenc-threads-'));
    copy = join(dir, 'dist');
    cpSync(packageDist, copy, { recursive: true });
    ({ NodeWorker } = await import(pathToFileURL(join(copy, 'posenc_node_threads.mjs')).href));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const original = (name) => readFileSync(join(packageDist, `${name}.worker.js`), 'utf8');
  // The worker script's one import(), of the glue (the URL the main thread sends), sent elsewhere.
  const importsMissingGlue = (name) => {
    const code = original(name);
    const changed = code.replace(/\bimport\([^)]*\)/, 'import("./posenc_missing_glue.mjs")');
    assert.notEqual(changed, code, 'the worker script has an import() of the glue');
    return changed;
  };
  const SCENARIOS = [
    ['the worker script is missing', () => null, /Cannot find module/],
    ['the worker script is truncated', (name) => original(name).slice(0, 200), /SyntaxError|Unexpected|missing|Invalid/],
    ['the worker script throws while it is evaluated', () => 'throw new Error("posenc test: boom");', /posenc test: boom/],
    ['the worker exits before it loaded', () => 'process.exit(3);', /exited with code 3 before it loaded/],
    ['the glue cannot be imported from the worker', importsMissingGlue, /posenc_missing_glue\.mjs/],
  ];

  /**
   * init(options) of the copy's entry with the worker script `name`.worker.js written as `script`
   * (null: deleted). Returns the rejection and the pool's workers (recorded through a NodeWorker
   * subclass given to the glue as the global Worker; onLoaded() runs when one reports 'loaded'),
   * after waiting for each one's exit: a worker left running would keep this waiting until the
   * test's timeout fails it.
   */
  async function failingInit(entry, name, script, options, onLoaded) {
    const file = join(copy, `${name}.worker.js`);
    rmSync(file, { force: true });
    if (script !== null) writeFileSync(file, script);
    const workers = [];
    globalThis.Worker = class RecordedWorker extends NodeWorker {
      constructor(url) {
        super(url);
        this.exited = new Promise((ok) => this.worker.once('exit', ok));
        this.worker.on('message', (data) => {
          if (data?.cmd !== 'loaded') return;
          this.loaded = true;
          onLoaded?.();
        });
        workers.push(this);
      }
    };
    let error;
    try {
      const { init: copyInit } = await import(pathToFileURL(join(copy, entry)).href);
      const pe = await copyInit(options).catch((e) => {
        error = e;
      });
      pe?.dispose();
    } finally {
      delete globalThis.Worker;
      writeFileSync(file, original(name));
    }
    await Promise.all(workers.map((w) => w.exited));
    return { error, workers, url: pathToFileURL(file).href };
  }

  const assertRejection = ({ error, url }, what) => {
    assert.ok(error instanceof Error, `init() rejected with an Error, got ${error}`);
    const start = `posenc.init: a worker of the thread pool failed to load (${url}: `;
    assert.ok(error.message.startsWith(start), `message: ${error.message}`);
    assert.match(error.message.slice(start.length), what);
    assert.ok(error.message.endsWith('); init({ threads: 1 }) runs without workers (docs/API.md, "Threads")'), error.message);
  };

  for (const [scenario, script, what] of SCENARIOS) {
    test(scenario, { timeout: 60_000 }, async () => {
      const result = await failingInit('node.js', 'posenc_threads', script('posenc_threads'), { threads: 3 });
      assertRejection(result, what);
      assert.equal(result.workers.length, 2, 'the pool started threads - 1 workers');
    });
  }

  test('posenc/encoding too', { timeout: 60_000 }, async () => {
    const result = await failingInit('encoding-node.js', 'posenc_encoding_threads', null, { threads: 2 });
    assertRejection(result, /Cannot find module/);
    assert.equal(result.workers.length, 1);
  });

  test('two workers fail after a third one loaded: all three end', { timeout: 60_000 }, async () => {
    // The first worker to start runs the real script (it loads the .wasm and reports 'loaded');
    // every other one waits for that (the file `go`, written when it is reported), then throws.
    // A flag file created with O_EXCL decides which is first, race-free.
    const [flag, go] = [join(dir, 'first-worker'), join(dir, 'go')];
    writeFileSync(join(copy, 'posenc_threads.real.worker.js'), original('posenc_threads'));
    const script = `import { existsSync, openSync } from 'node:fs';
let first = true;
try { openSync(${JSON.stringify(flag)}, 'wx'); } catch { first = false; }
if (first) {
  await import('./posenc_threads.real.worker.js');
} else {
  await new Promise((ok) => { const timer = setInterval(() => existsSync(${JSON.stringify(go)}) && (clearInterval(timer), ok()), 5); });
  throw new Error('posenc test: not the first worker');
}`;
    const result = await failingInit('node.js', 'posenc_threads', script, { threads: 4 }, () => writeFileSync(go, ''));
    assertRejection(result, /posenc test: not the first worker/);
    assert.equal(result.workers.length, 3);
    assert.deepEqual(result.workers.map((w) => w.loaded === true).sort(), [false, false, true], 'one worker had loaded');
  });

  test('afterwards init() works in the same process, with one thread and with a pool', async () => {
    const { init: copyInit } = await import(pathToFileURL(join(copy, 'node.js')).href);
    const one = await copyInit({ threads: 1 });
    const two = await copyInit({ threads: 2 });
    try {
      assert.equal(two.threads, 2);
      sameBits(one.encode(20000, 512), (await init({ simd: true })).encode(20000, 512), 'one thread');
      sameBits(two.encode(20000, 512), one.encode(20000, 512), 'two threads');
    } finally {
      two.dispose();
    }
  });
});
