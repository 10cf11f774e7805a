// The chunk loop of the calls that go through the scratch region a chunk of rows at a time
// (transfer.js for the sinusoidal tables, rotary.js for RoPE), single-threaded or pipelined.

/**
 * Runs a call over rows [0, count) in chunks of size(r0) rows. prepare(r0, n, k) writes chunk
 * [r0, r0 + n) into region k of the scratch region (its input, its request) and returns the
 * address the core call takes; drain(r0, n, k) copies the chunk's output out of region k; fail()
 * throws the call's error. Without start, run(address) computes each chunk in region 0 (0, or an
 * error code). With start (the threaded build), start(address) leaves chunk i running on the
 * pool's workers while chunk i - 1 is drained and chunk i + 1 prepared in the other region, and
 * finish() takes the caller's share and waits for the rest (0, or an error code).
 */
export function runChunks(count, size, prepare, drain, fail, run, start, finish) {
  let address = prepare(0, size(0), 0);
  for (let r0 = 0, n = size(0), k = 0, before = null; r0 < count; r0 += n, n = size(r0)) {
    if (!start) {
      if (run(address) !== 0) fail();
      drain(r0, n, 0);
      if (r0 + n < count) address = prepare(r0 + n, size(r0 + n), 0);
      continue;
    }
    if (start(address) !== 0) fail();
    try {
      if (before) drain(...before);
      if (r0 + n < count) address = prepare(r0 + n, size(r0 + n), k ^ 1);
    } finally {
      // Always waits: the workers must be done with this chunk before anything else runs.
      if (finish() !== 0) fail();
    }
    before = [r0, n, k];
    if (r0 + n >= count) drain(...before);
    k ^= 1;
  }
}
