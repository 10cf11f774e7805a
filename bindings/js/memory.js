// The wasm memory one instance's calls go through: a scratch region grown on demand (chunks of
// rows pass through it, so an encode of any length needs O(dim x chunk) bytes), one-call
// buffers that are always freed, and the copies out into JS-owned arrays.
//
// Heap views (Module.HEAPF32 ...) are read at every use, never kept: when wasm memory grows, views
// over the old buffer are detached and read as empty.

/** wasm32 memory tops out at 2 GB; larger byte counts would also wrap in malloc's argument. */
export const MAX_ALLOCATION = 2 ** 31 - 65536;

/**
 * A scratch region up to this size stays allocated between calls (the usual chunk of 256 KB and
 * its records); a larger one, grown for one call's wide rows (a shift matrix, many heads, long
 * ALiBi rows), is freed when that call returns, so it cannot keep later calls from memory.
 */
const KEPT_SCRATCH_BYTES = 1 << 20;

/**
 * The per-instance memory helpers over an instantiated Emscripten module (with _malloc, _free
 * and the HEAP views): { scratch, trimScratch, copyOut, withBuffers }.
 */
export function createScratch(Module) {
  let scratchPtr = 0;
  let scratchBytes = 0;

  /** The scratch region, at least `bytes` long (its address changes when it grows). */
  function scratch(fn, bytes) {
    if (bytes > scratchBytes) {
      if (bytes > MAX_ALLOCATION) {
        throw new RangeError(`posenc.${fn}: this request needs ${bytes} bytes of wasm memory, more than the 2 GB wasm32 can hold`);
      }
      const ptr = Module._malloc(bytes);
      if (!ptr) {
        throw new RangeError(`posenc.${fn}: cannot allocate ${bytes} bytes of wasm memory for this request`);
      }
      if (scratchPtr) Module._free(scratchPtr);
      scratchPtr = ptr;
      scratchBytes = bytes;
    }
    return scratchPtr;
  }

  /** Frees the scratch region if a call grew it past KEPT_SCRATCH_BYTES (run after each call). */
  function trimScratch() {
    if (scratchBytes > KEPT_SCRATCH_BYTES) {
      Module._free(scratchPtr);
      scratchPtr = 0;
      scratchBytes = 0;
    }
  }

  // Copies count floats from the wasm heap (float index from) into out at index at. A few floats
  // are copied element by element (cheaper than creating a subarray view); more go through set(),
  // a memcpy, which is about 6x faster than the loop for a 512-float row.
  function copyOut(out, at, from, count) {
    const heap = Module.HEAPF32;
    if (count <= 32) {
      for (let i = 0; i < count; i++) out[at + i] = heap[from + i];
    } else {
      out.set(heap.subarray(from, from + count), at);
    }
  }

  // Runs body(...pointers) with one wasm allocation per byte count (null: no allocation, pointer
  // 0) and frees them all afterwards, also when an allocation or the body throws.
  function withBuffers(fn, byteCounts, body) {
    const ptrs = [];
    try {
      for (const bytes of byteCounts) {
        if (bytes === null) {
          ptrs.push(0);
          continue;
        }
        const p = bytes > MAX_ALLOCATION ? 0 : Module._malloc(Math.max(bytes, 4));
        if (!p) throw new RangeError(`posenc.${fn}: not enough wasm memory for ${bytes} bytes`);
        ptrs.push(p);
      }
      return body(...ptrs);
    } finally {
      for (const p of ptrs) if (p) Module._free(p);
    }
  }

  return { scratch, trimScratch, copyOut, withBuffers };
}
