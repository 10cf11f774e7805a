// `npm run bench`: every benchmark, side by side in one process, with the targets each row is held to.
//   node bench/run.mjs [--quick] [--json FILE] [--only encode|small|layer|rotary|relative|alibi|threads|half|frozen] [--no-peers]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_SHAPES, benchEncode, benchSmallCalls, checkTargets, maxError, timeIt } from './encode.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const quick = flag('--quick');
const only = value('--only');
const jsonFile = value('--json');
const log = (s) => console.log(s);

const { init } = await import(pathToFileURL(join(root, 'dist', 'node.js')).href);
const pe = await init();
const baseline = await init({ simd: false });
const shapes = quick ? [[2048, 512], [8192, 1024]] : DEFAULT_SHAPES;

const env = {
  node: process.version,
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  date: new Date().toISOString(),
};
log(`posenc bench: Node ${env.node}, ${env.cpu}, ${env.cores} cores, one process${quick ? ' (quick)' : ''}`);

// ---- peers --------------------------------------------------------------------------------
async function tfjsPeer() {
  try {
    const tf = await import('@tensorflow/tfjs-core');
    await import('@tensorflow/tfjs-backend-wasm');
    await tf.setBackend('wasm');
    await tf.ready();
    // The tutorial formula in TensorFlow.js ops (float32 angles, as TF computes them).
    const table = (length, dim) =>
      tf.tidy(() => {
        const pos = tf.reshape(tf.range(0, length, 1, 'float32'), [length, 1]);
        const div = tf.reshape(tf.exp(tf.mul(tf.range(0, dim, 2, 'float32'), -Math.log(10000) / dim)), [1, dim / 2]);
        const angle = tf.mul(pos, div);
        return tf.reshape(tf.stack([tf.sin(angle), tf.cos(angle)], 2), [length, dim]);
      });
    const run = (length, dim) => {
      const t = table(length, dim);
      const data = t.dataSync();
      t.dispose();
      return data;
    };
    return {
      name: `TensorFlow.js ${tf.version_core} wasm`,
      async encode(length, dim, timing) {
        const error = maxError(run(length, dim), length, dim);
        const ms = await timeIt(() => run(length, dim), { ...timing, maxRuns: quick ? 2 : 5, budgetMs: 0, minRuns: quick ? 1 : 3 });
        return { ms, error };
      },
    };
  } catch (err) {
    log(`TensorFlow.js wasm unavailable: ${err.message}`);
    return null;
  }
}

