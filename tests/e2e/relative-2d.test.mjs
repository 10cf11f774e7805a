// End-to-end tests of the demo page's sections 13 and 14 (issue 24: T5's relative position buckets,
// the 2D RoPE of vision towers) in Debian's Chromium through playwright-core, against the built
// static site (web/dist, made by `npm run build:demo`) served on 127.0.0.1. The numbers read off
// the page are compared with the reference fixtures (tests/fixtures/relative/t5.json: PyTorch's
// T5Attention buckets; tests/fixtures/vision_rope/: HF's vision RoPE orders and cos tables) and with
// T5's formula written out here, not with posenc. Screenshots go to
// tests/e2e/screenshots/issue24-*.png (gitignored) for review.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../browser/launch.mjs';
import { canvasInk, openDemo, readCell, sectionChecks, serveDemo, setInput } from './page.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const site = join(root, 'web', 'dist');
const shots = join(root, 'tests', 'e2e', 'screenshots');
const SECTIONS = ['relative', 'rotary2d'];
const fixture = (path) => JSON.parse(readFileSync(join(root, 'tests/fixtures', path), 'utf8'));

let browser;
let server;
let page;
const problems = []; // console errors, page errors, failed requests
const open = (options = {}, label = 'page') => openDemo(browser, server.url, { options, label, problems, ready: SECTIONS.map((id) => `#${id}[data-ready="true"]`) });

async function shoot(p, id, name = id) {
  await p.locator(`#${id}`).screenshot({ path: join(shots, `issue24-${name}.png`) });
}

/**
 * T5Attention._relative_position_bucket in float64 (away from the few distances where HF's float32
 * chain rounds differently: the tests below use it only there, and the fixture at the edges).
 */
function t5Bucket(r, numBuckets, maxDistance, bidirectional) {
  let n = numBuckets;
  let base = 0;
  let d;
  if (bidirectional) {
    n = Math.floor(n / 2);
    if (r > 0) base = n;
    d = Math.abs(r);
  } else d = Math.max(-r, 0);
  const maxExact = Math.floor(n / 2);
  if (d < maxExact) return base + d;
  return base + Math.min(maxExact + Math.trunc((Math.log(d / maxExact) / Math.log(maxDistance / maxExact)) * (n - maxExact)), n - 1);
}

before(async () => {
  mkdirSync(shots, { recursive: true });
  assert.ok(statSync(join(site, 'index.html')).isFile(), 'web/dist/index.html missing: run `npm run build:demo` first');
  server = await serveDemo(site); // cross-origin isolated, as Vite's servers serve it
  browser = await launchChromium();
  page = await open({}, 'light');
});

after(async () => {
  await browser?.close();
  await server?.close();
});

