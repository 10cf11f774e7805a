// Size budget of the package: what one app loads — the JS API modules, one entry (node.js or
// browser.js), one Emscripten glue and one .wasm, the larger of each pair — stays under 90 KB
// (90,000 bytes) gzipped at level 9, with embind and every feature (README.md, "Bundlers"). The .d.ts and .map files are not loaded, so not counted.
// Size is a measurement, not a timing: this test is deterministic for a given build.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { root } from './helpers.mjs';

const BUDGET_BYTES = 90_000;
const dist = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');

const gzipped = (name) => gzipSync(readFileSync(join(dist, name)), { level: 9 }).length;

/** [label, bytes] for each part one app loads. */
function loadedParts() {
  const files = readdirSync(dist);
  const larger = (names) =>
    names.map((name) => [name, gzipped(name)]).sort((a, b) => b[1] - a[1])[0] ?? [undefined, 0];
  const entries = ['node.js', 'browser.js'];
  const modules = files.filter((f) => f.endsWith('.js') && !entries.includes(f)).map((name) => [name, gzipped(name)]);
  return [
    ...modules,
    larger(entries.filter((f) => files.includes(f))),
    larger(files.filter((f) => f.endsWith('.mjs'))),
    larger(files.filter((f) => f.endsWith('.wasm'))),
  ];
}

test(`the loaded package is under ${BUDGET_BYTES / 1000} KB gzipped`, () => {
  const parts = loadedParts();
  assert.ok(parts.some(([name]) => name === 'api.js'), 'dist/api.js is missing: run `npm run build`');
  assert.ok(parts.every(([name]) => name), 'dist/ lacks an entry, a glue .mjs or a .wasm');
  const total = parts.reduce((sum, [, bytes]) => sum + bytes, 0);
  for (const [name, bytes] of parts) console.log(`${name.padEnd(20)} ${String(bytes).padStart(6)} B gzipped`);
  console.log(`total                ${String(total).padStart(6)} B gzipped (budget ${BUDGET_BYTES} B)`);
  assert.ok(total < BUDGET_BYTES, `the package loads ${total} B gzipped, over the ${BUDGET_BYTES} B budget`);
});
