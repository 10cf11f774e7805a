// Prints seed 000's scenario (L = 100, D = 50): positions 0 and 5, and dims 0, 1, 6 over the first
// positions, computed by the built package.
import { init } from '../dist/node.js';

const pe = await init();
const L = 100;
const D = 50;
const table = pe.encode(L, D);
const row = (p, n = 6) => Array.from(table.subarray(p * D, p * D + n), (v) => v.toFixed(4).padStart(8)).join('');
console.log(`posenc ${pe.simd ? '(wasm SIMD)' : '(wasm baseline)'}: vaswani table, L = ${L}, D = ${D}`);
console.log(`position 0: ${row(0)} ...`);
console.log(`position 5: ${row(5)} ...`);
console.log('\n pos     d=0     d=1     d=6');
for (let p = 0; p < 10; p++) {
  const v = (d) => table[p * D + d].toFixed(4).padStart(8);
  console.log(`${String(p).padStart(4)}${v(0)}${v(1)}${v(6)}`);
}
