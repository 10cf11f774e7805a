// Tests the packed tarball the way users get it: `npm pack`, then each consumer project under
// tests/consumers/<name>/ is copied to a temp dir, the tarball installed into it, and it is built
// and run (Node) or opened in headless Chromium (Vite, webpack, plain page). Every consumer computes
// the vaswani table L=100, D=50 with the default (SIMD) build and with the forced baseline build,
// uses pe.encoder(...) and dispose(), and reports pe.simd; this script compares the numbers with
// tests/fixtures/presets/vaswani.json (case d50_L100, within 2^-22) and PE(5)[0] with sin(5).
// The browser consumers' production builds also run `?threads=2` (init({ threads: 2 })) twice:
// served cross-origin isolated (COOP + COEP), where pe.threads is 2, the threaded build's .wasm is
// the one fetched, one pool worker starts and big tables are the same bits as Node's single thread
// (the tarball's own dist/node.js); and served without isolation, where init({ threads: 2 })
// rejects with its Error and the page falls back to one thread.
//
// Assumes dist/ is fresh (`npm run build`; scripts/test-all.sh runs it first).
// The consumers' devDependencies (vite, webpack, typescript) are not downloaded: the same ranges are
// in the root package.json, so after `npm ci` at the root they are linked from /node_modules (a
// consumer range that differs from the root's falls back to `npm install --prefer-offline`).
// posenc itself is installed from the tarball with `npm install --offline`: no network at all.
//
// Usage: node tests/consumers/run.mjs [consumer ...]     (KEEP=1 keeps the temp dir)
// Prints one line per check and ends with `N passed, M failed`; exits 1 on any failure.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const BOUND = 2 ** -22;
const SIN5_TOLERANCE = 1e-6;

const fixture = JSON.parse(readFileSync(join(root, 'tests/fixtures/presets/vaswani.json'), 'utf8'));
const CASE = fixture.cases.find((c) => c.name === 'd50_L100');
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
// What a page needs for SharedArrayBuffer, hence for init({ threads }) (docs/API.md, "Threads").
const ISOLATION = Object.freeze({ 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });
const THREADS_ERROR =
  'posenc.init: threads > 1 needs SharedArrayBuffer: Node, or a cross-origin isolated page (docs/API.md, "Threads")';

// ---- reporting ---------------------------------------------------------------------------------
let passed = 0;
let failed = 0;
function check(label, ok, detail = '') {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok' : 'not ok'} - ${label}${!ok && detail ? `\n    ${String(detail).replace(/\n/g, '\n    ')}` : ''}`);
  return ok;
}
async function attempt(label, fn) {
  try {
    return await fn();
  } catch (err) {
    check(label, false, err?.stack ?? err);
    return undefined;
  }
}

function maxAbsDiff(got, want) {
  if (!Array.isArray(got) || got.length !== want.length) return Infinity;
  let max = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= max)) max = Number.isNaN(d) ? Infinity : d;
  }
  return max;
}

/**
 * The checks every consumer's result gets: { simd, simdSupported, table, encoderRows, afterDispose,
 * rotaryCos5, alibiSlopes, transformer }. `transformer`: whether the entry has the transformer
 * (posenc does, posenc/encoding does not).
 */
