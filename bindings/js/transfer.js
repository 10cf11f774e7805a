// The chunked transfer between JS arrays and the core: rows go through the instance's scratch
// region in bounded chunks (working memory O(dim x chunk), never O(length x dim)), one call into
// wasm per chunk, each chunk copied out into the caller's JS-owned array while still in cache.

import { runChunks } from './chunks.js';
import { MAX_ALLOCATION } from './memory.js';

// Floats of the scratch region a chunk uses: 64K floats = 256 KB stays in cache. (Consecutive rows
// go in whole angle-addition blocks of at least 8 rows, so above dim 8192 a chunk is 8 rows.)
const SCRATCH_FLOATS = 65536;
// Bytes before a chunk's rows in the scratch region: one Request (12 doubles).
const REQUEST_BYTES = 96;

/** The RangeError of a failed SinusoidalEncoder call: `posenc.<fn>: <message> (argument: <name>)`. */
export function encoderError(fn, encoder) {
  const { argument, message } = encoder.error();
  return new RangeError(`posenc.${fn}: ${message}${argument ? ` (argument: ${argument})` : ''}`);
}

/**
 * { runEncode, runAddTo, runConcat, runShift } over one instance's memory (ctx of api.js). Each
 * takes a handle { encoder (the core's SinusoidalEncoder), sines, blockRows } (encoder.js).
 */
