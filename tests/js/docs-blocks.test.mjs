// Every code block of README.md and docs/*.md, run as written (issue 25). One test per block,
// named by file and line of its opening fence.
//
// What each kind of block gets:
// - ```js / ```ts (ts: types stripped by the installed typescript): written to a temp .mjs file in a
//   temp directory whose node_modules/posenc links to the package (dist/, or POSENC_PACKAGE_DIR:
//   the installed tarball) and run by `node` there, as a reader would run it; it must exit 0.
//   * A block is complete (its own imports and `await init()`), or says in a marker comment
//     `// given: name (what it is); name (what it is)` which names stand for the reader's own data
//     or for an object made earlier in the page; GIVEN below defines each, keyed by that exact
//     text (a marker this file does not know fails the test).
//   * Files a block reads (config.json, layer.json, the tagger model) are put in its directory
//     from tests/fixtures (FILES below).
//   * A `console.log(...)` whose comment states the output is checked: the text after the last
//     " = " of the comment, or the whole comment, must be the printed line; a comment that starts
//     with a number ("4.8e-7 from PyTorch") must match the printed number to two digits. CHECKS
//     adds asserts for values stated in other comments (ropeIndex's positions table).
//   * A block with the comment `// (browser only)` is only parsed (`node --check`), and counted.
// - ```python: parsed (python3's ast), not run: the machines that run `npm test` have no torch.
//   TRANSFORMER.md's first one writes layer.json; tests/fixtures/docs/layer.json.gz is its output,
//   run once with torch 1.13, which the JavaScript block after it reads.
// - ```cpp: compiled with g++ -fsyntax-only against cpp/include, inside a main().
// - ```sh: not run by this test: the README's two (npm install; the build from source) and
//   BENCHMARKS.md's (the benchmarks) are what `npm test` / `npm run bench` themselves run.
// - ``` (no language): formulas and printed text, nothing to run.
// Any other language (```html included: the docs have none today) fails the test until this file
// handles it: no block is skipped silently. The summary test prints the
// counts.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { fixtureDir, root } from './helpers.mjs';

const packageDir = process.env.POSENC_PACKAGE_DIR || root;
const DOCS = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

/** Every fenced block: { file, line (1-based, the opening fence), lang, code }. */
export function extractBlocks(file, text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```\s*([\w+-]*)\s*$/.exec(lines[i]);
    if (!open) continue;
    let j = i + 1;
    while (j < lines.length && !/^\s*```\s*$/.test(lines[j])) j++;
    assert.ok(j < lines.length, `${file}:${i + 1}: code block never closed`);
    blocks.push({ file, line: i + 1, lang: open[2].toLowerCase(), code: lines.slice(i + 1, j).join('\n') });
    i = j;
  }
  return blocks;
}

// ---- what blocks may be given ----------------------------------------------------------------
const readJson = (...p) => JSON.parse(readFileSync(join(fixtureDir, ...p), 'utf8'));
const fixtureConfig = (file, id) => readJson('relative', file).configs.find((c) => c.id === id).config;
const t5Small = () => fixtureConfig('t5.json', 't5-small');
const qwen2vl = () => ({ model_type: 'qwen2_vl', ...readJson('vision_rope', 'qwen2_vl.json').config });
const js = (name, value) => `const ${name} = ${JSON.stringify(value)};`;
const PE = `const pe = await (await import('posenc')).init();`;
const LLAMA = `const rot = pe.rotary({ preset: 'llama-3.1-8b' });`;
// Arbitrary but fixed numbers where only the shape matters.
const floats = (n) => `Float32Array.from({ length: ${n} }, (_, i) => Math.sin(i) / 4)`;

