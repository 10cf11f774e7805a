// End-to-end tests of the demo page's sections 7 to 10 (issue 13: RoPE, RoPE scaling, ALiBi, 2D
// sin-cos) in Debian's Chromium through playwright-core, against the built static site (web/dist,
// made by `npm run build:demo`) served on 127.0.0.1. Every number checked here is read off the page
// and compared with the formula computed independently in this file. Screenshots go to
// tests/e2e/screenshots/positions-*.png (gitignored) for review.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../browser/launch.mjs';
import { canvasInk, cellPoint, openDemo, readCell, sectionChecks, serveDemo, setInput } from './page.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const site = join(root, 'web', 'dist');
const shots = join(root, 'tests', 'e2e', 'screenshots');
const SECTIONS = ['rotary', 'rope-scaling', 'alibi', 'sincos2d'];
const TAU = 2 * Math.PI;

let browser;
let server;
let page;
const problems = []; // console errors, page errors, failed requests
const open = (options = {}, label = 'page') => openDemo(browser, server.url, { options, label, problems, ready: SECTIONS.map((id) => `#${id}[data-ready="true"]`) });

async function shoot(p, id, name = id) {
  await p.locator(`#${id}`).screenshot({ path: join(shots, `positions-${name}.png`) });
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

describe('demo page, sections 7-10 (issue 13)', () => {
  test('7 RoPE: the pair turns by p * w_i, and q.k is a function of m - n', async () => {
    // the pair vector: pair 5 at position 37, headDim 64, base 10000, 'half' layout
    await setInput(page, '#rotary-pair-controls [name=pair]', 5);
    await setInput(page, '#rotary-pair-controls [name=position]', 37);
    const readout = page.locator('#rotary-pair-readout');
    const w = 10000 ** (-10 / 64);
    const angle = (37 * w) % TAU;
    assert.equal(await readout.getAttribute('data-dims'), '5,37', 'half layout: pair i = dims (i, i + d/2)');
    assert.ok(Math.abs(Number(await readout.getAttribute('data-frequency')) - w) < 1e-12, 'w_5 = base^(-10/64)');
    assert.ok(Math.abs(Number(await readout.getAttribute('data-angle')) - angle) < 1e-9);
    const measured = Number(await readout.getAttribute('data-measured'));
    assert.ok(Math.abs(measured - angle) < 1e-5, `rot.apply turned the pair by ${measured}, p * w = ${angle}`);
    assert.match(await readout.innerText(), /pair 5 = dims \(5, 37\)/);
    // rot.cosSin at p: cos(p w) and sin(p w) at both dims of the pair (float32)
    assert.ok(Math.abs(Number(await readout.getAttribute('data-cos')) - Math.cos(37 * w)) < 3e-7);
    assert.ok(Math.abs(Number(await readout.getAttribute('data-sin')) - Math.sin(37 * w)) < 3e-7);
    assert.equal(await readout.getAttribute('data-cos-b'), await readout.getAttribute('data-cos'));
    assert.ok((await canvasInk(page, '#rotary-pair-canvas'))[0] > 0.01, 'pair canvas blank');

    // q.k over (m, n): a function of m - n (diagonals constant), read off the heatmap
    const summary = page.locator('#rotary-summary');
    const maxShift = Number(await summary.getAttribute('data-max-shift'));
    const scale = Number(await summary.getAttribute('data-scale'));
    assert.ok(scale > 1, `scores up to ${scale}`);
    assert.ok(maxShift < 1e-5 * 64 * scale, `max |S(m, n) - S(m+1, n+1)| = ${maxShift} (scores up to ${scale})`);
    for (const [m, n] of [[10, 3], [60, 20]]) {
      const a = await readCell(page, '#rotary-heatmap', 'rotary-readout', m, n);
      const b = await readCell(page, '#rotary-heatmap', 'rotary-readout', m + 50, n + 50);
      assert.ok(Math.abs(a - b) < 1e-4 * scale, `S(${m}, ${n}) = ${a} but S(${m + 50}, ${n + 50}) = ${b}`);
    }
    const offDiagonal = await readCell(page, '#rotary-heatmap', 'rotary-readout', 10, 4);
    assert.ok(Math.abs(offDiagonal - (await readCell(page, '#rotary-heatmap', 'rotary-readout', 10, 3))) > 1e-3, 'neighbouring offsets differ');
    await shoot(page, 'rotary');

    // interleaved layout: pair i = dims (2i, 2i + 1), same angle
    await page.locator('#rotary-controls [name=layout]').selectOption('interleaved');
    await page.waitForFunction(() => document.getElementById('rotary-pair-readout').dataset.dims === '10,11');
    assert.ok(Math.abs(Number(await readout.getAttribute('data-measured')) - angle) < 1e-5);
    assert.ok(Number(await summary.getAttribute('data-max-shift')) < 1e-5 * 64 * scale);

    // all-ones q and k: RoFormer's long-range decay, largest on the diagonal (m = n: q.k = d)
    await page.locator('#rotary-controls [name=vectors]').selectOption('ones');
    await page.waitForTimeout(50);
    assert.ok(Math.abs(Number(await summary.getAttribute('data-scale')) - 64) < 1e-3, 'ones: q.k at m = n is headDim');
    assert.ok(Math.abs((await readCell(page, '#rotary-heatmap', 'rotary-readout', 7, 7)) - 64) < 1e-3);
    await page.locator('#rotary-controls [name=vectors]').selectOption('random');
    await page.locator('#rotary-controls [name=layout]').selectOption('half');

    // a bad headDim is the library's message, shown in the section; the old map stays
    await setInput(page, '#rotary-controls [name=headDim]', 63);
    const error = page.locator('#rotary-error');
    assert.equal(await error.isVisible(), true);
    assert.match(await error.innerText(), /posenc\.rotary/);
    console.log(`  headDim 63: "${await error.innerText()}"`);
    await setInput(page, '#rotary-controls [name=headDim]', 64);
    assert.equal(await error.isVisible(), false);

    // smooth at 256 x 256 positions, headDim 128: two rot.apply calls, the dot products and a draw per change
    await setInput(page, '#rotary-controls [name=headDim]', 128);
    await setInput(page, '#rotary-controls [name=length]', 256);
    const times = await page.evaluate(async () => {
      const base = document.querySelector('#rotary-controls [name=base]');
      const out = [];
      for (let k = 0; k < 6; k++) {
        const t0 = performance.now();
        base.value = String(10000 + 500 * (k + 1));
        base.dispatchEvent(new Event('input', { bubbles: true }));
        await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
        out.push(performance.now() - t0);
      }
      base.value = '10000';
      base.dispatchEvent(new Event('input', { bubbles: true }));
      return out;
    });
    times.sort((a, b) => a - b);
    const median = times[times.length >> 1];
    console.log(`  RoPE 256 x 256, headDim 128: update to screen median ${median.toFixed(1)} ms (${times.map((t) => t.toFixed(0)).join(', ')})`);
    assert.ok(median < 250, `RoPE map update takes ${median} ms`);
    assert.equal(await summary.getAttribute('data-length'), '256');
    await setInput(page, '#rotary-controls [name=headDim]', 64);
    await setInput(page, '#rotary-controls [name=length]', 128);
  });

  test('8 RoPE scaling: presets give the right wavelengths and attention scaling; bad input is reported', async () => {
    const summary = page.locator('#scaling-summary');
    const preset = page.locator('#scaling-controls [name=preset]');
    const scaling = async () => Number(await summary.getAttribute('data-attention-scaling'));
    const textarea = page.locator('#scaling-config');
    const error = page.locator('#scaling-error');
    // Llama-3.1-8B: llama3 scaling leaves the fast pairs, divides the slow ones by 8, attention scale 1
    assert.match(await preset.inputValue(), /^0$/);
    assert.equal(await summary.getAttribute('data-head-dim'), '128');
    assert.equal(await scaling(), 1);
    const text = await summary.innerText();
    assert.match(text, /× 1\.000 to × 8\.000/, text);
    const changed = Number(await summary.getAttribute('data-changed'));
    assert.ok(changed > 20 && changed < 64, `${changed} of 64 pairs changed`);
    // read pair 63 off the chart: unscaled wavelength 2 pi * 500000^(126/128)
    const over = page.locator('#scaling-chart .u-over');
    await over.scrollIntoViewIfNeeded();
    await over.focus();
    await page.keyboard.press('End');
    await page.waitForFunction(() => document.getElementById('scaling-readout').dataset.pair === '63');
    const unscaled = TAU * 500000 ** (126 / 128);
    const readText = await page.locator('#scaling-readout').innerText();
    assert.ok(readText.includes(unscaled.toPrecision(6)), `${readText} vs ${unscaled.toPrecision(6)}`);
    assert.ok(readText.includes((8 * unscaled).toPrecision(6)), readText);
    assert.ok((await canvasInk(page, '#scaling-chart canvas'))[0] > 0.01, 'scaling chart blank');
    await shoot(page, 'rope-scaling', 'rope-scaling-llama3');

    // every preset against its fixture (tests/fixtures/rotary, Hugging Face's float32 buffers):
    // head and rotary dims, attention scaling, and every inverse frequency to 1e-6 relative
    const options = await preset.locator('option').evaluateAll((os) => os.map((o) => o.textContent));
    const fixtureOf = JSON.parse(await page.evaluate(() => document.getElementById('scaling-controls').dataset.fixtures));
    assert.equal(options.length, fixtureOf.length);
    for (const [index, label] of options.entries()) {
      const fx = JSON.parse(readFileSync(join(root, 'tests/fixtures/rotary', `${fixtureOf[index]}.json`), 'utf8'));
      await preset.selectOption({ index });
      await page.waitForFunction((i) => document.getElementById('scaling-summary').dataset.preset === String(i), index);
      assert.equal(await error.isVisible(), false, `${label}: ${await error.innerText()}`);
      assert.equal(Number(await summary.getAttribute('data-head-dim')), fx.resolved.headDim, `${label}: headDim`);
      assert.equal(Number(await summary.getAttribute('data-rotary-dim')), fx.resolved.rotaryDim, `${label}: rotaryDim`);
      assert.ok(Math.abs((await scaling()) - fx.attentionScaling) < 1e-9, `${label}: attentionScaling ${await scaling()} vs ${fx.attentionScaling}`);
      const expected = (fx.invFreq.short ?? fx.invFreq.default ?? fx.invFreq.seqLen4096).values;
      const got = JSON.parse(await summary.getAttribute('data-inverse-frequencies'));
      assert.equal(got.length, expected.length, `${label}: number of pairs`);
      const worst = Math.max(...got.map((w, i) => Math.abs(w - expected[i]) / expected[i]));
      assert.ok(worst < 1e-6, `${label}: inverse frequencies off by ${worst} relative`);
      // dynamic / longrope: the set of a full-context sequence, against the fixture's set of the
      // same length where it has one (Phi-3's long factors, dynamic NTK at 2 x 4096)
      const longLength = await summary.getAttribute('data-long-length');
      if (fx.resolved.ropeType === 'dynamic' || fx.resolved.ropeType === 'longrope') {
        assert.ok(Number(longLength) > 1, `${label}: no long-sequence curve`);
        const set = Object.values(fx.invFreq).find((s) => s.seqLen === Number(longLength)) ??
          (fx.resolved.ropeType === 'longrope' ? fx.invFreq.long : null);
        if (set) {
          const long = JSON.parse(await summary.getAttribute('data-long-inverse-frequencies'));
          assert.deepEqual(long, set.values.map(Math.fround), `${label}: the ${longLength}-token set`);
        }
      } else {
        assert.equal(longLength, null, `${label}: a long-sequence curve without dynamic or longrope`);
      }
      console.log(`  ${label.padEnd(44)} attentionScaling ${(await scaling()).toFixed(6)}  inverse frequencies within ${worst.toExponential(1)} of the fixture`);
      if (/YaRN \(factor 4\)|longrope/.test(label)) await shoot(page, 'rope-scaling', `rope-scaling-${/longrope/.test(label) ? 'longrope' : 'yarn'}`);
    }

    // bad JSON and a bad config: the library's messages; the page keeps going
    await textarea.fill('{ "rope_theta": 10000, "head_dim": ');
    await page.waitForFunction(() => !document.getElementById('scaling-error').hidden);
    assert.match(await error.innerText(), /posenc\.rotary/);
    console.log(`  bad JSON: "${await error.innerText()}"`);
    await textarea.fill('{ "rope_theta": 10000, "head_dim": 64, "rope_scaling": { "rope_type": "bogus", "factor": 2 } }');
    await page.waitForFunction(() => /posenc\.rotary/.test(document.getElementById('scaling-error').textContent));
    console.log(`  bad rope_type: "${await error.innerText()}"`);
    await textarea.evaluate((el) => {
      el.scrollLeft = 0;
    });
    await shoot(page, 'rope-scaling', 'rope-scaling-error');
    await textarea.fill('{ "rope_theta": 10000, "head_dim": 64 }');
    await page.waitForFunction(() => document.getElementById('scaling-error').hidden);
    assert.equal(await summary.getAttribute('data-changed'), '0');
    assert.equal(await summary.getAttribute('data-head-dim'), '64');
    await preset.selectOption({ index: 0 });
  });

  test('9 ALiBi: slopes 1/2 ... 1/256 for 8 heads, 12 heads, the causal mask in its own colour', async () => {
    const slopesEl = page.locator('#alibi-slopes');
    const slopes = JSON.parse(await slopesEl.getAttribute('data-slopes'));
    assert.deepEqual(slopes, [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]);
    const text = await slopesEl.innerText();
    for (const s of ['1/2', '1/4', '1/128', '1/256']) assert.ok(text.includes(s), `${s} missing from "${text}"`);
    assert.equal(await page.locator('#alibi-heads figure:not([hidden])').count(), 8);
    const ink = await canvasInk(page, '#alibi-heads canvas:not(.colorbar)');
    assert.ok(ink.every((v) => v > 0.1), `ALiBi maps blank: ${ink}`);

    // head 1 (slope 1/2): bias -(i - j)/2 below the diagonal, -Infinity above it
    const head1 = '#alibi-heads figure[data-head="1"]';
    assert.equal(await readCell(page, head1, 'alibi-readout', 20, 4), -8);
    assert.equal(await readCell(page, head1, 'alibi-readout', 3, 9), -Infinity);
    assert.match(await page.locator('#alibi-readout').innerText(), /masked/);
    // the masked cell is --masked, not a colour of the scale
    const colours = await page.evaluate(async (sel) => {
      const canvas = document.querySelector(`${sel} canvas:not(.colorbar)`);
      const g = JSON.parse(canvas.dataset.plot);
      const dpr = canvas.width / canvas.clientWidth;
      const at = (r, c) => Array.from(canvas.getContext('2d').getImageData(Math.round((g.left + ((c + 0.5) / g.xCells) * g.width) * dpr), Math.round((g.top + ((r + 0.5) / g.yCells) * g.height) * dpr), 1, 1).data.slice(0, 3));
      const probe = document.createElement('canvas').getContext('2d');
      probe.fillStyle = getComputedStyle(document.documentElement).getPropertyValue('--masked');
      probe.fillRect(0, 0, 1, 1);
      return { masked: at(3, 9), lowest: at(31, 0), diagonal: at(5, 5), expected: Array.from(probe.getImageData(0, 0, 1, 1).data.slice(0, 3)) };
    }, head1);
    assert.deepEqual(colours.masked, colours.expected, 'masked cell colour');
    assert.notDeepEqual(colours.masked, colours.lowest);
    assert.notDeepEqual(colours.masked, colours.diagonal);
    await shoot(page, 'alibi');

    // 12 heads (not a power of 2): slopes(8) then every other of slopes(16), as in the paper's code
    await page.locator('#alibi-controls button[data-heads="12"]').click();
    await page.waitForFunction(() => JSON.parse(document.getElementById('alibi-slopes').dataset.slopes).length === 12);
    const twelve = JSON.parse(await slopesEl.getAttribute('data-slopes'));
    const expected = [1, 2, 3, 4, 5, 6, 7, 8].map((k) => 2 ** -k).concat([0.5, 1.5, 2.5, 3.5].map((k) => 2 ** -k));
    twelve.forEach((s, h) => assert.ok(Math.abs(s - expected[h]) < 1e-15, `head ${h + 1}: ${s} vs ${expected[h]}`));
    assert.equal(await page.locator('#alibi-heads figure:not([hidden])').count(), 12);
    assert.match(await slopesEl.innerText(), /2\^−0\.5 = 0\.7071/);

    // symmetric: no mask, -m |i - j| on both sides
    await page.locator('#alibi-controls [name=mode]').selectOption('symmetric');
    await page.waitForTimeout(50);
    assert.equal(await readCell(page, head1, 'alibi-readout', 3, 9), -3);
    await page.locator('#alibi-controls [name=shared]').uncheck();
    await setInput(page, '#alibi-controls [name=length]', 64);
    await shoot(page, 'alibi', 'alibi-12-symmetric');

    // smooth at 16 heads x 256 x 256: one alibiBias call and 16 maps per change
    await setInput(page, '#alibi-controls [name=heads]', 16);
    await setInput(page, '#alibi-controls [name=length]', 256);
    const times = await page.evaluate(async () => {
      const length = document.querySelector('#alibi-controls [name=length]');
      const out = [];
      for (let k = 0; k < 6; k++) {
        const t0 = performance.now();
        length.value = String(250 + k);
        length.dispatchEvent(new Event('input', { bubbles: true }));
        await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
        out.push(performance.now() - t0);
      }
      return out;
    });
    times.sort((a, b) => a - b);
    const median = times[times.length >> 1];
    console.log(`  ALiBi 16 heads x 256 x 256: update to screen median ${median.toFixed(1)} ms (${times.map((t) => t.toFixed(0)).join(', ')})`);
    assert.ok(median < 250, `ALiBi update takes ${median} ms`);

    // bad input: the library's message
    await setInput(page, '#alibi-controls [name=heads]', 0);
    await page.waitForFunction(() => !document.getElementById('alibi-error').hidden);
    assert.match(await page.locator('#alibi-error').innerText(), /posenc\.alibi/);
    console.log(`  heads 0: "${await page.locator('#alibi-error').innerText()}"`);
    await setInput(page, '#alibi-controls [name=heads]', 8);
    await page.locator('#alibi-controls [name=mode]').selectOption('causal');
    await page.locator('#alibi-controls [name=shared]').check();
    await setInput(page, '#alibi-controls [name=length]', 32);
    assert.equal(await page.locator('#alibi-error').isVisible(), false);
  });

  test('10 2D sin-cos: channels follow x or y, values match MAE, patch similarity peaks at the patch', async () => {
    const summary = page.locator('#sincos2d-summary');
    // MAE, 14 x 14, dim 256: channel 1 = sin(x * 10000^(-1/64)), a wave across the columns
    await setInput(page, '#sincos2d-channel-controls [name=channel]', 1);
    assert.equal(await summary.getAttribute('data-axis'), 'x');
    const omega = 10000 ** (-1 / 64);
    const v = await readCell(page, '#sincos2d-heatmap', 'sincos2d-readout', 2, 7);
    assert.ok(Math.abs(v - Math.sin(7 * omega)) < 1e-6, `channel 1 at (2, 7) = ${v}, sin(7 w) = ${Math.sin(7 * omega)}`);
    // channel 128 + 64 + 3: cos(y * 10000^(-3/64)), down the rows
    await setInput(page, '#sincos2d-channel-controls [name=channel]', 195);
    assert.equal(await summary.getAttribute('data-axis'), 'y');
    const v2 = await readCell(page, '#sincos2d-heatmap', 'sincos2d-readout', 9, 2);
    assert.ok(Math.abs(v2 - Math.cos(9 * 10000 ** (-3 / 64))) < 1e-6, `channel 195 at (9, 2) = ${v2}`);

    // similarity: the patch with itself is dim / 2 (sin^2 + cos^2 per pair), and the largest
    const sim = page.locator('#sincos2d-similarity canvas:not(.colorbar)');
    assert.equal(await sim.getAttribute('data-patch'), '4,9');
    assert.ok(Math.abs(Number(await sim.getAttribute('data-self')) - 128) < 1e-3);
    const self = await readCell(page, '#sincos2d-similarity', 'sincos2d-sim-readout', 4, 9);
    for (const [r, c] of [[4, 10], [5, 9], [0, 0], [13, 13]]) {
      assert.ok((await readCell(page, '#sincos2d-similarity', 'sincos2d-sim-readout', r, c)) < self, `patch (${r}, ${c}) as similar as the patch itself`);
    }
    // a neighbour is more similar than a far patch: 2D locality
    const near = await readCell(page, '#sincos2d-similarity', 'sincos2d-sim-readout', 5, 10);
    const far = await readCell(page, '#sincos2d-similarity', 'sincos2d-sim-readout', 12, 1);
    assert.ok(near > far, `near ${near} <= far ${far}`);
    // clicking a patch makes it the reference
    const { x, y } = await cellPoint(page, '#sincos2d-similarity', 10, 2);
    await page.mouse.click(x, y);
    await page.waitForFunction(() => document.querySelector('#sincos2d-similarity canvas:not(.colorbar)').dataset.patch === '10,2');
    assert.equal(await page.locator('#sincos2d-patch-controls [name=row]').inputValue(), '10');
    // the channel strip: one small image per channel, clicking one shows it above
    const figs = page.locator('#sincos2d-channels figure');
    assert.equal(await figs.count(), 12);
    await figs.nth(3).locator('button').click();
    const ch = await figs.nth(3).getAttribute('data-channel');
    await page.waitForFunction((c) => document.getElementById('sincos2d-summary').dataset.channel === c, ch);
    await setInput(page, '#sincos2d-channel-controls [name=channel]', 1);
    await shoot(page, 'sincos2d');

    // the cls token (MAE: a row of zeros before the patches); timm; a grid that is not square
    await page.locator('#sincos2d-controls [name=clsToken]').check();
    await page.waitForFunction(() => document.getElementById('sincos2d-summary').dataset.clsMax !== undefined);
    assert.equal(Number(await summary.getAttribute('data-cls-max')), 0);
    assert.ok(Math.abs((await readCell(page, '#sincos2d-heatmap', 'sincos2d-readout', 2, 7)) - Math.sin(7 * omega)) < 1e-6, 'patches follow the cls row');
    await page.locator('#sincos2d-controls [name=preset]').selectOption('timm');
    await setInput(page, '#sincos2d-controls [name=height]', 8);
    await setInput(page, '#sincos2d-controls [name=width]', 24);
    assert.equal(await page.locator('#sincos2d-error').isVisible(), false);
    assert.match(await summary.innerText(), /pe\.encode2d\(8, 24, 256, \{ preset: 'timm', clsToken: true \}\)/);
    await shoot(page, 'sincos2d', 'sincos2d-timm-8x24');

    // against the fixtures (tests/fixtures/sincos2d: MAE's and timm's code in float64), 3 x 5 x 32
    for (const preset of ['mae', 'timm']) {
      const fx = JSON.parse(readFileSync(join(root, `tests/fixtures/sincos2d/${preset}.json`), 'utf8'));
      const c = fx.cases.find((k) => (k.embedDim ?? k.dim) === 32 && k.height === 3 && k.width === 5 && !k.clsToken &&
        (!k.options || (!k.options.reverseCoord && !k.options.interleaveSinCos && k.options.temperature === 10000)));
      await page.locator('#sincos2d-controls [name=clsToken]').uncheck();
      await page.locator('#sincos2d-controls [name=preset]').selectOption(preset);
      await setInput(page, '#sincos2d-controls [name=dim]', 32);
      await setInput(page, '#sincos2d-controls [name=height]', 3);
      await setInput(page, '#sincos2d-controls [name=width]', 5);
      let worst = 0;
      for (const ch of [1, 9, 18, 27]) {
        await setInput(page, '#sincos2d-channel-controls [name=channel]', ch);
        for (const [y, x] of [[1, 3], [2, 4]]) {
          const got = await readCell(page, '#sincos2d-heatmap', 'sincos2d-readout', y, x);
          worst = Math.max(worst, Math.abs(got - c.expected[(y * 5 + x) * 32 + ch]));
        }
      }
      console.log(`  encode2d ${preset} 3 x 5 x 32: 8 values within ${worst.toExponential(1)} of the fixture`);
      assert.ok(worst < 1e-6, `${preset}: ${worst}`);
    }
    await page.locator('#sincos2d-controls [name=clsToken]').check();

    // dim not a multiple of 4: the library's message
    await setInput(page, '#sincos2d-controls [name=dim]', 250);
    await page.waitForFunction(() => !document.getElementById('sincos2d-error').hidden);
    assert.match(await page.locator('#sincos2d-error').innerText(), /posenc\.encode2d/);
    console.log(`  dim 250: "${await page.locator('#sincos2d-error').innerText()}"`);
    await setInput(page, '#sincos2d-controls [name=dim]', 256);
    await setInput(page, '#sincos2d-controls [name=height]', 14);
    await setInput(page, '#sincos2d-controls [name=width]', 14);
    await page.locator('#sincos2d-controls [name=preset]').selectOption('mae');
    await page.locator('#sincos2d-controls [name=clsToken]').uncheck();
    assert.equal(await page.locator('#sincos2d-error').isVisible(), false);
  });

  sectionChecks({ what: 'sections 7-10', sections: SECTIONS, open, shoot, page: () => page, problems });
});
