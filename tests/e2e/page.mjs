// What the demo page's end-to-end tests share: collecting a page's problems, and telling a drawn
// canvas from a blank one.

/** Pushes every console error, page error, failed request, HTTP error and worker console error
 * of page `p` onto `problems`, each prefixed with `label`. */
export function watchPage(p, label, problems) {
  p.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`${label} console error: ${msg.text()}`);
  });
  p.on('pageerror', (err) => problems.push(`${label} page error: ${err.message}`));
  p.on('requestfailed', (req) => problems.push(`${label} request failed: ${req.url()} (${req.failure()?.errorText})`));
  p.on('response', (res) => {
    if (res.status() >= 400) problems.push(`${label} HTTP ${res.status()}: ${res.url()}`);
  });
  p.on('worker', (w) => w.on('console', (msg) => msg.type() === 'error' && problems.push(`${label} worker error: ${msg.text()}`)));
}

/** For each canvas matching `selector`: the fraction of its pixels that differ from its first
 * pixel (0 = blank). */
export async function canvasInk(p, selector) {
  return p.$$eval(selector, (canvases) =>
    canvases.map((c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let differ = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i] !== data[0] || data[i + 1] !== data[1] || data[i + 2] !== data[2] || data[i + 3] !== data[3]) differ++;
      }
      return differ / (data.length / 4);
    }),
  );
}

/** The heatmap canvas inside `container` (web/src/lib/heatmap.js, its data-plot geometry), and
 * where cell (row, col) is on the page. */
export async function cellPoint(p, container, row, col) {
  const canvas = p.locator(`${container} canvas:not(.colorbar)`).first();
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const g = JSON.parse(await canvas.getAttribute('data-plot'));
  const [x, y] = g.transpose ? [row, col] : [col, row];
  return { x: box.x + g.left + ((x + 0.5) / g.xCells) * g.width, y: box.y + g.top + ((y + 0.5) / g.yCells) * g.height };
}

/** Moves the pointer over cell (row, col) of the heatmap inside `container`. */
export async function hoverCell(p, container, row, col) {
  const { x, y } = await cellPoint(p, container, row, col);
  await p.mouse.move(x, y);
}