/** marker text -> JavaScript that defines the name, run before the block. */
const GIVEN = {
  'pe (an instance)': () => PE,
  'table (a Float32Array [32, 8])': () => `const table = ${floats(32 * 8)};`,
  "config (t5-small's config.json)": () => js('config', t5Small()),
  "qwen2vlConfig (Qwen2-VL's config.json)": () => js('qwen2vlConfig', qwen2vl()),
  "config (Qwen2-VL's config.json)": () => js('config', qwen2vl()),
  'patchQueries (Float32Array [1024, 16, 80])': () => `const patchQueries = ${floats(1024 * 16 * 80)};`,
  "deberta (deberta-v3-base's config.json)": () => js('deberta', fixtureConfig('deberta.json', 'deberta-v3-base')),
  "rot (a Rotary: pe.rotary({ preset: 'llama-3.1-8b' }))": () => [PE, LLAMA],
  'q16 (Uint16Array [1, 32, L, 128] of float16 bits)': () => `const q16 = new Uint16Array(1 * 32 * 7 * 128).fill(0x3c00);`,
  "config (BLOOM's config.json)": () => js('config', { model_type: 'bloom', n_head: 16 }),
  'keys (the key count)': () => `const keys = 6;`,
  'inputs (a tokenizer output with attention_mask [batch, keys])': () =>
    `const inputs = { attention_mask: [[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]] };`,
  'q (an ort.Tensor or { data, dims: [2, 32, L, 128] })': () =>
    ['const L = 5;', `const q = { data: ${floats(2 * 32 * 5 * 128)}, dims: [2, 32, L, 128] };`],
  'positionIds (BigInt64Array [2, L])': () => `const positionIds = BigInt64Array.from([0, 1, 2, 3, 4, 7, 8, 9, 10, 11], BigInt);`,
  'out ({ cos, sin }: Float32Arrays [2, L, 64])': () =>
    `const out = { cos: new Float32Array(2 * L * 64), sin: new Float32Array(2 * L * 64) };`,
  'weights (the twelve tensors of a 64 x 4 x 256 layer)': () => [
    `import { layerState as __layerState } from ${JSON.stringify(new URL('../fixtures/layer/lcg.mjs', import.meta.url).href)};`,
    'const weights = __layerState(1, 64, 256);',
  ],
  'x (Float32Array [4, 64])': () => `const x = ${floats(4 * 64)};`,
};

/** file name in the block's directory -> its bytes, for blocks that read files. */
const FILES = {
  'config.json': () => JSON.stringify(readJson('rotary', 'hf-llama-3.1-8b.json').config),
  'layer.json': () => gunzipSync(readFileSync(join(fixtureDir, 'docs', 'layer.json.gz'))),
  'tests/fixtures/model/tagger.safetensors': () => readFileSync(join(fixtureDir, 'model', 'tagger.safetensors')),
};

/** Asserts for values a block states in comments other than console.log's, keyed by code it contains. */
const CHECKS = [
  {
    contains: 'ropeIndex(config, { inputIds',
    // The comment's t / h / w rows and ropeDelta, read from the block itself.
    after: (code) => {
      const rows = ['t', 'h', 'w'].map((axis) => {
        const m = new RegExp(`^//\\s+${axis} ([\\d ]+)$`, 'm').exec(code);
        assert.ok(m, `the comment's ${axis} row`);
        return m[1].trim().split(/\s+/).map(Number);
      });
      const delta = /ropeDelta: (-?\d+)/.exec(code);
      assert.ok(delta, "the comment's ropeDelta");
      return `import __assert from 'node:assert/strict';
__assert.deepEqual(Array.from(positions), ${JSON.stringify(rows.flat())});
__assert.equal(ropeDelta, ${delta[1]});`;
    },
  },
];

// ---- running ----------------------------------------------------------------------------------
const work = mkdtempSync(join(tmpdir(), 'posenc-docs-'));
mkdirSync(join(work, 'node_modules'));
symlinkSync(packageDir, join(work, 'node_modules', 'posenc'), 'dir');
symlinkSync(join(root, 'node_modules', 'onnxruntime-web'), join(work, 'node_modules', 'onnxruntime-web'), 'dir');
after(() => rmSync(work, { recursive: true, force: true }));

const counts = { run: 0, browserOnly: 0, python: 0, cpp: 0, sh: 0, text: 0 };

function givens(block) {
  const out = [];
  for (const m of block.code.matchAll(/^\s*\/\/ given: (.*)$/gm)) {
    for (const item of m[1].split(/;\s*/).filter(Boolean)) {
      const define = GIVEN[item.trim()];
      assert.ok(define, `${block.file}:${block.line}: no definition for "given: ${item.trim()}" in GIVEN`);
      out.push(...[define()].flat());
    }
  }
  // A statement two markers need (pe) is written once.
  return [...new Set(out)].join('\n');
}