export function createTransfer({ Module, scratch, copyOut }) {
  // The threaded build splits a chunk's rows between its threads: a chunk per thread, times four.
  const chunkFloats = SCRATCH_FLOATS * (Module.posencPool ? 4 * (Module.posencPool + 1) : 1);
  // A Request's rows fields (its first fields and the last): n rows from `first`, or at the
  // positions / around the zero rows written at those addresses.
  function writeRows(f64, q, n, first, positionsPtr, zeroPtr, zeroPosition, numbered) {
    f64[q] = n;
    f64[q + 1] = first;
    f64[q + 2] = positionsPtr;
    f64[q + 3] = zeroPtr;
    f64[q + 4] = zeroPosition;
    f64[q + 11] = numbered ? 1 : 0;
  }
  // Each call's own fields, for n rows of `dim` floats at dataPtr.
  function encodeFields(f64, q, n, dataPtr, dim) {
    f64[q + 9] = dataPtr;
    f64[q + 10] = n * dim;
  }
  function addToFields(f64, q, n, dataPtr, dim, scale) {
    f64[q + 5] = scale;
    f64[q + 6] = dataPtr;
    f64[q + 7] = n * dim;
  }

  // Runs one core call per chunk of rows. Each call takes one argument, the address of a Request
  // (bind_encoder.cpp: twelve doubles at the start of the scratch region): forChunks writes the
  // rows' fields, `request(f64, q, n, dataPtr)` the call's own (q: the Request's index in f64),
  // then `call(requestPtr)` returns the core's code. Before each call `fill(r0, n, dataPtr)` may
  // copy input in, after it `drain(r0, n, dataPtr)` copies out. Consecutive rows go in chunks of
  // whole angle-addition blocks (blockRows rows centred on the multiples of blockRows; the first
  // chunk ends where the first whole block starts), so the core computes both rows of every pair
  // in one pass.
  function forChunks(fn, handle, rows, rowFloats, request, call, fill, drain, start) {
    const blockRows = handle.blockRows;
    const { positions, zeroRows, numbered } = rows;
    let rowsPerChunk = Math.max(1, Math.floor(chunkFloats / rowFloats));
    let lead = 0;
    if (!positions && !numbered && blockRows > 1) {
      rowsPerChunk = Math.max(blockRows, rowsPerChunk - (rowsPerChunk % blockRows));
      lead = (blockRows - ((Math.floor(rows.first) + blockRows / 2) % blockRows)) % blockRows;
    }
    const chunkRows = Math.min(rowsPerChunk, rows.count);
    const dataBytes = Math.ceil((chunkRows * rowFloats * 4) / 16) * 16; // keeps positions 8-aligned
    const positionBytes = positions || numbered ? chunkRows * 8 : 0;
    const zeroBytes = zeroRows ? chunkRows : 0;
    // The threaded build (start: the core's xStart) runs chunk i on its workers while chunk i - 1
    // is copied out and chunk i + 1 in: two regions, used in turn.
    const region = REQUEST_BYTES + dataBytes + positionBytes + Math.ceil(zeroBytes / 16) * 16;
    const base = scratch(fn, (start ? 2 : 1) * region + 16);
    let first = rows.first; // a padding mask's next non-padding position
    // Writes chunk [r0, r0 + n) into region k: its rows, input and Request. Returns its data address.
    const prepare = (r0, n, k) => {
      const requestPtr = base + k * region;
      const dataPtr = requestPtr + REQUEST_BYTES;
      const positionsPtr = positionBytes ? dataPtr + dataBytes : 0;
      const zeroPtr = zeroRows ? dataPtr + dataBytes + positionBytes : 0;
      if (positions) Module.HEAPF64.set(positions.subarray(r0, r0 + n), positionsPtr >> 3);
      if (zeroRows) Module.HEAPU8.set(zeroRows.subarray(r0, r0 + n), zeroPtr);
      if (fill) fill(r0, n, dataPtr);
      const f64 = Module.HEAPF64;
      const q = requestPtr >> 3;
      writeRows(f64, q, n, numbered ? first : rows.first + r0, positionsPtr, zeroPtr, rows.zeroPosition, numbered);
      request(f64, q, n, dataPtr);
      if (numbered) for (let r = r0; r < r0 + n; r++) first += 1 - zeroRows[r];
      return dataPtr;
    };
    const size = (r0) => Math.min(r0 === 0 && lead > 0 ? lead : chunkRows, rows.count - r0);
    const dataAt = (k) => base + k * region + REQUEST_BYTES;
    runChunks(
      rows.count,
      size,
      (r0, n, k) => prepare(r0, n, k) - REQUEST_BYTES,
      (r0, n, k) => drain(r0, n, dataAt(k)),
      () => {
        throw encoderError(fn, handle.encoder);
      },
      call,
      start,
      () => handle.encoder.finish(),
    );
  }

  // One row at a consecutive position (a decoding step): the rows fields forChunks would write
  // for it, without its closures and loop (4 to 5% of a one-row call, alternating A/B). Returns
  // the Request's address; the row's data follows it.
  function oneRowRequest(fn, rows, dim) {
    const base = scratch(fn, REQUEST_BYTES + Math.ceil((dim * 4) / 16) * 16 + 16);
    writeRows(Module.HEAPF64, base >> 3, 1, rows.first, 0, 0, rows.zeroPosition, false);
    return base;
  }
  const isOneRow = (rows) => rows.count === 1 && !rows.positions && !rows.numbered;

  /** rows.count rows of the table into `out` (allocated when undefined). */
  function runEncode(fn, handle, dim, rows, out) {
    const needed = rows.count * dim;
    const { encoder } = handle;
    if (isOneRow(rows)) {
      const base = oneRowRequest(fn, rows, dim);
      const dp = base + REQUEST_BYTES;
      encodeFields(Module.HEAPF64, base >> 3, 1, dp, dim);
      if (encoder.encode(base) !== 0) throw encoderError(fn, encoder);
      copyOut(out, 0, dp >> 2, dim);
      return out.length === needed ? out : out.subarray(0, needed);
    }
    forChunks(
      fn,
      handle,
      rows,
      dim,
      (f64, q, n, dp) => encodeFields(f64, q, n, dp, dim),
      (request) => encoder.encode(request),
      null,
      (r0, n, dp) => copyOut(out, r0 * dim, dp >> 2, n * dim),
      encoder.encodeStart && ((request) => encoder.encodeStart(request)),
    );
    return out.length === needed ? out : out.subarray(0, needed);
  }

  /** embeddings = embeddings * scale + PE, in place. */
  function runAddTo(fn, handle, dim, embeddings, rows, scale) {
    const { encoder } = handle;
    if (isOneRow(rows)) {
      const base = oneRowRequest(fn, rows, dim);
      const dp = base + REQUEST_BYTES;
      Module.HEAPF32.set(embeddings, dp >> 2);
      addToFields(Module.HEAPF64, base >> 3, 1, dp, dim, scale);
      if (encoder.addTo(base) !== 0) throw encoderError(fn, encoder);
      copyOut(embeddings, 0, dp >> 2, dim);
      return embeddings;
    }
    forChunks(
      fn,
      handle,
      rows,
      dim,
      (f64, q, n, dp) => addToFields(f64, q, n, dp, dim, scale),
      (request) => encoder.addTo(request),
      // One chunk of all rows copies the array itself: no view to allocate.
      (r0, n, dp) =>
        Module.HEAPF32.set(n === rows.count ? embeddings : embeddings.subarray(r0 * dim, (r0 + n) * dim), dp >> 2),
      (r0, n, dp) => copyOut(embeddings, r0 * dim, dp >> 2, n * dim),
      encoder.addToStart && ((request) => encoder.addToStart(request)),
    );
    return embeddings;
  }

  /** Rows [embedding | PE] into `out`. */
  function runConcat(fn, handle, dim, embeddings, embeddingDim, rows, out) {
    const width = embeddingDim + dim;
    const needed = rows.count * width;
    const { encoder } = handle;
    // The chunk holds the embeddings (count x embeddingDim) then the output (count x width).
    forChunks(
      fn,
      handle,
      rows,
      embeddingDim + width,
      (f64, q, n, dp) => {
        f64[q + 6] = dp;
        f64[q + 7] = n * embeddingDim;
        f64[q + 8] = embeddingDim;
        f64[q + 9] = dp + n * embeddingDim * 4;
        f64[q + 10] = n * width;
      },
      (request) => encoder.concat(request),
      (r0, n, dp) => Module.HEAPF32.set(embeddings.subarray(r0 * embeddingDim, (r0 + n) * embeddingDim), dp >> 2),
      (r0, n, dp) => {
        const start = (dp >> 2) + n * embeddingDim;
        out.set(Module.HEAPF32.subarray(start, start + n * width), r0 * width);
      },
      encoder.concatStart && ((request) => encoder.concatStart(request)),
    );
    return out.length === needed ? out : out.subarray(0, needed);
  }

  /** The shift rotation by k as a dim x dim matrix, or its 2 x sines blocks. */
  function runShift(fn, handle, dim, k, form) {
    const n = form === 'blocks' ? 2 * handle.sines : dim * dim;
    if (n * 4 > MAX_ALLOCATION) {
      throw new RangeError(
        `posenc.${fn}: a ${dim} x ${dim} matrix needs ${n * 4} bytes of wasm memory, more than the 2 GB wasm32 can hold; use form: 'blocks'`,
      );
    }
    const ptr = scratch(fn, n * 4);
    const { encoder } = handle;
    const code = form === 'blocks' ? encoder.shiftBlocks(k, ptr, n) : encoder.shiftMatrix(k, ptr, n);
    if (code !== 0) throw encoderError(fn, encoder);
    return Module.HEAPF32.slice(ptr >> 2, (ptr >> 2) + n);
  }

  return { runEncode, runAddTo, runConcat, runShift };
}
