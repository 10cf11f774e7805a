// End-to-end tests of the demo's real-model views in Debian's Chromium through playwright-core,
// against the built static site (web/dist, made by `npm run build:demo`) served on 127.0.0.1:
//   section 8, layer by layer: a model's decoder layers read with pe.rotary({ config, layer }) and
//     pe.attentionMask, checked against the model fixtures tests/fixtures/rotary/models/*.json
//     (the PyTorch ports' per-layer answers), not against posenc;
//   section 12, multimodal position ids: ropeIndex from posenc/multimodal on the README's example.
// Also checks in Node that the trimmed configs of web/src/models.js read as their full fixture
// configs do. Screenshots go to tests/e2e/screenshots/models-*.png (gitignored) for review.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../browser/launch.mjs';
import { canvasInk, darkAndNarrow, openDemo, serveDemo } from './page.mjs';
import { init } from '../../dist/node.js';
import { LAYER_MODELS, VL_MODELS } from '../../web/src/models.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const site = join(root, 'web', 'dist');
const shots = join(root, 'tests', 'e2e', 'screenshots');
const TAU = 2 * Math.PI;

let browser;
let server;
let page;
const problems = []; // console errors, page errors, failed requests
const open = (options = {}, label = 'page') => openDemo(browser, server.url, { options, label, problems, ready: ['#rope-scaling[data-ready="true"]', '#mrope[data-ready="true"]'] });

const fixture = (name) => JSON.parse(readFileSync(join(root, 'tests/fixtures/rotary/models', `${name}.json`), 'utf8'));

async function shoot(p, selector, name) {
  await p.locator(selector).screenshot({ path: join(shots, `models-${name}.png`) });
}

const stripData = (p) => p.locator('#layers-strip').evaluate((s) => ({ ...s.dataset }));
const infoData = (p) => p.locator('#layers-info').evaluate((t) => ({ ...t.dataset }));
const cellsData = (p) => p.locator('#layers-cells .layer-cell').evaluateAll((cells) =>
  cells.map((c) => ({ layer: Number(c.dataset.layer), rope: c.dataset.rope, kind: c.dataset.kind, letter: c.querySelector('.k').textContent })));

/** Picks model i of the per-layer select and waits for its strip. */
async function pickModel(p, i) {
  await p.locator('#layers-controls [name=model]').selectOption(String(i));
  await p.waitForFunction((v) => document.getElementById('layers-strip').dataset.model === v, String(i));
}

