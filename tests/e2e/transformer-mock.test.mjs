// The transformer section's UI against a stand-in model that follows the loadModel contract
// (tests/e2e/mock/), so the section is tested before the real model and API land. The site is
// built a second time with `posenc` aliased to the mock wrapper, into a temporary folder.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { launchChromium, serveStatic } from '../browser/launch.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shots = join(root, 'tests', 'e2e', 'screenshots');
let out;
let server;
let browser;

/** A small .safetensors file: vocabulary, tags and config in the metadata, one embedding table. */
function mockModelFile({ unk = true } = {}) {
  const vocab = [unk ? '<unk>' : '<pad>', 'the', 'dog', 'man', 'cat', 'bit', 'saw', 'chased', 'a'];
  const d = 8;
  const data = new Float32Array(vocab.length * d).map((_, i) => Math.sin(i * 0.7) * 0.3);
  const head = {
    __metadata__: {
      vocab: JSON.stringify(vocab),
      tags: JSON.stringify(['agent', 'patient', 'other']),
      config: JSON.stringify({ dModel: d, heads: 2, layers: 1, preset: 'vaswani' }),
    },
    'embedding.weight': { dtype: 'F32', shape: [vocab.length, d], data_offsets: [0, data.byteLength] },
  };
  let json = JSON.stringify(head);
  while ((8 + json.length) % 8) json += ' ';
  const bytes = Buffer.alloc(8 + json.length + data.byteLength);
  bytes.writeBigUInt64LE(BigInt(json.length), 0);
  bytes.write(json, 8, 'utf8');
  Buffer.from(data.buffer).copy(bytes, 8 + json.length);
  return bytes;
}

before(async () => {
  out = mkdtempSync(join(tmpdir(), 'posenc-demo-mock-'));
  await build({
    configFile: false,
    logLevel: 'warn',
    root: join(root, 'web'),
    base: './',
    resolve: { alias: [{ find: /^posenc$/, replacement: join(root, 'tests/e2e/mock/posenc-mock-model.js') }] },
    worker: { format: 'es' },
    build: { outDir: out, emptyOutDir: true, target: 'es2022' },
  });
  server = await serveStatic(out);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (out) rmSync(out, { recursive: true, force: true });
});

test('5 transformer UI with a stand-in model: tokens, tags with and without PE, attention, unknown words', async () => {
  const problems = [];
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
  // whether or not the build holds a model file, the section offers a file picker: load the stand-in
  await page.locator('#transformer-file').setInputFiles({ name: 'mock.safetensors', mimeType: 'application/octet-stream', buffer: mockModelFile() });
  await page.waitForFunction(() => document.getElementById('transformer-model-name')?.textContent.includes('mock.safetensors'));
  assert.equal(await page.locator('#transformer').getAttribute('data-model'), 'ready');

  const tags = (sel) => page.locator(`${sel} .token`).evaluateAll((els) => els.map((e) => e.dataset.tag));
  assert.deepEqual(await tags('#transformer-tokens'), ['other', 'agent', 'other', 'other', 'patient']);
  await page.locator('#transformer-controls [name=pe]').uncheck();
  assert.deepEqual(await tags('#transformer-tokens'), ['other', 'agent', 'other', 'other', 'agent']);
  await page.locator('#transformer-controls [name=pe]').check();
  assert.deepEqual(await tags('#transformer-pair figure[data-sentence="the man bit the dog"] .tokens[data-pe="true"]'), ['other', 'agent', 'other', 'other', 'patient']);
  assert.equal(await page.locator('#transformer-heads figure').count(), 2);
  assert.ok(await page.locator('#transformer-input canvas').count());
  // unknown words are shown and flagged
  await page.locator('#transformer-controls [name=sentence]').fill('the zebra saw a cat');
  const unknown = page.locator('#transformer-tokens .token.unknown');
  assert.equal(await unknown.count(), 1);
  assert.match(await unknown.innerText(), /zebra[\s\S]*unknown → <unk>/);
  assert.match(await page.locator('#transformer-tokens .notice').innerText(), /replaced by <unk>/);
  // a model without an unknown-word token: the word is struck out and left out, visibly
  await page.locator('#transformer-file').setInputFiles({ name: 'mock-no-unk.safetensors', mimeType: 'application/octet-stream', buffer: mockModelFile({ unk: false }) });
  await page.waitForFunction(() => document.getElementById('transformer-model-name')?.textContent.includes('mock-no-unk'));
  await page.locator('#transformer-controls [name=sentence]').fill('the zebra saw a cat');
  assert.match(await page.locator('#transformer-tokens .token.unknown').innerText(), /zebra[\s\S]*left out/);
  assert.deepEqual(await tags('#transformer-tokens'), ['other', undefined, 'other', 'other', 'patient']);
  assert.match(await page.locator('#transformer-tokens .notice').innerText(), /left out of its input: "zebra"/);
  await page.locator('#transformer').screenshot({ path: join(shots, 'transformer-mock.png') });
  await page.locator('#transformer-controls [name=sentence]').fill('the dog bit the man');
  assert.deepEqual(problems, []);
});
