// Size budget of the package: what one app loads — the JS API modules its entry imports, the entry
// (node.js or browser.js), one Emscripten glue and one .wasm, the larger of each pair — stays under
// 90 KB (90,000 bytes) gzipped at level 9, with embind and every feature (README.md, "Bundlers").
// posenc/encoding (no transformer) is measured beside it. The .d.ts and .map files are not loaded,
// so not counted. Size is a measurement, not a timing: this test is deterministic for a build.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { root } from './helpers.mjs';

const BUDGET_BYTES = 90_000;
const dist = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');

const gzipped = (name) => gzipSync(readFileSync(join(dist, name)), { level: 9 }).length;

/** The dist/ files an entry loads: itself and the modules it imports, transitively. */
function imported(entry, seen = new Set()) {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const code = readFileSync(join(dist, entry), 'utf8');
  for (const [, name] of code.matchAll(/(?:from|import)\s*["']\.\/([\w-]+\.js)["']/g)) imported(name, seen);
  return seen;
}

/** [label, bytes] for each part an app loads through one pair of entries and one pair of builds. */
function loadedParts(entries, builds) {
  const larger = (names) => names.map((name) => [name, gzipped(name)]).sort((a, b) => b[1] - a[1])[0];
  const [entry] = larger(entries);
  const modules = [...imported(entry)].filter((name) => name !== entry).sort();
  return [
    ...modules.map((name) => [name, gzipped(name)]),
    larger(entries),
    larger(builds.map((b) => `${b}.mjs`)),
    larger(builds.map((b) => `${b}.wasm`)),
  ];
}

function report(parts) {
  const total = parts.reduce((sum, [, bytes]) => sum + bytes, 0);
  for (const [name, bytes] of parts) console.log(`${name.padEnd(28)} ${String(bytes).padStart(6)} B gzipped`);
  console.log(`total                        ${String(total).padStart(6)} B gzipped`);
  return total;
}

test(`the loaded package is under ${BUDGET_BYTES / 1000} KB gzipped`, () => {
  const files = readdirSync(dist);
  assert.ok(files.includes('api.js') && files.includes('posenc_simd.wasm'), 'dist/ is incomplete: run `npm run build`');
  const parts = loadedParts(['node.js', 'browser.js'], ['posenc_simd', 'posenc_baseline']);
  for (const name of ['api.js', 'encoder.js', 'layer.js', 'model.js']) {
    assert.ok(parts.some(([part]) => part === name), `${name} not counted`);
  }
  const total = report(parts);
  assert.ok(total < BUDGET_BYTES, `the package loads ${total} B gzipped, over the ${BUDGET_BYTES} B budget`);
});

test('posenc/encoding loads no transformer: less than the whole package', () => {
  const whole = loadedParts(['node.js', 'browser.js'], ['posenc_simd', 'posenc_baseline']);
  const parts = loadedParts(['encoding-node.js', 'encoding-browser.js'], ['posenc_encoding_simd', 'posenc_encoding_baseline']);
  assert.ok(!parts.some(([name]) => name === 'layer.js' || name === 'model.js'), 'posenc/encoding imports the transformer');
  const total = report(parts);
  const wholeTotal = whole.reduce((sum, [, bytes]) => sum + bytes, 0);
  console.log(`saves ${wholeTotal - total} B gzipped against the whole package`);
  assert.ok(total < wholeTotal - 20_000, `posenc/encoding loads ${total} B, the whole package ${wholeTotal} B`);
});
