// Browser test of the web app: Debian's Chromium (never a downloaded one) driven by
// playwright-core. Serves the wasm build directory, loads a bundled trace through the file
// picker and a broken one through a drop, and checks that what the page decoded equals what
// the native CLI reports for the same file.
//
// Environment: CHAKRA_WEB_DIR (build/wasm/web), CHAKRA_BIN (native chakra), CHAKRA_SHOTS
// (where screenshots go). Run: node --test tests/e2e/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile, mkdir } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const webDir = process.env.CHAKRA_WEB_DIR ?? path.join(repo, 'build/wasm/web');
const chakraBin = process.env.CHAKRA_BIN ?? path.join(repo, 'build/native/native/chakra');
const shotsDir = process.env.CHAKRA_SHOTS ?? path.join(repo, 'build/e2e-shots');
const example = path.join(repo, 'assets/examples/pytorch_2rank/chakra_trace.0.et.gz');

const mime = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };
let server, browser, page, url;
const consoleLines = [];

before(async () => {
  server = createServer(async (req, res) => {
    const name = path.basename(new URL(req.url, 'http://x').pathname) || 'index.html';
    try {
      const body = await readFile(path.join(webDir, name));
      res.writeHead(200, { 'content-type': mime[path.extname(name)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${server.address().port}/index.html`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--enable-unsafe-swiftshader'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('console', (msg) => consoleLines.push(msg.text()));
  page.on('pageerror', (err) => consoleLines.push('pageerror: ' + err.message));
  await mkdir(shotsDir, { recursive: true });
});

after(async () => {
  await browser?.close();
  server?.close();
});

const status = () => page.evaluate(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])));

test('the wasm module starts and renders with WebGL2', async () => {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  await page.waitForTimeout(500);  // a few frames
  assert.ok(consoleLines.some((l) => l.includes('WebGL 2.0')), consoleLines.join('\n'));
  assert.ok(!consoleLines.some((l) => l.startsWith('pageerror')), consoleLines.join('\n'));
  const s = await status();
  assert.equal(s.files.length, 0);
  assert.match(s.version, /^\d+\.\d+\.\d+$/);
  await page.screenshot({ path: path.join(shotsDir, '01-start.png') });
});

test('a trace opened with the file picker decodes as in the native CLI', async () => {
  await page.setInputFiles('#file', example);
  await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('Loaded'));
  const s = await status();
  assert.equal(s.files.length, 1);
  const native = JSON.parse(execFileSync(chakraBin, ['info', '--json', example], { encoding: 'utf8' }))[0];
  assert.deepEqual(s.files[0].summary, native.summary);
  assert.equal(s.files[0].summary.nodes, 1634);
  assert.equal(s.files[0].errors, 0);
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(shotsDir, '02-loaded.png') });
});

test('a broken file dropped on the page gives an error naming it', async () => {
  const truncated = [...(await readFile(example)).subarray(0, 1000)];
  await page.evaluate((bytes) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(bytes)], 'truncated.et.gz'));
    document.getElementById('canvas').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, truncated);
  await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('Could not load'));
  const s = await status();
  assert.equal(s.files.length, 1, 'nothing added for a broken file');
  assert.match(s.error, /^truncated\.et\.gz: /);
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(shotsDir, '03-error.png') });
});