describe('demo page, sections 13-14 (issue 24)', () => {
  test('13 T5 buckets: the plotted row is PyTorch\'s, the regions and the cap are where T5 puts them', async () => {
    const summary = page.locator('#relative-summary');
    const t5 = fixture('relative/t5.json');
    for (const attention of ['bidirectional', 'causal']) {
      const bidirectional = attention === 'bidirectional';
      await page.locator('#relative-controls [name=attention]').selectOption(attention);
      await page.waitForFunction((b) => document.getElementById('relative-call').textContent.includes(`bidirectional: ${b}`), bidirectional);
      const d = await summary.evaluate((s) => ({ ...s.dataset }));
      const from = Number(d.from);
      const row = d.buckets.split(' ').map(Number);
      assert.equal(from, -320);
      assert.equal(row.length, Number(d.to) - from + 1);
      // every distance of the fixture's (32, 128) setting inside the plotted range
      const setting = t5.settings.find((s) => s.numBuckets === 32 && s.maxDistance === 128 && s.bidirectional === bidirectional);
      let checked = 0;
      setting.relativePositions.forEach((r, i) => {
        if (r < from || r > Number(d.to)) return;
        assert.equal(row[r - from], setting.buckets[i], `${attention}: bucket of key - query = ${r}`);
        checked++;
      });
      assert.ok(checked > 30, `${attention}: only ${checked} fixture distances in range`);
      assert.equal(d.maxExact, String(setting.maxExact));
      // the last bucket starts where T5's formula first gives n - 1 (bidirectional 91, causal 113)
      const n = bidirectional ? 16 : 32;
      const firstLast = Array.from({ length: 321 }, (_, k) => k).find((k) => t5Bucket(-k, 32, 128, bidirectional) === n - 1);
      assert.equal(d.lastStart, String(firstLast));
      assert.equal(row[0], n - 1, 'the farthest key left is in the last bucket');
      const text = await summary.innerText();
      assert.match(text, new RegExp(`maxExact = numBuckets / ${bidirectional ? 4 : 2} = 32 / ${bidirectional ? 4 : 2} = ${setting.maxExact}`));
      assert.match(text, new RegExp(`from distance ${firstLast} on every key shares the last bucket ${n - 1}`));
      assert.match(text, /cannot tell a key 200 tokens away from one 2,000 away/);
      const ink = await canvasInk(page, '#relative-chart canvas');
      assert.ok(ink[0] > 0.05, `${attention}: bucket plot looks blank (${ink[0]})`);
      await shoot(page, 'relative', `relative-${attention}`);
    }
    await page.locator('#relative-controls [name=attention]').selectOption('bidirectional');
    await page.waitForFunction(() => document.getElementById('relative-call').textContent.includes('bidirectional: true'));

    // the readout under the pointer: the bucket of the distance and the distances it holds
    const over = page.locator('#relative-chart .u-over');
    await over.scrollIntoViewIfNeeded();
    const box = await over.boundingBox();
    const readout = page.locator('#relative-readout');
    for (const target of [-200, -5, 50]) {
      await page.mouse.move(box.x + ((target + 320) / 640) * box.width, box.y + box.height / 2);
      await page.waitForFunction((t) => Math.abs(Number(document.getElementById('relative-readout').dataset.distance) - t) <= 2, target);
      const r = Number(await readout.getAttribute('data-distance'));
      assert.equal(Number(await readout.getAttribute('data-bucket')), t5Bucket(r, 32, 128, true), `readout at ${r}`);
    }
    // at about 50: a log bucket holding several distances; at -200: the last one
    assert.match(await readout.innerText(), /: bucket 2\d, which holds key − query from \d+ to \d+ \(\d+ distances\)/);
    await page.mouse.move(box.x + (120 / 640) * box.width, box.y + box.height / 2);
    await page.waitForFunction(() => Number(document.getElementById('relative-readout').dataset.distance) < -150);
    assert.match(await readout.innerText(), /bucket 15, which holds key − query ≤ −91, and every farther key/);

    // the same from the keyboard: Home is the first distance
    await page.mouse.move(0, 0);
    await over.focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Home');
    await page.waitForFunction(() => document.getElementById('relative-readout').dataset.distance === '-320');

    // other settings: 64 buckets (maxExact 16), and a zoomed range where the exact region is visible
    await setInput(page, '#relative-controls [name=numBuckets]', 64);
    await page.waitForFunction(() => document.getElementById('relative-summary').dataset.maxExact === '16');
    const row64 = (await summary.getAttribute('data-buckets')).split(' ').map(Number);
    const s64 = t5.settings.find((s) => s.numBuckets === 64 && s.maxDistance === 128 && s.bidirectional);
    s64.relativePositions.forEach((r, i) => {
      if (r >= -320 && r <= 320) assert.equal(row64[r + 320], s64.buckets[i], `64 buckets: ${r}`);
    });
    await setInput(page, '#relative-controls [name=span]', 40);
    await page.waitForFunction(() => document.getElementById('relative-summary').dataset.from === '-40');
    await shoot(page, 'relative', 'relative-64-zoom');
    // a bad pair is the library's message, inline
    await setInput(page, '#relative-controls [name=numBuckets]', 32);
    await setInput(page, '#relative-controls [name=maxDistance]', 5);
    await page.waitForFunction(() => !document.getElementById('relative-error').hidden);
    assert.match(await page.locator('#relative-error').innerText(), /posenc\.relativeBuckets: maxDistance must be greater than maxExact = 8/);
    await setInput(page, '#relative-controls [name=maxDistance]', 128);
    await setInput(page, '#relative-controls [name=span]', 320);
    assert.equal(await page.locator('#relative-error').isVisible(), false);
  });

  test('13 T5 bias: each head\'s map is its table column gathered by bucket, the decoder mask drawn', async () => {
    const figs = page.locator('#relative-heads figure:not([hidden])');
    assert.equal(await figs.count(), 8);
    assert.equal(await page.locator('#relative-heads').getAttribute('data-length'), '48');
    const ink = await canvasInk(page, '#relative-heads canvas:not(.colorbar)');
    assert.ok(ink.every((v) => v > 0.01), `a bias map looks blank (${ink})`);
    // the heads differ: their table columns are not all equal
    const tables = await figs.evaluateAll((els) => els.map((f) => JSON.parse(f.dataset.table)));
    assert.equal(new Set(tables.map((t) => JSON.stringify(t))).size, 8, 'two heads have the same table');
    assert.match(await page.locator('#relative-bias-help').innerText(), /synthetic, not trained weights/);
    // bias[h, q, k] = table[bucket(k - q), h] (exact copies), for cells before, on and after the diagonal
    for (const [head, q, k] of [[1, 10, 3], [2, 40, 2], [3, 5, 40], [5, 20, 20], [8, 0, 47]]) {
      const v = await readCell(page, `#relative-heads figure[data-head="${head}"] .heatmap`, 'relative-bias-readout', q, k);
      const bucket = t5Bucket(k - q, 32, 128, true);
      assert.equal(v, tables[head - 1][bucket], `head ${head}, query ${q}, key ${k}: bucket ${bucket}`);
    }
    await shoot(page, 'relative', 'relative-bias');
    // the table does not depend on the plotted range: zoomed to ±40, a key 47 away still has its own value
    await setInput(page, '#relative-controls [name=span]', 40);
    await page.waitForFunction(() => document.getElementById('relative-summary').dataset.from === '-40');
    const far = await page.locator('#relative-heads figure[data-head="4"]').evaluate((f) => JSON.parse(f.dataset.table));
    assert.deepEqual(far, tables[3]);
    const v47 = await readCell(page, '#relative-heads figure[data-head="4"] .heatmap', 'relative-bias-readout', 0, 47);
    assert.equal(v47, far[t5Bucket(47, 32, 128, true)]);
    await setInput(page, '#relative-controls [name=span]', 320);
    // 12 heads, a causal decoder: the keys after the query are masked, their value is bucket 0's
    await setInput(page, '#relative-controls [name=heads]', 12);
    await page.locator('#relative-controls [name=attention]').selectOption('causal');
    await page.waitForFunction(() => document.getElementById('relative-heads').dataset.shown === '12' && document.getElementById('relative-call').textContent.includes('bidirectional: false'));
    assert.equal(await page.locator('#relative-mask-key').isVisible(), true);
    const causal = await page.locator('#relative-heads figure:not([hidden])').evaluateAll((els) => els.map((f) => JSON.parse(f.dataset.table)));
    const v = await readCell(page, '#relative-heads figure[data-head="1"] .heatmap', 'relative-bias-readout', 3, 30);
    assert.equal(v, causal[0][0]);
    assert.match(await page.locator('#relative-bias-readout').innerText(), /\(masked in a decoder\)/);
    const w = await readCell(page, '#relative-heads figure[data-head="10"] .heatmap', 'relative-bias-readout', 40, 7);
    assert.equal(w, causal[9][t5Bucket(7 - 40, 32, 128, false)]);
    await shoot(page, 'relative', 'relative-causal-12');
    await setInput(page, '#relative-controls [name=heads]', 8);
    await page.locator('#relative-controls [name=attention]').selectOption('bidirectional');
    await page.waitForFunction(() => document.getElementById('relative-mask-key').hidden);
  });

  test('14 vision 2D RoPE: patch orders and cos tables are Hugging Face\'s (Qwen2-VL, Qwen2.5-VL windows, Pixtral)', async () => {
    const form = '#rotary2d-controls';
    const summary = page.locator('#rotary2d-summary');
    const orderOf = async () => (await page.locator('#rotary2d-order').getAttribute('data-order')).split(' ').map(Number);
    // the fixtures' coordinate tables are flat, [position, frequency] row-major
    /** The sequence index of each cell from a fixture's per-row h and w positions. */
    const expectedOrder = (hPos, wPos, W) => {
      const out = new Array(hPos.length);
      hPos.forEach((h, i) => { out[h * W + wPos[i]] = i; });
      return out;
    };
    const pick = async (model, H, W, k, order) => {
      await page.locator(`${form} [name=model]`).selectOption(String(model));
      if (order) await page.locator(`${form} [name=order]`).selectOption(order);
      await setInput(page, `${form} [name=height]`, H);
      await setInput(page, `${form} [name=width]`, W);
      await setInput(page, `${form} [name=k]`, k);
      await page.waitForFunction(([h, w, kk]) => {
        const d = document.getElementById('rotary2d-summary').dataset;
        return d.height === String(h) && d.width === String(w) && d.k === String(kk);
      }, [H, W, k]);
      assert.equal(await page.locator('#rotary2d-error').isVisible(), false, await page.locator('#rotary2d-error').innerText());
    };

    // the page opens on Qwen2-VL, 8 x 12 patches, frequency 2, without the order toggle
    const d0 = await summary.evaluate((s) => ({ ...s.dataset }));
    assert.deepEqual([d0.model, d0.headDim, d0.height, d0.width, d0.k], ['qwen2_vl', '80', '8', '12', '2']);
    assert.equal(await page.locator(`${form} [name=order]`).isVisible(), false);
    assert.match(await page.locator('#rotary2d-order-caption').innerText(), /2 x 2 merge blocks/);
    await shoot(page, 'rotary2d', 'rotary2d-qwen2-vl');

    // Qwen2-VL 4 x 6: the 2 x 2 merge order, and cos(h w_k), cos(w w_k) of HF's frequencies
    const q2 = fixture('vision_rope/qwen2_vl.json');
    const c46 = q2.cases.find((c) => c.id === '1x4x6');
    await pick(0, 4, 6, 3);
    assert.deepEqual(await orderOf(), expectedOrder(c46.hPositions, c46.wPositions, 6));
    assert.deepEqual((await page.locator('#rotary2d-order span').allInnerTexts()).slice(0, 6), ['0', '1', '4', '5', '8', '9']);
    assert.equal(Number(await summary.getAttribute('data-wh')), Math.fround(q2.invFreq.values[3]), 'w_3: HF\'s float32 frequency');
    for (const [h, w] of [[0, 0], [3, 1], [2, 5]]) {
      const ch = await readCell(page, '#rotary2d-hmap', 'rotary2d-h-readout', h, w);
      const cw = await readCell(page, '#rotary2d-wmap', 'rotary2d-w-readout', h, w);
      assert.ok(Math.abs(ch - c46.coordinateCos[h * 20 + 3]) <= 1e-7, `h map (${h}, ${w}): ${ch} vs ${c46.coordinateCos[h * 20 + 3]}`);
      assert.ok(Math.abs(cw - c46.coordinateCos[w * 20 + 3]) <= 1e-7, `w map (${h}, ${w}): ${cw} vs ${c46.coordinateCos[w * 20 + 3]}`);
    }

    // Qwen2.5-VL: the window order (windows of 4 x 4 merged tokens) against get_window_index
    const q25 = fixture('vision_rope/qwen2_5_vl.json');
    await page.locator(`${form} [name=model]`).selectOption('1');
    await page.waitForFunction(() => document.getElementById('rotary2d-summary').dataset.model === 'qwen2_5_vl');
    assert.equal(await page.locator(`${form} [name=order]`).isVisible(), true);
    for (const id of ['1x4x10', '1x12x20']) {
      const c = q25.cases.find((x) => x.id === id);
      const [, H, W] = c.gridThw[0];
      await pick(1, H, W, 5, 'window');
      assert.deepEqual(await orderOf(), expectedOrder(c.hPositions, c.wPositions, W), `${id}: window order`);
      const ch = await readCell(page, '#rotary2d-hmap', 'rotary2d-h-readout', H - 1, 2);
      assert.ok(Math.abs(ch - c.coordinateCos[(H - 1) * 20 + 5]) <= 1e-7, `${id}: h map`);
      const cw = await readCell(page, '#rotary2d-wmap', 'rotary2d-w-readout', 1, W - 1);
      assert.ok(Math.abs(cw - c.coordinateCos[(W - 1) * 20 + 5]) <= 1e-7, `${id}: w map`);
    }
    assert.match(await page.locator('#rotary2d-order-caption').innerText(), /4 x 4 windows of 2 x 2 blocks/);
    await shoot(page, 'rotary2d', 'rotary2d-qwen25-window');
    // the patch order of the same grid is Qwen2-VL's (the identity window order of 4 x 6 too)
    await page.locator(`${form} [name=order]`).selectOption('patch');
    await page.waitForFunction(() => /merge blocks row-major/.test(document.getElementById('rotary2d-order-caption').textContent));
    const patchOrder = await orderOf();
    assert.deepEqual(patchOrder.slice(0, 4), [0, 1, 4, 5]);

    // Pixtral: row-major, the rows take the even frequencies and the columns the odd ones
    const px = fixture('vision_rope/pixtral.json').configs[0];
    const c16 = px.cases.find((c) => c.heightPatches === 16 && c.widthPatches === 16);
    await pick(2, 16, 16, 4);
    assert.deepEqual(await orderOf(), [...Array(256).keys()]);
    const d = await summary.evaluate((s) => ({ ...s.dataset }));
    assert.equal(d.headDim, '64');
    assert.equal(Number(d.wh), Math.fround(px.invFreq.values[8]));
    assert.equal(Number(d.ww), Math.fround(px.invFreq.values[9]));
    for (const [h, w] of [[0, 15], [7, 3], [15, 9]]) {
      const ch = await readCell(page, '#rotary2d-hmap', 'rotary2d-h-readout', h, w);
      const cw = await readCell(page, '#rotary2d-wmap', 'rotary2d-w-readout', h, w);
      assert.ok(Math.abs(ch - c16.rowCos[h * 16 + 4]) <= 1e-7, `Pixtral h map (${h}, ${w})`);
      assert.ok(Math.abs(cw - c16.colCos[w * 16 + 4]) <= 1e-7, `Pixtral w map (${h}, ${w})`);
    }
    assert.equal(await page.locator(`${form} [name=order]`).isVisible(), false);
    assert.match(await page.locator('#rotary2d-call').innerText(), /even frequencies/);
    await shoot(page, 'rotary2d', 'rotary2d-pixtral');

    // an odd Qwen grid is the library's message, inline; the page recovers
    await page.locator(`${form} [name=model]`).selectOption('0');
    await setInput(page, `${form} [name=height]`, 5);
    await page.waitForFunction(() => !document.getElementById('rotary2d-error').hidden);
    assert.match(await page.locator('#rotary2d-error').innerText(), /posenc\.rotary2d\.cosSin: .*multiple of spatialMergeSize 2/);
    await pick(0, 8, 12, 2);
  });

  sectionChecks({ what: 'sections 13-14', sections: SECTIONS, open, shoot, page: () => page, problems });
});
