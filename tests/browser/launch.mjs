// Shared helpers for tests that drive a real browser: Debian's Chromium through playwright-core
// (never a downloaded browser), and a tiny static file server with correct MIME types.
//
//   import { launchChromium, serveStatic } from '../browser/launch.mjs';
//   const browser = await launchChromium();
//   const server = await serveStatic('web/dist', { headers: { 'Content-Security-Policy': "..." } });
//   const page = await browser.newPage();
//   await page.goto(server.url);
//   ...
//   await browser.close();
//   await server.close();
//
// Flags: see /work/shared/notes/environment.md. Without the background-networking flags Chromium
// keeps trying to reach the internet, which is closed on CI.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { chromium } from 'playwright-core';

/** Debian's chromium; CHROMIUM_PATH overrides it (e.g. on a developer machine). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** The flags environment.md asks for (playwright adds --headless itself when headless is true). */
export const CHROMIUM_FLAGS = Object.freeze([
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
]);

/**
 * Launches headless Chromium and returns a playwright-core `Browser`.
 *
 * `chromium.launch()` always starts Chromium with a fresh temporary user data dir of its own
 * (playwright_chromiumdev_profile-*) and deletes it on `browser.close()`, so no state leaks between
 * runs. Use `browser.newPage()` / `browser.newContext()` as usual; always close the browser.
 *
 * @param {{ args?: string[] } & import('playwright-core').LaunchOptions} [options]
 *   extra Chromium args are appended to CHROMIUM_FLAGS; other launch options pass through.
 * @returns {Promise<import('playwright-core').Browser>}
 */
export async function launchChromium({ args = [], ...options } = {}) {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    timeout: 60_000,
    ...options,
    args: [...CHROMIUM_FLAGS, ...args],
  });
}

/** MIME types by extension. .wasm must be application/wasm for instantiateStreaming. */
export const MIME_TYPES = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.bin': 'application/octet-stream',
  '.onnx': 'application/octet-stream',
});

/**
 * Serves `dir` over HTTP on 127.0.0.1 at a free port. GET and HEAD only; a directory serves its
 * index.html; paths outside `dir` and missing files are 404. `headers` (an object) is added to every
 * response, e.g. a Content-Security-Policy. No caching headers: every page load refetches.
 * `route(pathname)`, if given, is asked first for every request (tests of what a page does when a
 * file is missing or refused): `{ status }` answers that status (e.g. 404) instead of the file,
 * `{ headers }` serves the file with these headers instead of `headers`, undefined serves it as usual.
 *
 * @param {string} dir
 * @param {{ headers?: Record<string, string>,
 *   route?: (pathname: string) => { status?: number, headers?: Record<string, string> } | undefined }} [options]
 * @returns {Promise<{ url: string, port: number, close: () => Promise<void> }>} url ends with '/'
 */
export async function serveStatic(dir, { headers: allHeaders = {}, route } = {}) {
  const root = resolve(dir);
  const server = createServer(async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD', ...allHeaders }).end();
        return;
      }
      const pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
      const routed = route?.(pathname);
      const headers = routed?.headers ?? allHeaders;
      if (routed?.status) {
        res.writeHead(routed.status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers }).end('refused');
        return;
      }
      let file = resolve(join(root, pathname));
      if (file !== root && !file.startsWith(root + sep)) {
        res.writeHead(404, headers).end('not found');
        return;
      }
      let info = await stat(file).catch(() => null);
      if (info?.isDirectory()) {
        file = join(file, 'index.html');
        info = await stat(file).catch(() => null);
      }
      if (!info?.isFile()) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', ...headers }).end('not found');
        return;
      }
      res.writeHead(200, {
        'Content-Type': MIME_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': info.size,
        'Cache-Control': 'no-store',
        ...headers,
      });
      if (req.method === 'HEAD') res.end();
      else createReadStream(file).pipe(res);
    } catch (err) {
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(String(err));
    }
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', ok);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