/** Selects layer l in the strip (a click on its cell) and waits for the layer's facts. */
async function pickLayer(p, l) {
  await p.locator(`#layers-cells input[value="${l}"]`).check();
  await p.waitForFunction((v) => document.getElementById('layers-info').dataset.layer === v, String(l));
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

describe('demo page: real models layer by layer, multimodal position ids', () => {
  test('web/src/models.js: each trimmed config reads as its full fixture config, layer by layer', async () => {
    const pe = await init();
    const read = (config, n) => {
      const out = [];
      for (let l = 0; l < n; l++) {
        const r = pe.rotary({ config, layer: l });
        out.push(r && [r.modelType, r.layerType, r.headDim, r.rotaryDim, r.layout, r.scaling, r.attentionScaling,
          r.softmaxScaleFactor, r.mropeSection, r.mropeInterleaved, Array.from(r.inverseFrequencies), Array.from(r.inverseFrequenciesFor(1 << 20))]);
        r?.dispose();
        for (const [queryLength, keyLength, offset] of [[2, 16384, 16382], [8, 8, 0]]) {
          const m = pe.attentionMask(config, { layer: l, queryLength, keyLength, offset });
          out.push(m && Buffer.from(m).toString('base64'));
        }
        for (const offset of [0, 8191, 100000]) out.push(Array.from(pe.queryScales(config, { layer: l, length: 1, offset }) ?? []));
      }
      return JSON.stringify(out);
    };
    for (const m of [...LAYER_MODELS, ...VL_MODELS.filter((v) => v.fixture)]) {
      const fx = fixture(m.fixture);
      assert.equal(read(m.config, fx.numLayers), read(fx.config, fx.numLayers), `${m.fixture}: the trimmed config reads differently`);
      assert.ok(JSON.stringify(m.config).length < 1500, `${m.fixture}: trimmed config is large`);
    }
    // the README's Qwen2-VL config, with the RoPE keys of Qwen2-VL-7B-Instruct
    const rot = pe.rotary({ config: VL_MODELS[0].config });
    assert.deepEqual([...rot.mropeSection], [16, 24, 24]);
    assert.equal(rot.headDim, 128);
    rot.dispose();
  });

  test('8 layer by layer: every model\'s strip matches its fixture (RoPE or none, groups, attention, theta)', async () => {
    const names = JSON.parse(await page.locator('#layers-controls').getAttribute('data-fixtures'));
    assert.equal(names.length, LAYER_MODELS.length);
    for (let i = 0; i < names.length; i++) {
      await pickModel(page, i);
      const fx = fixture(names[i]);
      const strip = await stripData(page);
      const cells = await cellsData(page);
      assert.equal(Number(strip.layers), fx.numLayers, `${names[i]}: layer count`);
      assert.equal(cells.length, fx.numLayers, `${names[i]}: cells`);
      const noRope = fx.layers.filter((l) => l.rope === null).length;
      assert.equal(Number(strip.noRope), noRope, `${names[i]}: layers without RoPE`);
      // the page's RoPE groups are the fixture's distinct RoPEs, one to one
      const toPage = new Map();
      const toFixture = new Map();
      for (const c of cells) {
        const want = fx.layers[c.layer];
        assert.equal(c.rope === 'none', want.rope === null, `${names[i]} layer ${c.layer}: RoPE or none`);
        if (want.rope !== null) {
          assert.equal(toPage.get(want.rope) ?? c.rope, c.rope, `${names[i]} layer ${c.layer}: group`);
          assert.equal(toFixture.get(c.rope) ?? want.rope, want.rope, `${names[i]} layer ${c.layer}: group`);
          toPage.set(want.rope, c.rope);
          toFixture.set(c.rope, want.rope);
        }
        const kind = want.layerType === 'linear_attention' ? 'linear' : { causal: 'full', sliding: 'sliding', chunked: 'chunked' }[want.attention.kind];
        assert.equal(c.kind, kind, `${names[i]} layer ${c.layer}: attention`);
        assert.equal(c.letter, { full: 'F', sliding: 'S', chunked: 'C', linear: 'L' }[kind]);
      }
      assert.equal(Number(strip.groups), toFixture.size);
      // the legend's theta and scaling against the fixture's base and rope type
      const legend = await page.locator('#layers-legend li[data-theta]').evaluateAll((lis) => lis.map((li) => ({ ...li.dataset, text: li.textContent })));
      for (const g of legend) {
        const rope = fx.ropes[toFixture.get(g.rope)];
        assert.ok(Math.abs(Number(g.theta) / rope.base - 1) < 1e-3, `${names[i]}: theta ${g.theta} vs ${rope.base}`);
        assert.equal(g.scaling, rope.ropeType === 'mrope' ? 'default' : rope.ropeType, `${names[i]}: scaling`);
      }
      // the facts of a layer with RoPE: against the fixture's RoPE of that layer
      const withRope = fx.layers.findIndex((l) => l.rope !== null);
      await pickLayer(page, withRope);
      const facts = await infoData(page);
      const rope = fx.ropes[fx.layers[withRope].rope];
      assert.equal(facts.rotaryDim, String(rope.rotaryDim), `${names[i]}: rotaryDim`);
      assert.equal(facts.headDim, String(rope.headDim), `${names[i]}: headDim`);
      assert.equal(facts.layout, rope.layout, `${names[i]}: layout`);
      assert.equal(facts.layerType, fx.layers[withRope].layerType ?? '', `${names[i]}: layerType`);
      assert.equal(facts.modelType, fx.modelType, `${names[i]}: modelType`);
      const longest = TAU / rope.invFreq.values[rope.invFreq.values.length - 1];
      assert.ok(Math.abs(Number(facts.longestWavelength) / longest - 1) < 1e-6, `${names[i]}: longest wavelength ${facts.longestWavelength} vs ${longest}`);
      const plot = await canvasInk(page, '#layers-chart canvas');
      assert.ok(plot[0] > 0.01, `${names[i]}: wavelength plot blank`);
      console.log(`  ${names[i].padEnd(26)} ${String(fx.numLayers).padStart(2)} layers, ${String(noRope).padStart(2)} without RoPE, ` +
        `${toFixture.size} RoPE${toFixture.size > 1 ? 's' : ''}; read in ${strip.ms} ms`);
      assert.ok(Number(strip.ms) < 250, `${names[i]}: reading the layers took ${strip.ms} ms`);
    }
  });

  test('8 layer by layer: Gemma 3\'s local and global layers, a NoPE layer, the keyboard, an edited config', async () => {
    // Gemma 3 1B: every sixth layer global (theta 1e6), the rest sliding (theta 1e4, window 512)
    await pickModel(page, 0);
    let cells = await cellsData(page);
    assert.equal(cells.length, 26);
    assert.deepEqual(cells.filter((c) => c.kind === 'full').map((c) => c.layer), [5, 11, 17, 23]);
    const global = cells[5].rope;
    assert.notEqual(global, cells[0].rope);
    assert.ok(cells.every((c) => (c.layer % 6 === 5) === (c.rope === global)));
    const thetas = await page.locator('#layers-legend li[data-theta]').evaluateAll((lis) => lis.map((li) => Number(li.dataset.theta)));
    assert.deepEqual(thetas, [10000, 1000000]);
    assert.match(await page.locator('#layers-legend').innerText(), /θ 10,000: 22 layers \(sliding\)[\s\S]*θ 1,000,000: 4 layers \(full\)/);
    await pickLayer(page, 5);
    assert.equal((await infoData(page)).layerType, 'full_attention');
    // the selected layer's RoPE is the thick, marked series of the plot
    assert.match(await page.locator('#layers-chart .u-legend').innerText(), /▸ θ 1,000,000/);
    await pickLayer(page, 4);
    const local = await infoData(page);
    assert.equal(local.layerType, 'sliding_attention');
    assert.equal(local.attention, 'sliding');
    assert.match(await page.locator('#layers-info').innerText(), /the last 512 keys/);
    assert.match(await page.locator('#layers-chart .u-legend').innerText(), /layer 4's window 512/);
    await page.locator('#layers-strip').scrollIntoViewIfNeeded();
    await shoot(page, '#rope-scaling', 'layers-gemma3');

    // the keyboard: the strip is one radio group, the arrow keys move along it
    await page.locator('#layers-cells input[value="4"]').focus();
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.getElementById('layers-info').dataset.layer === '5');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(() => document.getElementById('layers-info').dataset.layer === '4');

    // SmolLM3: every fourth layer NoPE; changing the model redraws the strip
    await pickModel(page, LAYER_MODELS.findIndex((m) => m.fixture === 'smollm3-3b'));
    cells = await cellsData(page);
    assert.equal(cells.length, 36);
    assert.deepEqual(cells.filter((c) => c.rope === 'none').map((c) => c.layer), [3, 7, 11, 15, 19, 23, 27, 31, 35]);
    assert.equal(await page.locator('#layers-cells .layer-cell.no-rope').count(), 9);
    assert.match(await page.locator('#layers-legend').innerText(), /no RoPE: 9 layers \(NoPE\)/);
    await pickLayer(page, 3);
    const nope = await infoData(page);
    assert.equal(nope.rope, 'none');
    assert.equal(nope.attention, 'full');
    assert.match(await page.locator('#layers-info').innerText(), /null: no RoPE on this layer/);
    await shoot(page, '#layers-strip', 'layers-smollm3-strip');

    // Llama 4: NoPE layers with a query temperature (pe.queryScales), chunked RoPE layers
    await pickModel(page, LAYER_MODELS.findIndex((m) => m.fixture === 'llama4-scout-17b-16e'));
    await pickLayer(page, 3);
    const scales = JSON.parse((await infoData(page)).queryScales);
    const want = [0, 8190, 8191, 65535, 262143].map((p) => Math.fround(Math.log(Math.floor((p + 1) / 8192) + 1) * 0.1 + 1));
    scales.forEach((v, k) => assert.ok(Math.abs(v - want[k]) < 1e-6, `query scale ${v} vs ${want[k]}`));
    await pickLayer(page, 0);
    assert.equal((await infoData(page)).attention, 'chunked');
    await shoot(page, '#rope-scaling', 'layers-llama4');

    // Qwen3-Coder-Next: linear-attention layers have neither RoPE nor a mask
    await pickModel(page, LAYER_MODELS.findIndex((m) => m.fixture === 'qwen3-coder-next'));
    assert.match(await page.locator('#layers-legend').innerText(), /no RoPE: 36 layers \(linear attention\)/);
    await pickLayer(page, 0);
    assert.equal((await infoData(page)).attention, 'linear');
    await shoot(page, '#layers-strip', 'layers-qwen3-next-strip');

    // an edited config: Gemma 3 with every second layer global
    await pickModel(page, 0);
    await page.locator('.layers-config summary').click();
    const gemma = { ...LAYER_MODELS[0].config, sliding_window_pattern: 2 };
    await page.locator('#layers-config').fill(JSON.stringify(gemma, null, 2));
    await page.waitForFunction(() => document.getElementById('layers-strip').dataset.model === 'edited');
    cells = await cellsData(page);
    assert.equal(cells.filter((c) => c.kind === 'full').length, 13);
    // a broken one is reported; the last good strip stays, faded
    await page.locator('#layers-config').fill('{ "model_type": "gemma3_text", "num_hidden_layers": 26, "rope_theta": -1 }');
    await page.waitForFunction(() => !document.getElementById('layers-error').hidden);
    assert.match(await page.locator('#layers-error').innerText(), /rope_theta/);
    assert.ok(await page.locator('#layers-strip').evaluate((s) => s.classList.contains('stale')));
    await page.locator('#layers-config').fill('{ "model_type": "llama", "head_dim": 64 }');
    await page.waitForFunction(() => /num_hidden_layers/.test(document.getElementById('layers-error').textContent));
    await pickModel(page, 0);
    assert.equal(await page.locator('#layers-error').isHidden(), true);
    await page.locator('.layers-config summary').click();
  });

  test('12 multimodal position ids: the README example, a Qwen2.5-VL video, the frequency sections', async () => {
    await page.locator('#mrope-readme').click();
    const summary = page.locator('#mrope-summary');
    await page.waitForFunction(() => document.getElementById('mrope-summary').dataset.length === '10');
    const d = await summary.evaluate((s) => ({ ...s.dataset }));
    assert.equal(d.t, '0 1 1 1 1 1 1 4 5 6');
    assert.equal(d.h, '0 1 1 1 2 2 2 4 5 6');
    assert.equal(d.w, '0 1 2 3 1 2 3 4 5 6');
    assert.equal(d.delta, '-3');
    // the drawn rows say the same (the last column is the next token: 10 - 3 = 7 on each axis)
    for (const axis of ['t', 'h', 'w']) {
      const row = await page.locator(`#mrope-table tr[data-axis="${axis}"] td`).allInnerTexts();
      assert.deepEqual(row, [...d[axis].split(' '), '7'], `${axis} row`);
    }
    assert.match(await summary.innerText(), /ropeDelta = -3/);
    assert.match(await page.locator('#mrope-call').innerText(), /inputIds: \[151652, 151655 ×6, 151653, text ×2\], imageGridThw: \[\[1, 4, 6\]\]/);
    assert.deepEqual(await page.locator('#mrope-grids .mrope-grid span').allInnerTexts(), ['1,1,1', '1,1,2', '1,1,3', '1,2,1', '1,2,2', '1,2,3']);
    // Qwen2-VL's mrope_section [16, 24, 24]: the first 16 pairs turn with t, 24 with h, 24 with w
    assert.equal(await page.locator('#mrope-pairs').getAttribute('data-axes'), 't'.repeat(16) + 'h'.repeat(24) + 'w'.repeat(24));
    await shoot(page, '#mrope', 'mrope-readme');

    // Qwen2.5-VL, 3 text tokens, a video of 3 frames of 2 x 2 tokens, 1.5 s per frame, 1 text token:
    // frame f at t = start + trunc(f * fround(tokens_per_second 2 * 1.5)) = 4, 7, 10; the text after
    // goes on from start + max(h, w) = 6 (HF's current get_rope_index, as
    // tests/fixtures/rope_index/cases.json's "qwen2_5_vl: one video"), delta = 10 + 1 - 18
    const form = page.locator('#mrope-controls');
    await form.locator('[name=model]').selectOption('1');
    await form.locator('[name=before]').fill('3');
    await form.locator('[name=media]').selectOption('video');
    await form.locator('[name=h]').fill('2');
    await form.locator('[name=w]').fill('2');
    await form.locator('[name=t]').fill('3');
    await form.locator('[name=seconds]').fill('1.5');
    await form.locator('[name=after]').fill('1');
    await page.waitForFunction(() => {
      const s = document.getElementById('mrope-summary').dataset;
      return s.model === 'qwen2_5_vl' && s.length === '18' && document.getElementById('mrope-call').textContent.includes('[1.5]');
    });
    const v = await summary.evaluate((s) => ({ ...s.dataset }));
    const frames = [0, 1, 2].flatMap((f) => Array(4).fill(4 + 3 * f));
    assert.equal(v.t, [0, 1, 2, 3, ...frames, 6, 7].join(' '));
    assert.equal(v.h, [0, 1, 2, 3, ...[0, 1, 2].flatMap(() => [4, 4, 5, 5]), 6, 7].join(' '));
    assert.equal(v.w, [0, 1, 2, 3, ...[0, 1, 2].flatMap(() => [4, 5, 4, 5]), 6, 7].join(' '));
    assert.equal(v.delta, String(10 + 1 - 18));
    assert.equal(await page.locator('#mrope-grids figure').count(), 3);
    assert.match(await page.locator('#mrope-call').innerText(), /goes on from 4 \+ max\(h, w\) = 6, below its last frame's t 10/);
    await shoot(page, '#mrope', 'mrope-qwen25-video');

    // Qwen3-VL: mrope_section [24, 20, 20] interleaved (t h w t h w ..., the last 4 pairs t)
    await form.locator('[name=model]').selectOption('2');
    await page.waitForFunction(() => document.getElementById('mrope-summary').dataset.model === 'qwen3_vl');
    assert.equal(await page.locator('#mrope-pairs').getAttribute('data-axes'), 'thw'.repeat(20) + 'tttt');
    // each frame is its own run after a timestamp
    assert.equal(await page.locator('#mrope-table thead th', { hasText: /^<\d\.\d s>$/ }).count(), 3);
    await shoot(page, '#mrope', 'mrope-qwen3-video');
    await page.locator('#mrope-readme').click();
  });

  test('dark scheme and a narrow screen render the new views without sideways scrolling', () =>
    darkAndNarrow(
      open,
      async (p, label) => {
        await shoot(p, '#layers-strip', `${label}-layers-strip`);
        await shoot(p, '.layers-grid', `${label}-layers-facts`);
        await shoot(p, '#mrope', `${label}-mrope`);
      },
      (p) => pickModel(p, LAYER_MODELS.findIndex((m) => m.fixture === 'llama4-scout-17b-16e')),
    ));

  test('no console errors and no failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
