// Seeded random numbers for the demo (and the tests that regenerate its inputs).

/** mulberry32: one uint32 per call (also the generator of tests/fixtures/extrapolation/eval_sequences.py). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}