function checkResult(label, r, { simd, transformer = true }) {
  if (!check(`${label}: returned a result`, r && typeof r === 'object', JSON.stringify(r)?.slice(0, 300))) return;
  check(`${label}: pe.simd is ${simd}`, r.simd === simd, `pe.simd = ${r.simd}, simdSupported() = ${r.simdSupported}`);
  const d = maxAbsDiff(r.table, CASE.expected);
  check(`${label}: encode(100, 50) matches fixture ${CASE.name} within 2^-22`, d <= BOUND, `max |diff| = ${d}`);
  const pe50 = r.table?.[5 * 50];
  check(`${label}: position 5 dim 0 = sin(5) within 1e-6`, Math.abs(pe50 - Math.sin(5)) <= SIN5_TOLERANCE, `${pe50}`);
  const e = maxAbsDiff(r.encoderRows, CASE.expected.slice(5 * 50, 8 * 50));
  check(`${label}: encoder({ dim: 50 }).encode(3, { offset: 5 }) = fixture rows 5..7`, e <= BOUND, `max |diff| = ${e}`);
  check(
    `${label}: encoder use after dispose() throws, dispose() twice is harmless`,
    typeof r.afterDispose === 'string' && /dispos/.test(r.afterDispose),
    `afterDispose = ${r.afterDispose}`,
  );
  check(
    `${label}: rotary({ headDim: 4 }).cosSin(1, { offset: 5 }).cos[0] = cos(5) within 1e-6`,
    Math.abs(r.rotaryCos5 - Math.cos(5)) <= SIN5_TOLERANCE,
    `${r.rotaryCos5}`,
  );
  const slopes = Array.from({ length: 8 }, (_, i) => 2 ** -(i + 1));
  check(`${label}: alibiSlopes(8) = 2^-1 .. 2^-8`, maxAbsDiff(r.alibiSlopes, slopes) === 0, JSON.stringify(r.alibiSlopes));
  check(
    `${label}: ${transformer ? 'has' : 'has no'} encoderLayer and loadModel`,
    r.transformer === transformer,
    `transformer = ${r.transformer}`,
  );
}

// ---- processes ---------------------------------------------------------------------------------
async function run(cmd, args, { cwd, timeout = 120_000, env } = {}) {
  try {
    return await execFileAsync(cmd, args, {
      cwd,
      timeout,
      maxBuffer: 64 << 20,
      env: { ...process.env, ...env },
    });
  } catch (err) {
    const how = err.killed ? `killed (${err.signal}) after ${timeout} ms` : `exit code ${err.code}`;
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed, ${how}:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
}

/** Path of a package's bin script (resolved through the consumer's node_modules). */
function binOf(dir, pkg, name = pkg) {
  const pkgDir = join(dir, 'node_modules', pkg);
  const { bin } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  return join(pkgDir, typeof bin === 'string' ? bin : bin[name]);
}

/** `promise`, or null after `ms` milliseconds. */
function withTimeout(promise, ms) {
  let timer;
  return Promise.race([promise, new Promise((ok) => (timer = setTimeout(ok, ms, null)))]).finally(() =>
    clearTimeout(timer),
  );
}

async function freePort() {
  const server = createServer();
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  await new Promise((ok) => server.close(ok));
  return port;
}

/** Starts a long-running server process and waits until `url` answers 200. */
async function startServer(cmd, args, { cwd, url, timeout = 60_000 }) {
  const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (b) => (output += b));
  child.stderr.on('data', (b) => (output += b));
  const stop = () =>
    new Promise((ok) => {
      if (child.exitCode !== null || child.signalCode !== null) return ok();
      child.once('exit', () => ok());
      child.kill('SIGTERM');
    });
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const res = await fetch(url);
      if (res.ok) return { stop, output: () => output };
    } catch {}
    await new Promise((ok) => setTimeout(ok, 200));
  }
  await stop();
  throw new Error(`${cmd} ${args.join(' ')} did not serve ${url}:\n${output}`);
}

// ---- the packed tarball ------------------------------------------------------------------------
const work = mkdtempSync(join(tmpdir(), 'posenc-consumers-'));
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

