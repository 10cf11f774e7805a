// Size budget of the package: what one app loads — the entry (node.js or browser.js, one bundled
// module holding the JS API; any module it still imported would be counted too), one Emscripten
// glue and one .wasm, the larger of each pair — stays under 100 KB (100,000 bytes) gzipped at level
// 9, with embind and every feature (docs/API.md, "Bundlers"). posenc/encoding (no transformer) is
// measured beside it. The .d.ts and .map files are not loaded, so not counted. Size is a
// measurement, not a timing: this test is deterministic for a build.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { root } from './helpers.mjs';

const BUDGET_BYTES = 100_000; // the package budget (90 KB here until 0.2.0)
const dist = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');

const gzipped = (name) => gzipSync(readFileSync(join(dist, name)), { level: 9 }).length;

/** The dist/ files an entry loads: itself and the JS modules it imports, transitively. */
function imported(entry, seen = new Set()) {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const code = readFileSync(join(dist, entry), 'utf8');
  for (const [, name] of code.matchAll(/(?:from|import)\s*\(?\s*["']\.\/([\w-]+\.js)["']/g)) imported(name, seen);
  return seen;
}

/**
 * What an app loads through one pair of entries and one pair of builds: parts, [label, bytes]
 * each, and the text of the JS it runs and the bytes of the .wasm, to check what they hold.
 */
function loaded(entries, builds) {
  const larger = (names) => names.map((name) => [name, gzipped(name)]).sort((a, b) => b[1] - a[1])[0];
  const [entry] = larger(entries);
  const js = [...imported(entry)];
  const glue = larger(builds.map((b) => `${b}.mjs`));
  const wasm = larger(builds.map((b) => `${b}.wasm`));
  const modules = js.filter((name) => name !== entry).sort();
  return {
    parts: [...modules.map((name) => [name, gzipped(name)]), larger(entries), glue, wasm],
    code: js.map((name) => readFileSync(join(dist, name), 'utf8')).join('\n'),
    wasm: readFileSync(join(dist, wasm[0])),
  };
}

function report(parts) {
  const total = parts.reduce((sum, [, bytes]) => sum + bytes, 0);
  for (const [name, bytes] of parts) console.log(`${name.padEnd(28)} ${String(bytes).padStart(6)} B gzipped`);
  console.log(`total                        ${String(total).padStart(6)} B gzipped`);
  return total;
}

// Every family's JavaScript (the minifier keeps function names) and its embind registration is in
// what is counted. Registration names are NUL-terminated strings in the .wasm's data, where the
// linker may store one as the tail of a longer one ('Model' inside 'dModel'): so a name is looked
// for with its NUL only, and the model by its value object ModelInfo.
const ENCODING_FAMILIES = [
  ['attachEncoderApi', 'SinusoidalEncoder'],
  ['attachRotaryApi', 'Rotary'],
  ['attachAlibiApi', 'Alibi'],
  ['attachSincos2dApi', 'Sincos2d'],
];
const TRANSFORMER_FAMILIES = [
  ['attachLayerApi', 'TransformerEncoderLayer'],
  ['attachModelApi', 'ModelInfo'],
];
const hasFunction = (code, name) => new RegExp(`\\bfunction ${name}\\(`).test(code);
const hasClass = (wasm, name) => wasm.includes(Buffer.from(`${name}\0`));

test(`the loaded package is under ${BUDGET_BYTES / 1000} KB gzipped`, () => {
  const files = readdirSync(dist);
  assert.ok(files.includes('node.js') && files.includes('posenc_simd.wasm'), 'dist/ is incomplete: run `npm run build`');
  const { parts, code, wasm } = loaded(['node.js', 'browser.js'], ['posenc_simd', 'posenc_baseline']);
  for (const [attach, embindClass] of [...ENCODING_FAMILIES, ...TRANSFORMER_FAMILIES]) {
    assert.ok(hasFunction(code, attach), `${attach} (JS) not counted`);
    assert.ok(hasClass(wasm, embindClass), `${embindClass} (wasm) not counted`);
  }
  const total = report(parts);
  assert.ok(total < BUDGET_BYTES, `the package loads ${total} B gzipped, over the ${BUDGET_BYTES} B budget`);
});

// posenc/encoding holds every family of encodings (the paper's, rotary, ALiBi, 2D) and no
// transformer: the lighter entry. Each is what an app loads.
test('posenc/encoding loads no transformer and stays under the budget', () => {
  const { parts, code, wasm } = loaded(['encoding-node.js', 'encoding-browser.js'], ['posenc_encoding_simd', 'posenc_encoding_baseline']);
  for (const [attach, embindClass] of ENCODING_FAMILIES) {
    assert.ok(hasFunction(code, attach), `posenc/encoding: ${attach} (JS) not counted`);
    assert.ok(hasClass(wasm, embindClass), `posenc/encoding: ${embindClass} (wasm) not counted`);
  }
  for (const [attach, embindClass] of TRANSFORMER_FAMILIES) {
    assert.ok(!hasFunction(code, attach), `posenc/encoding loads the transformer's ${attach}`);
    assert.ok(!hasClass(wasm, embindClass), `posenc/encoding's wasm registers ${embindClass}`);
  }
  const total = report(parts);
  assert.ok(total < BUDGET_BYTES, `posenc/encoding loads ${total} B gzipped, over the ${BUDGET_BYTES} B budget`);
});

// posenc/multimodal and posenc/relative are plain JavaScript: one bundled module each, no glue, no .wasm.
for (const name of ['multimodal.js', 'relative.js']) {
  test(`posenc/${name.slice(0, -3)} loads one small module and no wasm`, () => {
    const js = [...imported(name)];
    assert.deepEqual(js, [name]);
    const code = readFileSync(join(dist, name), 'utf8');
    assert.ok(!/\.wasm|\.mjs/.test(code), `posenc/${name} references a wasm build`);
    const bytes = gzipped(name);
    console.log(`${name.padEnd(28)} ${String(bytes).padStart(6)} B gzipped`);
    assert.ok(bytes < 10_000, `posenc/${name} is ${bytes} B gzipped`);
  });
}

// The threaded builds (init({ threads }) > 1), loaded only where threads run: each one's glue,
// worker script and .wasm stay under the budget too (Node adds posenc_node_threads.mjs, counted
// beside them). The main entry above is what every app loads, threads or not.
for (const [build, families] of [
  ['posenc_threads', [...ENCODING_FAMILIES, ...TRANSFORMER_FAMILIES]],
  ['posenc_encoding_threads', ENCODING_FAMILIES],
]) {
  test(`the threaded build ${build} is under ${BUDGET_BYTES / 1000} KB gzipped`, () => {
    const wasm = readFileSync(join(dist, `${build}.wasm`));
    for (const [, embindClass] of families) assert.ok(hasClass(wasm, embindClass), `${build}: ${embindClass} (wasm) not counted`);
    const parts = [`${build}.mjs`, `${build}.worker.js`, `${build}.wasm`, 'posenc_node_threads.mjs'].map((name) => [name, gzipped(name)]);
    const total = report(parts);
    assert.ok(total < BUDGET_BYTES, `${build} loads ${total} B gzipped, over the ${BUDGET_BYTES} B budget`);
  });
}
