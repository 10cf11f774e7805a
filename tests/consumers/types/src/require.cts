// CommonJS TypeScript (compiled as require() under module nodenext): TypeScript >= 5.8 allows
// require() of an ES module without top-level await under nodenext, as Node >= 20.19 does.
import posenc = require('posenc');

export async function firstValue(): Promise<number> {
  const pe = await posenc.init();
  return pe.encode(1, 2)[0]!;
}