async function pack() {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root });
  const [info] = JSON.parse(stdout);
  const files = info.files.map((f) => f.path).sort();
  const required = [
    'package.json',
    'README.md',
    'LICENSE',
    'dist/index.d.ts',
    'dist/node.js',
    'dist/browser.js',
    'dist/posenc_simd.mjs',
    'dist/posenc_simd.wasm',
    'dist/posenc_baseline.mjs',
    'dist/posenc_baseline.wasm',
    'dist/encoding.d.ts',
    'dist/encoding-node.js',
    'dist/encoding-browser.js',
    'dist/posenc_encoding_simd.mjs',
    'dist/posenc_encoding_simd.wasm',
    'dist/posenc_encoding_baseline.mjs',
    'dist/posenc_encoding_baseline.wasm',
    'dist/posenc_threads.mjs',
    'dist/posenc_threads.wasm',
    'dist/posenc_threads.worker.js',
    'dist/posenc_encoding_threads.mjs',
    'dist/posenc_encoding_threads.wasm',
    'dist/posenc_encoding_threads.worker.js',
    'dist/posenc_node_threads.mjs',
    'dist/multimodal.js',
    'dist/multimodal.d.ts',
  ];
  const missing = required.filter((f) => !files.includes(f));
  check('tarball holds the package files', missing.length === 0, `missing: ${missing.join(', ')}`);
  const stray = files.filter((f) => !/^(package\.json|README\.md|LICENSE|dist\/[^/]+\.(js|mjs|wasm|d\.ts|js\.map|mjs\.map))$/.test(f));
  check('tarball holds nothing but dist/, README, LICENSE', stray.length === 0, `unexpected: ${stray.join(', ')}`);
  const targets = [];
  (function walk(v) {
    if (typeof v === 'string') targets.push(v.replace(/^\.\//, ''));
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  })(rootPackage.exports);
  const dangling = targets.filter((t) => !files.includes(t));
  check('every exports-map target is in the tarball', dangling.length === 0, `missing: ${dangling.join(', ')}`);
  console.log(`# ${info.filename}: ${files.length} files, ${info.size} bytes packed, ${info.unpackedSize} unpacked`);
  return join(work, info.filename);
}

/**
 * Copies consumer `name` to the temp dir, installs the tarball offline, and provides its
 * devDependencies from the root's node_modules when the root declares the same range.
 */
async function prepare(name, tarball) {
  const dir = join(work, name);
  cpSync(join(here, name), dir, {
    recursive: true,
    filter: (src) => !/[\\/](node_modules|dist)$/.test(src),
  });
  // What every consumer runs once it has posenc (shared/exercise.mjs, and the browsers' page).
  cpSync(join(here, 'shared'), join(dir, 'shared'), { recursive: true });
  const pkgPath = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  const devDependencies = pkg.devDependencies ?? {};
  delete pkg.devDependencies; // installed below, without the network
  writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
  await run('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], { cwd: dir });

  const fromRegistry = [];
  for (const [dep, range] of Object.entries(devDependencies)) {
    const rootCopy = join(root, 'node_modules', dep);
    if (rootPackage.devDependencies?.[dep] === range && existsSync(join(rootCopy, 'package.json'))) {
      symlinkSync(rootCopy, join(dir, 'node_modules', dep), 'dir');
    } else {
      fromRegistry.push(`${dep}@${range}`);
    }
  }
  if (fromRegistry.length) {
    console.log(`# ${name}: installing ${fromRegistry.join(' ')} from the npm registry (cache first)`);
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-save', tarball, ...fromRegistry], {
      cwd: dir,
      timeout: 300_000,
    });
  }
  const installed = JSON.parse(readFileSync(join(dir, 'node_modules/posenc/package.json'), 'utf8'));
  check(`${name}: tarball installed (posenc ${installed.version})`, installed.version === rootPackage.version);
  return dir;
}

