// Renders a `node bench/run.mjs --json FILE` result as the benchmark tables of docs/SPEED.md, so
// the figures there are exactly one run's output.
//   node bench/markdown.mjs FILE            prints the markdown
//   node bench/markdown.mjs FILE --readme   replaces the block between the bench markers in docs/SPEED.md
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [file, mode] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/markdown.mjs RESULT.json [--readme]');
  process.exit(2);
}
const r = JSON.parse(readFileSync(file, 'utf8'));
const pkg = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'package.json'), 'utf8'));

const ms = (x) => (x < 0.01 ? x.toFixed(4) : x < 1 ? x.toFixed(3) : x < 100 ? x.toFixed(2) : x.toFixed(0));
const err = (e) => (e === null || e === undefined ? '' : e.toExponential(1));
const lines = [];
const push = (s = '') => lines.push(s);

push(
  `Measured ${r.env.date.slice(0, 10)} on ${r.env.cpu} (${r.env.cores} cores, shared), Node ${r.env.node}, ` +
    `posenc ${pkg.version}, TensorFlow.js ${pkg.devDependencies['@tensorflow/tfjs-core']}, onnxruntime-web ` +
    `${pkg.devDependencies['onnxruntime-web']}${r.env.torch ? `, PyTorch ${r.env.torch}` : ''}; one process, medians. ` +
    '"vs limit" is the time over the limit measured in the same run (write once + copy out, or copy in + out ' +
    'for addTo); "vs JS" is the formula as written in plain JavaScript, filling the same `out`, over this row.',
);
push();
push('| shape | method | ms | GB/s | vs limit | vs JS | max error |');
push('|---|---|--:|--:|--:|--:|--:|');
const baselineRows = (r.baseline || [])
  .filter((x) => x.method.startsWith('posenc'))
  .map((x) => ({ ...x, method: `${x.method} (baseline build)` }));
for (const row of [...r.encode, ...baselineRows]) {
  const plain = r.encode.find((x) => x.shape === row.shape && x.method === 'plain JS formula -> out');
  // (baseline rows: vs limit is to the limit of their own run, vs JS to the SIMD run's plain JS)
  const vsJs = plain && row.limit === 'out' ? `${(plain.ms / row.ms).toFixed(0)}x` : '';
  const vsLimit = row.ratio === undefined ? '' : row.ratio.toFixed(2);
  push(`| ${row.shape} | ${row.method} | ${ms(row.ms)} | ${row.gbps.toFixed(2)} | ${vsLimit} | ${vsJs} | ${err(row.error)} |`);
}
push();
push('Small calls, dim 512, microseconds per call including the copy out:');
push();
push('| call | us |');
push('|---|--:|');
for (const s of r.small) push(`| \`${s.method}\`${s.target ? '' : ' (not a target)'} | ${s.usPerCall.toFixed(2)} |`);
if (r.layer && r.layer.length) {
  push();
  push('Transformer encoder layer (post-norm, relu), one forward, against the same PyTorch fixture:');
  push();
  push('| layer | implementation | ms | GFLOP/s | ORT ms / ms | max error vs PyTorch |');
  push('|---|---|--:|--:|--:|--:|');
  for (const row of r.layer) {
    push(`| ${row.case.replace('-post-relu', '')} | ${row.impl} | ${ms(row.ms)} | ${row.gflops.toFixed(2)} | ${row.ratioToOrt.toFixed(2)} | ${row.err.toExponential(1)} |`);
  }
}
if (r.rotary && r.rotary.length) {
  push();
  push('RoPE, ALiBi and 2D sin-cos (SIMD build): "vs limit" is the time over the limit of the same bytes in the same run (copy in + copy out for `apply`, in place; write once + copy into a new array for the tables):');
  push();
  push('| shape | method | ms | vs limit | max error |');
  push('|---|---|--:|--:|--:|');
  for (const row of r.rotary) {
    const vsLimit = row.ratio === undefined ? '' : row.ratio.toFixed(2);
    push(`| ${row.shape} | ${row.method} | ${ms(row.ms)} | ${vsLimit} | ${err(row.error)} |`);
  }
}
push();
const missed = r.targets.filter((t) => !t.ok);
push(`Targets: ${r.targets.length - missed.length} of ${r.targets.length} met${missed.length ? '; missed:' : '.'}`);
if (missed.length) {
  push();
  push('| missed target | measured |');
  push('|---|--:|');
  for (const t of missed) push(`| ${t.target} | ${Number(t.value).toPrecision(3)} |`);
}

const text = lines.join('\n');
if (mode === '--readme') {
  const readme = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'SPEED.md');
  const src = readFileSync(readme, 'utf8');
  const start = '<!-- bench:start -->';
  const end = '<!-- bench:end -->';
  const a = src.indexOf(start);
  const b = src.indexOf(end);
  if (a < 0 || b < a) throw new Error('docs/SPEED.md has no bench markers');
  writeFileSync(readme, `${src.slice(0, a + start.length)}\n${text}\n${src.slice(b)}`);
  console.log('docs/SPEED.md: benchmark tables replaced');
} else {
  console.log(text);
}