function checkPrinted(block, stdout) {
  const printed = stdout.split('\n').filter((l) => l !== '');
  const stated = [...block.code.matchAll(/console\.log\(.*\);\s*\/\/\s*(.+)$/gm)].map((m) => m[1].trim());
  let k = 0;
  for (const comment of stated) {
    const got = printed[k++];
    assert.ok(got !== undefined, `${block.file}:${block.line}: printed fewer lines than stated (${comment})`);
    const number = /^(-?\d[\d.]*(?:e-?\d+)?)\b/.exec(comment);
    if (number && !comment.includes(' = ')) {
      assert.equal(Number(got).toPrecision(2), Number(number[1]).toPrecision(2), `${block.file}:${block.line}: printed ${got}, the comment says ${comment}`);
    } else {
      const want = comment.includes(' = ') ? comment.slice(comment.lastIndexOf(' = ') + 3) : comment;
      assert.equal(got, want, `${block.file}:${block.line}: printed line ${k}`);
    }
  }
}

function runJs(block) {
  let code = block.code;
  if (block.lang === 'ts' || block.lang === 'typescript') {
    const ts = JSON.parse(execFileSync(process.execPath, ['-e',
      `const ts = require('typescript'); process.stdout.write(JSON.stringify(ts.transpileModule(require('fs').readFileSync(0, 'utf8'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText))`,
    ], { input: code, cwd: root }).toString());
    code = ts;
  }
  const dir = join(work, `${block.file.replace(/\W/g, '_')}-${block.line}`);
  mkdirSync(dir, { recursive: true });
  symlinkSync(join(work, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const [name, bytes] of Object.entries(FILES)) {
    if (!code.includes(`'${name}'`)) continue;
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), bytes());
  }
  const checks = CHECKS.filter((c) => code.includes(c.contains)).map((c) => c.after(code));
  const source = `${givens(block)}\n${code}\n${checks.join('\n')}\n`;
  const file = join(dir, 'block.mjs');
  writeFileSync(file, source);
  const browserOnly = /\/\/ \(browser only\)/.test(code);
  const r = spawnSync(process.execPath, browserOnly ? ['--check', file] : [file], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${block.file}:${block.line} failed (${file}):\n${r.stderr}\n--- the program run:\n${source}`);
  if (browserOnly) {
    counts.browserOnly++;
    return;
  }
  checkPrinted(block, r.stdout);
  counts.run++;
}

function checkPython(block) {
  const r = spawnSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], { input: block.code, encoding: 'utf8' });
  assert.equal(r.status, 0, `${block.file}:${block.line}: python block does not parse:\n${r.stderr}`);
  counts.python++;
}

function checkCpp(block) {
  const dir = join(work, 'cpp');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${block.file.replace(/\W/g, '_')}-${block.line}.cpp`);
  // Every header of the layer (the block's own note names position_step.hpp, transformer_layer.hpp).
  const headers = readdirSync(join(root, 'cpp', 'include', 'posenc', 'nn'))
    .filter((h) => h.endsWith('.hpp')).map((h) => `#include "posenc/nn/${h}"`);
  writeFileSync(file, `${headers.join('\n')}\nint main() {\n${block.code}\n  return 0;\n}\n`);
  const r = spawnSync('g++', ['-std=c++17', '-fsyntax-only', '-Wall', '-Wno-unused-variable', '-I', join(root, 'cpp', 'include'), file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${block.file}:${block.line}: C++ block does not compile:\n${r.stderr}`);
  counts.cpp++;
}

const all = DOCS.flatMap((file) => extractBlocks(file, readFileSync(join(root, file), 'utf8')));

describe('docs code blocks', () => {
  for (const block of all) {
    test(`${block.file}:${block.line} (${block.lang || 'text'})`, () => {
      switch (block.lang) {
        case 'js': case 'javascript': case 'mjs': case 'ts': case 'typescript':
          return runJs(block);
        case 'python': return checkPython(block);
        case 'cpp': case 'c++': return checkCpp(block);
        case 'sh': case 'bash': case 'shell': counts.sh++; return undefined; // see the header
        case '': case 'text': counts.text++; return undefined;
        default: assert.fail(`${block.file}:${block.line}: a \`\`\`${block.lang} block: neither run nor marked (add it to docs-blocks.test.mjs)`);
      }
    });
  }
  test('summary: every block counted', () => {
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    assert.equal(total, all.length, 'every block was run, parsed or counted as not code');
    assert.ok(counts.run >= 10, `at least ten JavaScript blocks run (${counts.run})`);
    console.log(`docs blocks: ${all.length}: ${counts.run} JavaScript run, ${counts.browserOnly} browser-only parsed, ` +
      `${counts.python} Python parsed, ${counts.cpp} C++ compiled, ${counts.sh} shell not run, ${counts.text} text`);
  });
});