// ---- Node consumers ----------------------------------------------------------------------------
async function nodeConsumer(name, main, entryLabel) {
  const dir = await prepare(name, tarball);
  const { stdout, stderr } = await run(process.execPath, [main], { cwd: dir, timeout: 60_000 });
  if (stderr.trim()) console.log(`# ${name} stderr: ${stderr.trim().replace(/\n/g, '\n#   ')}`);
  const result = JSON.parse(stdout.trim().split('\n').pop());
  const resolved = String(result.resolved).replace(/^file:\/\//, '');
  check(
    `${name}: ${entryLabel} resolves to the tarball's dist/node.js`,
    resolved === join(dir, 'node_modules/posenc/dist/node.js'),
    resolved,
  );
  checkResult(`${name} default`, result.default, { simd: true });
  checkResult(`${name} init({ simd: false })`, result.baseline, { simd: false });
  if (result.encoding) {
    const encodingResolved = String(result.encodingResolved).replace(/^file:\/\//, '');
    check(
      `${name}: 'posenc/encoding' resolves to the tarball's dist/encoding-node.js`,
      encodingResolved === join(dir, 'node_modules/posenc/dist/encoding-node.js'),
      encodingResolved,
    );
    checkResult(`${name} posenc/encoding`, result.encoding, { simd: true, transformer: false });
  }
  if (result.multimodal) {
    // README's ropeIndex example: t row 0 1 1 1 1 1 1 4 5 6, delta -3.
    check(`${name}: posenc/multimodal's ropeIndex gives the README example`,
      result.multimodal.t === '0,1,1,1,1,1,1,4,5,6' && result.multimodal.ropeDelta === -3, JSON.stringify(result.multimodal));
  }
}

// ---- browser consumers -------------------------------------------------------------------------
let browser;
// Loaded when first needed, so that a missing playwright-core fails checks instead of the script.
let launchChromium;
let serveStatic;

/** The digests of shared/exercise.mjs's bigDigests() in Node, one thread, from the tarball's dist/node.js. */
const bigReferences = new Map();
async function bigReference(consumerDir) {
  if (!bigReferences.has(consumerDir)) {
    const { init } = await import(pathToFileURL(join(consumerDir, 'node_modules/posenc/dist/node.js')).href);
    const { bigDigests } = await import(pathToFileURL(join(consumerDir, 'shared/exercise.mjs')).href);
    bigReferences.set(consumerDir, await bigDigests(await init({ simd: true })));
  }
  return bigReferences.get(consumerDir);
}

/** The checks of a `?threads=2` page: isolated, threads 2; not isolated, refused and one thread. */
async function checkThreads(label, r, { isolated, consumerDir, workers }) {
  check(`${label}: crossOriginIsolated is ${isolated}`, r.crossOriginIsolated === isolated, `${r.crossOriginIsolated}`);
  if (isolated) {
    check(`${label}: init({ threads: 2 }) resolved, pe.threads = 2`, r.refused === null && r.threads === 2, JSON.stringify({ refused: r.refused, threads: r.threads }));
    check(`${label}: one pool worker started`, workers.length === 1, workers.join(', '));
  } else {
    check(
      `${label}: init({ threads: 2 }) rejected with its Error, init() fell back to 1 thread`,
      r.refused?.name === 'Error' && r.refused.message === THREADS_ERROR && r.threads === 1,
      JSON.stringify({ refused: r.refused, threads: r.threads }),
    );
    check(`${label}: no worker started`, workers.length === 0, workers.join(', '));
  }
  const want = await bigReference(consumerDir);
  check(
    `${label}: encode(20000, 512) and addTo(9000 x 512) are the bits of Node's single thread (SHA-256)`,
    r.big?.encode === want.encode && r.big?.addTo === want.addTo,
    `page ${JSON.stringify(r.big)}\nNode ${JSON.stringify(want)}`,
  );
}

/**
 * Opens `url` in a fresh browser context (empty cache), waits for the page's #result, checks its
 * numbers, that exactly one .wasm was fetched (the expected build's bytes, as application/wasm),
 * and that there were no page errors, console errors or failed requests. `threads`: the page was
 * opened with ?threads=2, on a server that is or is not cross-origin isolated ({ isolated }).
 */
async function checkPage(label, url, { simd, consumerDir, threads }) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const consoleErrors = [];
  const failedRequests = [];
  const wasm = [];
  const workers = [];
  page.on('worker', (w) => {
    workers.push(new URL(w.url()).pathname);
    w.on('console', (msg) => msg.type() === 'error' && consoleErrors.push(`worker ${w.url()}: ${msg.text()}`));
  });
  page.on('console', (msg) => msg.type() === 'error' && consoleErrors.push(msg.text()));
  page.on('pageerror', (err) => consoleErrors.push(`uncaught: ${err.message}`));
  page.on('requestfailed', (req) => failedRequests.push(`${req.url()}: ${req.failure()?.errorText}`));
  page.on('request', (req) => {
    if (new URL(req.url()).pathname.endsWith('.wasm')) wasm.push({ url: req.url(), response: req.response() });
  });
  page.on('response', (res) => res.status() >= 400 && failedRequests.push(`${res.url()}: HTTP ${res.status()}`));
  try {
    await page.goto(url);
    await page.waitForSelector('#result[data-status]', { timeout: 30_000 });
    const status = await page.getAttribute('#result', 'data-status');
    const text = await page.textContent('#result');
    if (!check(`${label}: page ran`, status === 'done', text)) return;
    const result = JSON.parse(text);
    checkResult(label, result, { simd });
    if (threads) await checkThreads(label, result, { ...threads, consumerDir, workers });

    const which = threads?.isolated ? 'threads' : simd ? 'simd' : 'baseline';
    // The bytes the tarball installed into this consumer: bundlers rename the file, not its content.
    const expectedSha = sha256(readFileSync(join(consumerDir, `node_modules/posenc/dist/posenc_${which}.wasm`)));
    const fetched = [];
    for (const w of wasm) {
      // Bounded: the body of a response the page never reads may never finish loading.
      const res = await withTimeout(w.response, 5000);
      const body = res && (await withTimeout(res.body(), 5000).catch(() => null));
      fetched.push({ url: w.url, type: res?.headers()['content-type'], sha: body ? sha256(body) : null });
    }
    for (const f of fetched) console.log(`# ${label}: fetched ${new URL(f.url).pathname}`);
    check(
      `${label}: exactly one .wasm requested, the ${which} build, as application/wasm`,
      fetched.length === 1 && fetched[0].sha === expectedSha && fetched[0].type === 'application/wasm',
      JSON.stringify(fetched),
    );
    check(`${label}: no console errors`, consoleErrors.length === 0, consoleErrors.join('\n'));
    check(`${label}: no failed requests`, failedRequests.length === 0, failedRequests.join('\n'));
  } finally {
    await context.close();
  }
}

async function viteConsumer() {
  const dir = await prepare('vite', tarball);
  const vite = binOf(dir, 'vite');
  const built = await run(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: dir });
  const viteLog = (built.stdout + built.stderr).trim();
  check('vite build: no warnings', viteLog === '', viteLog);
  const assets = readdirSync(join(dir, 'dist/assets'));
  check(
    'vite build: the three .wasm builds emitted as assets',
    ['simd', 'baseline', 'threads'].every((b) => assets.some((f) => new RegExp(`^posenc_${b}-.*\\.wasm$`).test(f))),
    assets.join(', '),
  );
  // The production build served as static files, cross-origin isolated and not: init({ threads: 2 }).
  await threadedPages('vite build', join(dir, 'dist'), dir);

  let port = await freePort();
  let server = await startServer(process.execPath, [vite, 'preview', '--host', '127.0.0.1', '--port', String(port), '--strictPort'], {
    cwd: dir,
    url: `http://127.0.0.1:${port}/`,
  });
  try {
    await checkPage('vite build + preview', `http://127.0.0.1:${port}/`, { simd: true, consumerDir: dir });
    await checkPage('vite build + preview ?simd=0', `http://127.0.0.1:${port}/?simd=0`, { simd: false, consumerDir: dir });
  } finally {
    await server.stop();
  }

  port = await freePort();
  server = await startServer(process.execPath, [vite, '--host', '127.0.0.1', '--port', String(port), '--strictPort'], {
    cwd: dir,
    url: `http://127.0.0.1:${port}/`,
  });
  try {
    await checkPage('vite dev server', `http://127.0.0.1:${port}/`, { simd: true, consumerDir: dir });
  } finally {
    await server.stop();
  }

  // The dev server with the two headers in its config (isolated.config.mjs): threads in dev mode too.
  port = await freePort();
  server = await startServer(
    process.execPath,
    [vite, '--config', 'isolated.config.mjs', '--host', '127.0.0.1', '--port', String(port), '--strictPort'],
    { cwd: dir, url: `http://127.0.0.1:${port}/` },
  );
  try {
    await checkPage('vite dev server (isolated.config.mjs) ?threads=2', `http://127.0.0.1:${port}/?threads=2`, {
      simd: true,
      consumerDir: dir,
      threads: { isolated: true },
    });
  } finally {
    await server.stop();
  }
}

