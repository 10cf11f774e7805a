// Times the wasm builds (SIMD and baseline) straight through the embind SinusoidalEncoder, no JS
// API layer (each call's arguments go in a Request of doubles, as bindings/js/transfer.js writes):
//   node bench/native/bench_wasm.mjs [build/k-wasm]
// Bulk encode/add_to into one table and through a reused 256 KB scratch chunk, a wasm memset
// (fill) of the same bytes as the yardstick, and the 1 x 512 call at offsets up to 2^24.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = path.resolve(process.argv[2] ?? 'build/k-wasm');

function median(runs, f) {
  f();
  const t = [];
  for (let i = 0; i < runs; i++) {
    const a = process.hrtime.bigint();
    f();
    t.push(Number(process.hrtime.bigint() - a) / 1e6);
  }
  t.sort((x, y) => x - y);
  return t[t.length >> 1];
}

// The fields of bind_encoder.cpp's Request, in order.
const FIELDS = ['count', 'first', 'positions', 'zeroRows', 'zeroPosition', 'scale', 'data', 'dataLen', 'embeddingDim', 'out', 'outLen', 'numbered'];

for (const name of ['posenc_simd', 'posenc_baseline']) {
  const glue = await import(pathToFileURL(path.join(dir, `${name}.mjs`)).href);
  const wasmBinary = await readFile(path.join(dir, `${name}.wasm`));
  const M = await glue.default({ wasmBinary });
  const req = M._malloc(FIELDS.length * 8);
  // Writes a Request (unnamed fields 0, zeroPosition -1) and returns its address.
  const request = (fields) => {
    const all = { zeroPosition: -1, ...fields };
    FIELDS.forEach((f, i) => (M.HEAPF64[(req >> 3) + i] = all[f] ?? 0));
    return req;
  };
  const newEncoder = (dim, layout) =>
    new M.SinusoidalEncoder({
      dim, base: 10000, minTimescale: 1, layout: M.Layout.values[layout], frequencies: M.Frequencies.paper,
      odd: M.OddDim.paper, minDim: 1,
    });
  console.log(`== ${name}`);
  for (const [rows, dim] of [[2048, 512], [8192, 1024], [100000, 512]]) {
    for (const layout of [0, 1]) {
      const enc = newEncoder(dim, layout);
      const n = rows * dim;
      const out = M._malloc(n * 4);
      const chunkRows = Math.max(1, Math.floor(65536 / dim));
      const scratch = M._malloc(chunkRows * dim * 4);
      const runs = n > 1e7 ? 7 : 21;
      const heap = () => M.HEAPF32;
      const tFill = median(runs, () => heap().fill(0, out / 4, out / 4 + n));
      const tEnc = median(runs, () => enc.encode(request({ count: rows, out, outLen: n })));
      const tAdd = median(runs, () => enc.addTo(request({ count: rows, scale: 1, data: out, dataLen: n })));
      const tChunk = median(runs, () => {
        for (let r = 0; r < rows; r += chunkRows) {
          const k = Math.min(chunkRows, rows - r);
          enc.encode(request({ count: k, first: r, out: scratch, outLen: k * dim }));
        }
      });
      const gb = (t) => ((n * 4) / (t * 1e6)).toFixed(1);
      console.log(
        `${String(rows).padStart(6)} x ${String(dim).padStart(4)} ${layout ? 'split      ' : 'interleaved'} ` +
          `fill ${tFill.toFixed(3)} ms (${gb(tFill)} GB/s) | encode ${tEnc.toFixed(3)} ms (${gb(tEnc)} GB/s, ` +
          `${((tEnc * 1e6) / n).toFixed(3)} ns/elem) | 256KB chunks ${tChunk.toFixed(3)} ms (${gb(tChunk)} GB/s) | ` +
          `add_to ${tAdd.toFixed(3)} ms (${gb(tAdd)} GB/s)`,
      );
      M._free(out);
      M._free(scratch);
      enc.delete();
    }
  }
  const enc = newEncoder(512, 0);
  const row = M._malloc(512 * 4);
  const calls = 200000;
  for (const offset of [0, 2 ** 24 - 5]) {
    const tE = median(5, () => {
      for (let i = 0; i < calls; i++) enc.encode(request({ count: 1, first: offset + (i & 3), out: row, outLen: 512 }));
    });
    const tA = median(5, () => {
      for (let i = 0; i < calls; i++) enc.addTo(request({ count: 1, first: offset + (i & 3), data: row, dataLen: 512 }));
    });
    const copy = new Float32Array(512);
    const tC = median(5, () => {
      for (let i = 0; i < calls; i++) {
        enc.encode(request({ count: 1, first: offset + (i & 3), out: row, outLen: 512 }));
        copy.set(M.HEAPF32.subarray(row / 4, row / 4 + 512));
      }
    });
    console.log(
      `1 x 512 at ${offset}: encode ${((tE * 1e6) / calls).toFixed(0)} ns/call, add_to ` +
        `${((tA * 1e6) / calls).toFixed(0)} ns/call, encode + copy out ${((tC * 1e6) / calls).toFixed(0)} ns/call`,
    );
  }
}
