// End-to-end test of the demo's section 7, "Longer than training" (web/src/sections/extrapolation.js),
// in Debian's Chromium through playwright-core against the built site (web/dist: `npm run build`
// then `npx vite build web`). The numbers checked are the ones the page shows, computed by posenc
// in the page on its own random sequences.
import assert from 'node:assert/strict';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../browser/launch.mjs';
import { serveDemo, watchPage } from './page.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const site = join(root, 'web', 'dist');
const shots = join(root, 'tests', 'e2e', 'screenshots');

let browser;
let server;
let page;
const problems = [];

before(async () => {
  mkdirSync(shots, { recursive: true });
  assert.ok(statSync(join(site, 'index.html')).isFile(), 'web/dist/index.html missing: run `npx vite build web` first');
  server = await serveDemo(site); // cross-origin isolated, as Vite's servers serve it
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await context.newPage();
  watchPage(page, 'page', problems);
  await page.goto(server.url);
  // the section loads its models and computes when it comes near the viewport (web/src/main.js)
  await page.locator('#extrapolation').scrollIntoViewIfNeeded();
  await page.waitForSelector('#extrapolation[data-ready="true"]', { timeout: 60_000 });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function accuracies() {
  return page.$$eval('#extrapolation-table tr[data-method]', (rows) =>
    Object.fromEntries(rows.map((r) => [r.dataset.method, Number(r.querySelector('.accuracy').dataset.accuracy)])));
}

test('at 8x (256 tokens) ALiBi keeps above 0.9 and the sinusoidal table falls; strips, maps and chart drawn', async () => {
  assert.equal(await page.locator('#extrapolation select[name="length"]').inputValue(), '256');
  const acc = await accuracies();
  console.log('accuracy at 256:', JSON.stringify(acc));
  assert.ok(acc.alibi > 0.9, `alibi ${acc.alibi}`);
  assert.ok(acc.vaswani < 0.5, `vaswani ${acc.vaswani}`);
  assert.ok(acc.vaswani < acc.alibi && acc.none < acc.alibi);
  assert.equal(await page.locator('#extrapolation-strips .strip[data-method="alibi"] .cell').count(), 256);
  const wrongVaswani = await page.locator('#extrapolation-strips .strip[data-method="vaswani"] .cell.wrong').count();
  const wrongAlibi = await page.locator('#extrapolation-strips .strip[data-method="alibi"] .cell.wrong').count();
  assert.ok(wrongVaswani > wrongAlibi, `wrong cells: vaswani ${wrongVaswani}, alibi ${wrongAlibi}`);
  assert.equal(await page.locator('#extrapolation .extrapolation-maps canvas:not(.colorbar)').count(), 5);
  assert.equal(await page.locator('#extrapolation-chart[data-ready="true"] canvas').count() >= 1, true);
  await page.locator('#extrapolation').screenshot({ path: join(shots, 'extrapolation.png') });
});

test('at 1x every method but none is near perfect; new sequences change the seed', async () => {
  await page.locator('#extrapolation select[name="length"]').selectOption('32');
  const acc = await accuracies();
  for (const m of ['vaswani', 'rotary', 'rotary-partial', 'alibi']) assert.ok(acc[m] > 0.95, `${m} ${acc[m]}`);
  assert.ok(acc.none < 0.7, `none ${acc.none}`);
  const seed = await page.locator('#extrapolation-seed').textContent();
  await page.locator('#extrapolation-new').click();
  assert.notEqual(await page.locator('#extrapolation-seed').textContent(), seed);
  await page.locator('#extrapolation select[name="length"]').selectOption('512');
  const at16 = await accuracies();
  console.log('accuracy at 512:', JSON.stringify(at16));
  assert.ok(at16.alibi > 0.9 && at16.vaswani < 0.4);
});

test('no console errors', () => {
  assert.deepEqual(problems, []);
});