// The strict CSP the package supports (docs/API.md, "Bundlers"). webpack's output has no inline
// script, so it needs nothing more.
const STRICT_CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'none'; img-src 'self' data:";

/** `?threads=2` on `dir` served with `headers` plus COOP/COEP, then with `headers` alone. */
async function threadedPages(label, dir, consumerDir, headers = {}) {
  for (const isolated of [true, false]) {
    const server = await serveStatic(dir, { headers: { ...headers, ...(isolated && ISOLATION) } });
    try {
      const how = isolated ? 'isolated' : 'not isolated';
      await checkPage(`${label} (${how}) ?threads=2`, `${server.url}?threads=2`, { simd: true, consumerDir, threads: { isolated } });
    } finally {
      await server.close();
    }
  }
}

async function webpackConsumer() {
  const dir = await prepare('webpack', tarball);
  const built = await run(process.execPath, [binOf(dir, 'webpack-cli'), '--stats', 'errors-warnings'], { cwd: dir });
  const webpackLog = (built.stdout + built.stderr).trim();
  check('webpack build: no warnings', /compiled successfully/.test(webpackLog) && !/WARNING/.test(webpackLog), webpackLog);
  const wasmFiles = readdirSync(join(dir, 'dist')).filter((f) => f.endsWith('.wasm'));
  check('webpack build: the three .wasm builds emitted as asset modules', wasmFiles.length === 3, wasmFiles.join(', '));
  const server = await serveStatic(join(dir, 'dist'), { headers: { 'Content-Security-Policy': STRICT_CSP } });
  try {
    await checkPage('webpack (CSP)', server.url, { simd: true, consumerDir: dir });
    await checkPage('webpack (CSP) ?simd=0', `${server.url}?simd=0`, { simd: false, consumerDir: dir });
  } finally {
    await server.close();
  }
  await threadedPages('webpack (CSP)', join(dir, 'dist'), dir, { 'Content-Security-Policy': STRICT_CSP });
}