function torchPeer() {
  const python = '/usr/bin/python3';
  if (!existsSync(python)) return null;
  try {
    const out = execFileSync(python, [join(here, 'torch_encode.py'), ...shapes.map(([l, d]) => `${l}:${d}`)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const parsed = JSON.parse(out);
    env.torch = `${parsed.torch} (${parsed.threads} thread${parsed.threads === 1 ? '' : 's'})`;
    return {
      name: `PyTorch ${parsed.torch} native (tutorial)`,
      encode(length, dim) {
        const r = parsed.results.find((x) => x.length === length && x.dim === dim);
        return r ? { ms: r.ms, error: r.error } : null;
      },
    };
  } catch (err) {
    log(`PyTorch column skipped (python3-torch not usable: ${String(err.message).split('\n')[0]})`);
    return null;
  }
}

/** The layer targets from benchLayer's rows: the tiny layer faster than onnxruntime-web, the
 * small one no slower, and both within 4e-6 of PyTorch and never worse than onnxruntime-web. */
function layerTargets(rows) {
  const targets = [];
  for (const [name, label, strict] of [
    ['tiny-post-relu', 'tiny layer', true],
    ['small-post-relu', 'small layer', false],
  ]) {
    const ours = rows.find((r) => r.case === name && r.impl.startsWith('posenc'));
    const ort = rows.find((r) => r.case === name && r.impl.startsWith('onnxruntime-web'));
    if (!ours || !ort) continue;
    const speedup = ort.ms / ours.ms;
    targets.push({
      target: `${label}: ${strict ? 'faster than' : 'no slower than'} onnxruntime-web (ORT ms / posenc ms)`,
      value: speedup,
      ok: strict ? speedup > 1 : speedup >= 1,
    });
    targets.push({ target: `${label}: max error vs PyTorch <= 4e-6`, value: ours.err, ok: ours.err <= 4e-6 });
    targets.push({
      target: `${label}: error no worse than onnxruntime-web's (${ort.err.toExponential(2)})`,
      value: ours.err,
      ok: ours.err <= ort.err,
    });
  }
  // The position steps through the JS API (benchPositionSteps): the error column there is
  // max |posenc - ORT| (both float32 against the same PyTorch graph), bounded at 1e-4.
  for (const [name, label, rule] of [
    ['tiny-rotary', 'tiny layer with rotary', 'faster'],
    ['small-rotary', 'small layer with rotary', 'no slower'],
    ['long-rotary', 'long layer (d 128, L 2048) with rotary', 'no slower'],
    ['long-alibi', 'long layer (d 128, L 2048) with ALiBi', 'no slower'],
  ]) {
    const ours = rows.find((r) => r.case === name && r.impl.startsWith('posenc'));
    const ort = rows.find((r) => r.case === name && r.impl.startsWith('onnxruntime-web'));
    if (!ours || !ort) continue;
    const speedup = ort.ms / ours.ms;
    targets.push({
      target: `${label}: ${rule === 'faster' ? 'faster than' : 'at least as fast as'} onnxruntime-web (ORT ms / posenc ms)`,
      value: speedup,
      ok: rule === 'faster' ? speedup > 1 : speedup >= 1,
    });
    targets.push({ target: `${label}: max |posenc - ORT| <= 1e-4`, value: ours.err, ok: ours.err <= 1e-4 });
  }
  return targets;
}

const result = { env, encode: [], baseline: [], small: [], targets: [], layer: null, rotary: null, relative: null, alibi: null, threads: null, frozen: null };

// The one-row calls and the RoPE decoding step first, while the process is fresh: after the
// large tables below (hundreds of MB of arrays) the same loops measured up to 1 us slower per
// call, the garbage collector's work rather than the call's. (The step is reported with the
// rotary rows.)
if (!only || only === 'small' || only === 'encode') {
  log('\n== small calls (incremental decoding), SIMD build');
  result.small = await benchSmallCalls({ pe, log });
}
const rotaryModule = !only || only === 'rotary' ? await import(pathToFileURL(join(here, 'rotary.mjs')).href) : null;
const decoding = rotaryModule ? await rotaryModule.timeDecodingStep(pe, quick) : null;
if (!only || only === 'encode') {
  const peers = flag('--no-peers') ? [] : [await tfjsPeer(), torchPeer()].filter(Boolean);
  log('\n== encode and addTo (SIMD build), medians');
  result.encode = await benchEncode({ pe, shapes, peers, log, quick });
  log('\n== encode (baseline build), medians');
  result.baseline = await benchEncode({ pe: baseline, shapes: [shapes[0]], plain: false, log, quick });
}
if ((!only || only === 'layer') && existsSync(join(here, 'layer.mjs'))) {
  const { benchLayer } = await import(pathToFileURL(join(here, 'layer.mjs')).href);
  log('\n== transformer encoder layer');
  result.layer = await benchLayer({ posenc: pe, log, quick });
}

let rotaryTargets = [];
if (!only || only === 'rotary') {
  const { benchRotary } = rotaryModule;
  log('\n== RoPE apply, cosSin, ALiBi bias, 2D sin-cos (SIMD build)');
  const { rows, targets } = await benchRotary({ pe, log, quick, decoding });
  result.rotary = rows;
  rotaryTargets = targets;
}

// Issue 24: T5's relative position buckets and bias (posenc/relative, dist/relative.js) against
// their floor, the T5 subgraph in onnxruntime-web and a plain-JS port; posenc/multimodal's
// rotary2d against rot.apply.
let relativeTargets = [];
if (!only || only === 'relative') {
  const { benchRelative } = await import(pathToFileURL(join(here, 'relative.mjs')).href);
  const file = join(root, 'dist', 'relative.js');
  const relative = existsSync(file) ? await import(pathToFileURL(file).href) : null;
  const multimodal = join(root, 'dist', 'multimodal.js');
  const { rotary2d } = existsSync(multimodal) ? await import(pathToFileURL(multimodal).href) : {};
  log('\n== T5 relative position bias and buckets (posenc/relative), vision 2D RoPE; medians of interleaved runs');
  const { rows, targets } = await benchRelative({ pe, relative, rotary2d, log, quick });
  result.relative = rows;
  relativeTargets = targets;
}

// Issue 25: ALiBi with a key padding mask ([batch, heads, q, k]) and BLOOM's build_alibi_tensor
// form, against a plain-JS port of the model code and the floor of writing the bytes once.
let alibiTargets = [];
if (!only || only === 'alibi') {
  const { benchAlibi } = await import(pathToFileURL(join(here, 'alibi.mjs')).href);
  log('\n== ALiBi with a padding mask, BLOOM form; medians of interleaved runs');
  const { rows, targets } = await benchAlibi({ pe, log, quick });
  result.alibi = rows;
  alibiTargets = targets;
}

// Issue 26: the threaded build (init({ threads: 2 })) against one thread on the biggest tables.
let threadTargets = [];
if (!only || only === 'threads') {
  const { benchThreads } = await import(pathToFileURL(join(here, 'threads.mjs')).href);
  log('\n== threads: 1 against N, medians of interleaved runs');
  const { rows, targets } = await benchThreads({ init, log, quick });
  result.threads = rows;
  threadTargets = targets;
}

// Issue 25: dtype 'float16' / 'bfloat16' against the float32 call (bench/half.mjs).
let halfTargets = [];
if (!only || only === 'half') {
  const { benchHalf } = await import(pathToFileURL(join(here, 'half.mjs')).href);
  log('\n== 16-bit outputs (dtype) against float32; medians of interleaved runs');
  const { rows, targets } = await benchHalf({ pe, log, quick });
  result.half = rows;
  halfTargets = targets;
}

// Issue 22: today's build against the frozen kernel (bench/frozen.mjs; the frozen copy is built on
// first use by scripts/build-frozen.mjs), in a process of its own so that old and new start alike
// (bench/frozen.mjs says why). Without git or the revision, the rest of the bench stands.
let frozenTargets = [];
if (!only || only === 'frozen') {
  log('\n== against the frozen kernel: new (dist/) / old (build/frozen/), median of interleaved pairs');
  const file = join(tmpdir(), `posenc-frozen-${process.pid}.json`);
  const child = spawnSync(process.execPath, [join(here, 'frozen.mjs'), ...(quick ? ['--quick'] : []), '--json', file], { stdio: 'inherit' });
  let report = null;
  if (existsSync(file)) {
    report = JSON.parse(readFileSync(file, 'utf8'));
    rmSync(file);
  }
  if (report?.rows) {
    result.frozen = report.rows;
    frozenTargets = (await import(pathToFileURL(join(here, 'frozen.mjs')).href)).frozenTargets(report.rows);
  } else {
    const reason = report?.skipped ?? `bench/frozen.mjs ended with ${child.error?.message ?? child.signal ?? `exit ${child.status}`}`;
    result.frozen = { skipped: reason };
    if (!report) log(`frozen comparison skipped: ${reason}`);
  }
}

result.targets = checkTargets(result.encode, result.small);
if (result.layer) result.targets.push(...layerTargets(result.layer));
result.targets.push(...rotaryTargets, ...relativeTargets, ...alibiTargets, ...threadTargets, ...halfTargets, ...frozenTargets);
log('\n== targets');
for (const t of result.targets) {
  log(`${t.ok ? 'MET   ' : 'MISSED'} ${t.target} (${typeof t.value === 'number' ? t.value.toPrecision(3) : t.value})`);
}
const missed = result.targets.filter((t) => !t.ok).length;
log(`\n${result.targets.length - missed} targets met, ${missed} missed`);
if (jsonFile) {
  writeFileSync(jsonFile, JSON.stringify(result, null, 2));
  log(`wrote ${jsonFile}`);
}
