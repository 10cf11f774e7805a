// Shared helpers of the node:test suites: load the BUILT package (dist/, or the directory in
// POSENC_PACKAGE_DIR, e.g. an installed tarball), read the shared golden fixtures.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, '..', '..');
export const fixtureDir = join(root, 'tests', 'fixtures');

export async function loadPackage() {
  const dir = process.env.POSENC_PACKAGE_DIR || join(root, 'dist');
  const entry = process.env.POSENC_PACKAGE_DIR ? join(dir, 'dist', 'node.js') : join(dir, 'node.js');
  return import(pathToFileURL(entry).href);
}

/** posenc/encoding: the lighter entry, every family of encodings without the transformer. */
export async function loadEncodingPackage() {
  const dir = process.env.POSENC_PACKAGE_DIR || join(root, 'dist');
  const entry = process.env.POSENC_PACKAGE_DIR ? join(dir, 'dist', 'encoding-node.js') : join(dir, 'encoding-node.js');
  return import(pathToFileURL(entry).href);
}

export function presetFixtures() {
  const dir = join(fixtureDir, 'presets');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
}

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = d; // NaN propagates
  }
  return m;
}

/** The precision bound of the C++ core: 2^-22 absolute against float64. */
export const BOUND = 2 ** -22;

/** float64 value of column col at position p, straight from the definitions (interleaved/split...). */
export function oracle({ dim, base = 10000, minTimescale = 1, layout, frequencies, odd }, p, col) {
  const zeroPad = dim % 2 === 1 && odd === 'zero-pad';
  if (zeroPad && col === dim - 1) return 0;
  const sines = zeroPad ? (dim - 1) / 2 : Math.ceil(dim / 2);
  let i;
  let sine;
  if (layout === 'interleaved') {
    i = Math.floor(col / 2);
    sine = col % 2 === 0;
  } else {
    sine = col < sines;
    i = sine ? col : col - sines;
  }
  const e = frequencies === 'paper' ? (2 * i) / dim : i / Math.max(sines - 1, 1);
  const w = minTimescale * Math.pow(base / minTimescale, -e);
  return sine ? Math.sin(p * w) : Math.cos(p * w);
}

export function oracleTable(spec, positions) {
  const out = new Float64Array(positions.length * spec.dim);
  positions.forEach((p, r) => {
    for (let c = 0; c < spec.dim; c++) out[r * spec.dim + c] = oracle(spec, p, c);
  });
  return out;
}

/** Options object for posenc from a fixture case. */
export function caseOptions(preset, c) {
  const o = { preset, ...c.options };
  if (c.offset) o.offset = c.offset;
  if (c.positions) o.positions = c.positions;
  if (c.paddingMask) o.paddingMask = c.paddingMask;
  if (c.paddingIdx !== null && c.paddingIdx !== undefined && preset === 'fairseq') o.paddingIdx = c.paddingIdx;
  return o;
}

// lcg.py's values and layer weights, bit for bit: one JavaScript copy, shared with bench/ and
// the browser tests.
export { lcgValues, layerState } from '../fixtures/layer/lcg.mjs';