async function plainConsumer() {
  const dir = await prepare('plain', tarball);
  // An inline import map is an inline script for CSP: allow exactly it by its hash.
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  const importMap = html.match(/<script type="importmap">([\s\S]*?)<\/script>/)[1];
  const hash = createHash('sha256').update(importMap).digest('base64');
  const csp = STRICT_CSP.replace("'wasm-unsafe-eval'", `'wasm-unsafe-eval' 'sha256-${hash}'`);
  console.log(`# plain: Content-Security-Policy: ${csp}`);
  const server = await serveStatic(dir, { headers: { 'Content-Security-Policy': csp } });
  try {
    await checkPage('plain page + import map (CSP)', server.url, { simd: true, consumerDir: dir });
    await checkPage('plain page + import map (CSP) ?simd=0', `${server.url}?simd=0`, { simd: false, consumerDir: dir });
  } finally {
    await server.close();
  }
  await threadedPages('plain page + import map (CSP)', dir, dir, { 'Content-Security-Policy': csp });
  // Control: the header is really enforced (without the hash, the import map is refused).
  const control = await serveStatic(dir, { headers: { 'Content-Security-Policy': STRICT_CSP } });
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('console', (msg) => msg.type() === 'error' && errors.push(msg.text()));
    await page.goto(control.url);
    await page.waitForTimeout(500);
    const status = await page.getAttribute('#result', 'data-status');
    check(
      'plain page: control, CSP without the hash blocks the import map',
      status !== 'done' && errors.some((e) => /Content Security Policy/i.test(e)),
      `status ${status}; ${errors.join(' | ')}`,
    );
  } finally {
    await context.close();
    await control.close();
  }
}

