// The chunked transfer between JS arrays and the core: rows go through the instance's scratch
// region in bounded chunks (working memory O(dim x chunk), never O(length x dim)), one call into
// wasm per chunk, each chunk copied out into the caller's JS-owned array while still in cache.

import { MAX_ALLOCATION } from './memory.js';

// Floats of the scratch region a chunk uses: 64K floats = 256 KB stays in cache. (Consecutive rows
// go in whole angle-addition blocks of at least 8 rows, so above dim 8192 a chunk is 8 rows.)
const SCRATCH_FLOATS = 65536;

/** The RangeError of a failed encoder call: `posenc.<fn>: <message> (argument: <name>)`. */
export function encoderError(fn, handle) {
  const { argument, message } = handle.error();
  return new RangeError(`posenc.${fn}: ${message}${argument ? ` (argument: ${argument})` : ''}`);
}

/** { runEncode, runAddTo, runConcat, runShift } over one instance's memory (ctx of api.js). */
export function createTransfer({ Module, scratch, copyOut }) {
  // Runs `call(n, first, positionsPtr, zeroRowsPtr, dataPtr)` (a core call returning a code) over
  // chunks of rows; before each call `fill(r0, n, dataPtr)` may copy input in, after it
  // `drain(r0, n, dataPtr)` copies out. Consecutive rows go in chunks of whole angle-addition
  // blocks (blockRows rows centred on the multiples of blockRows; the first chunk ends where the
  // first whole block starts), so the core computes both rows of every pair in one pass.
  function forChunks(fn, handle, rows, rowFloats, call, fill, drain) {
    const blockRows = handle.blockRows;
    let rowsPerChunk = Math.max(1, Math.floor(SCRATCH_FLOATS / rowFloats));
    let lead = 0;
    if (!rows.positions && blockRows > 1) {
      rowsPerChunk = Math.max(blockRows, rowsPerChunk - (rowsPerChunk % blockRows));
      lead = (blockRows - ((Math.floor(rows.first) + blockRows / 2) % blockRows)) % blockRows;
    }
    const chunkRows = Math.min(rowsPerChunk, rows.count);
    const dataBytes = Math.ceil((chunkRows * rowFloats * 4) / 16) * 16; // keeps positions 8-aligned
    const positionBytes = rows.positions ? chunkRows * 8 : 0;
    const zeroBytes = rows.zeroRows ? chunkRows : 0;
    const base = scratch(fn, dataBytes + positionBytes + zeroBytes + 16);
    const dataPtr = base;
    const positionsPtr = rows.positions ? base + dataBytes : 0;
    const zeroPtr = rows.zeroRows ? base + dataBytes + positionBytes : 0;
    for (let r0 = 0, n = 0; r0 < rows.count; r0 += n) {
      n = Math.min(r0 === 0 && lead > 0 ? lead : chunkRows, rows.count - r0);
      if (positionsPtr) Module.HEAPF64.set(rows.positions.subarray(r0, r0 + n), positionsPtr / 8);
      if (zeroPtr) Module.HEAPU8.set(rows.zeroRows.subarray(r0, r0 + n), zeroPtr);
      if (fill) fill(r0, n, dataPtr);
      if (call(n, rows.first + r0, positionsPtr, zeroPtr, dataPtr) !== 0) throw encoderError(fn, handle);
      drain(r0, n, dataPtr);
    }
  }

  /** rows.count rows of the table into `out` (allocated when undefined). */
  function runEncode(fn, handle, dim, rows, out) {
    const needed = rows.count * dim;
    forChunks(
      fn,
      handle,
      rows,
      dim,
      (n, first, pp, zp, dp) => handle.encode(n, first, pp, zp, rows.zeroPosition, dp, n * dim),
      null,
      (r0, n, dp) => copyOut(out, r0 * dim, dp >> 2, n * dim),
    );
    return out.length === needed ? out : out.subarray(0, needed);
  }

  /** embeddings = embeddings * scale + PE, in place. */
  function runAddTo(fn, handle, dim, embeddings, rows, scale) {
    forChunks(
      fn,
      handle,
      rows,
      dim,
      (n, first, pp, zp, dp) => handle.addTo(n, first, pp, zp, rows.zeroPosition, scale, dp, n * dim),
      (r0, n, dp) => Module.HEAPF32.set(embeddings.subarray(r0 * dim, (r0 + n) * dim), dp >> 2),
      (r0, n, dp) => embeddings.set(Module.HEAPF32.subarray(dp >> 2, (dp >> 2) + n * dim), r0 * dim),
    );
    return embeddings;
  }

  /** Rows [embedding | PE] into `out`. */
  function runConcat(fn, handle, dim, embeddings, embeddingDim, rows, out) {
    const width = embeddingDim + dim;
    const needed = rows.count * width;
    // The chunk holds the embeddings (count x embeddingDim) then the output (count x width).
    forChunks(
      fn,
      handle,
      rows,
      embeddingDim + width,
      (n, first, pp, zp, dp) =>
        handle.concat(n, first, pp, zp, rows.zeroPosition, dp, n * embeddingDim, embeddingDim, dp + n * embeddingDim * 4, n * width),
      (r0, n, dp) => Module.HEAPF32.set(embeddings.subarray(r0 * embeddingDim, (r0 + n) * embeddingDim), dp >> 2),
      (r0, n, dp) => {
        const start = (dp >> 2) + n * embeddingDim;
        out.set(Module.HEAPF32.subarray(start, start + n * width), r0 * width);
      },
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
    const code = form === 'blocks' ? handle.shiftBlocks(k, ptr, n) : handle.shiftMatrix(k, ptr, n);
    if (code !== 0) throw encoderError(fn, handle);
    return Module.HEAPF32.slice(ptr >> 2, (ptr >> 2) + n);
  }

  return { runEncode, runAddTo, runConcat, runShift };
}