// ---- TypeScript consumer -----------------------------------------------------------------------
async function typesConsumer() {
  const dir = await prepare('types', tarball);
  const tsc = binOf(dir, 'typescript', 'tsc');
  await attempt('types: tsc -p tsconfig.bundler.json', async () => {
    await run(process.execPath, [tsc, '-p', 'tsconfig.bundler.json'], { cwd: dir });
    check('types: tsc --noEmit --strict, moduleResolution bundler', true);
  });
  // The nodenext run also traces resolution: the declarations must come from the exports map's
  // "types" condition (for the ESM import and for the require() in src/require.cts).
  await attempt('types: tsc -p tsconfig.nodenext.json', async () => {
    const { stdout } = await run(process.execPath, [tsc, '-p', 'tsconfig.nodenext.json', '--traceResolution'], {
      cwd: dir,
    });
    check('types: tsc --noEmit --strict, moduleResolution nodenext (import and require)', true);
    const resolved = stdout.match(/Module name 'posenc' was successfully resolved to '[^']*'/g) ?? [];
    check(
      "types: 'posenc' resolves to the tarball's dist/index.d.ts through the exports map",
      resolved.length === 2 &&
        resolved.every((l) => l.endsWith(`'${join(dir, 'node_modules/posenc/dist/index.d.ts')}'`)) &&
        /Using 'exports' subpath '\.' with target '\.\/dist\/index\.d\.ts'/.test(stdout),
      resolved.join('\n') || stdout.split('\n').filter((l) => l.includes('posenc')).slice(0, 20).join('\n'),
    );
  });
}

// ---- main ---------------------------------------------------------------------------------------
const consumers = {
  'node-esm': () => nodeConsumer('node-esm', 'index.js', "import.meta.resolve('posenc')"),
  'node-require': () => nodeConsumer('node-require', 'index.cjs', "require.resolve('posenc')"),
  types: typesConsumer,
  vite: viteConsumer,
  webpack: webpackConsumer,
  plain: plainConsumer,
};
const BROWSER_CONSUMERS = ['vite', 'webpack', 'plain'];
const selected = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(consumers);
for (const name of selected) if (!consumers[name]) throw new Error(`unknown consumer ${name}`);

const started = Date.now();
let tarball;
try {
  tarball = await attempt('npm pack', pack);
  if (tarball) {
    for (const name of selected) {
      if (BROWSER_CONSUMERS.includes(name) && !browser) {
        browser = await attempt('launch Chromium', async () => {
          ({ launchChromium, serveStatic } = await import('../browser/launch.mjs'));
          return launchChromium();
        });
        if (!browser) break;
      }
      const t0 = Date.now();
      console.log(`# ${name}`);
      await attempt(`${name}: consumer ran to completion`, consumers[name]);
      console.log(`# ${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
  }
} finally {
  await browser?.close();
  if (process.env.KEEP) console.log(`# kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
console.log(`# total ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 && passed > 0 ? 0 : 1;
