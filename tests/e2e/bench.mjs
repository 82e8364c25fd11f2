// On-demand benchmark of the web app in headless Chromium (not part of the test run):
//   node tests/e2e/bench.mjs FILE...          trace files dropped together (a .et, a host ET +
//                                            Kineto pair, a folder's files)
//   node tests/e2e/bench.mjs '#SHARE-HASH'   a share link (e.g. a synthetic workload), simulated
// Prints: page ready (navigation to the app accepting files), time to open TRACE (dropped through
// the file input until the workspace holds it) or to generate and simulate the link's workload,
// then the app's CPU time per frame (app_frame_ms: file work + UI + draw submission) while the
// timeline pans and zooms, the same for the first rank's graph, and the page's CPU while idle,
// empty and with the timeline shown.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveDir, launchChromium } from './serve.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const webDir = process.env.CHAKRA_WEB_DIR ?? path.join(repo, 'build/wasm/web');
const inputs = process.argv.slice(2);
if (!inputs.length) throw new Error("usage: node tests/e2e/bench.mjs FILE... | '#HASH'");
const link = inputs[0].startsWith('#') ? inputs[0] : '';
const { server, url } = await serveDir(webDir);
const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
if (process.env.BENCH_CONSOLE) page.on('console', (m) => console.log('page:', m.text()));
const status = () => page.evaluate(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])));
let t = performance.now();
await page.goto(url + link);
await page.waitForSelector('body[data-ready="1"]');
console.log(`page ready             ${((performance.now() - t) / 1000).toFixed(2)} s ` +
            `(${(await page.evaluate(() => window.chakrakitReadyMs) / 1000).toFixed(2)} s after navigation began, in the page)`);
// The renderer's CPU over a few idle seconds (Chromium's TaskDuration: all of the page's main
// thread work), as a share of one core.
const cdp = await page.context().newCDPSession(page);
await cdp.send('Performance.enable');
const taskSeconds = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration').value;
async function idleShare(label) {
  await page.mouse.move(5, 5);
  await page.waitForTimeout(1000);  // let the last input's frames settle
  const t0 = performance.now(), c0 = await taskSeconds();
  await page.waitForTimeout(3000);
  const share = (await taskSeconds() - c0) / ((performance.now() - t0) / 1000);
  console.log(`idle page CPU (${label}) ${(100 * share).toFixed(1)}% of a core`);
}
await idleShare('empty');
t = performance.now();
if (link) {
  await page.evaluate(() => Module.ccall('app_command', 'number', ['string'], ['fit']));
  await page.evaluate(() => Module.ccall('app_command', 'number', ['string'], ['simulate']));
  const generated = performance.now();
  // The run happens in the page's simulation worker; the page keeps drawing meanwhile.
  await page.waitForFunction(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).simulating === null,
    null, { timeout: 600000, polling: 100 });
  await page.evaluate(() => Module.ccall('app_command', 'number', ['string'], ['timeline 1']));
  const run = (await status()).runs[0];
  console.log(`link applied + generated ${((generated - t) / 1000).toFixed(2)} s, simulated in the worker ` +
              `${((performance.now() - generated) / 1000).toFixed(2)} s (end ${run?.result?.end_ns} ns)`);
  t = performance.now();
} else {
  // While the file opens: the longest gap between animation frames (the page's main thread
  // blocked), and when the status first shows the load in progress.
  await page.evaluate(() => {
    window.benchGaps = [];
    let last = performance.now();
    const tick = (now) => { window.benchGaps.push(now - last); last = now; if (!window.benchStop) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
  await page.setInputFiles('#file', inputs);
  const shown = await page.waitForFunction(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).busy,
    null, { timeout: 120000, polling: 10 }).then(() => performance.now() - t);
  console.log(`load in progress shown  ${shown.toFixed(0)} ms after the file was given`);
}
await page.waitForFunction(() => window.chakrakitReading === 0 && !JSON.parse(Module.ccall('app_status_json', 'string', [], [])).busy,
  null, { timeout: 120000, polling: 50 });
if (!link) {
  const gaps = await page.evaluate(() => { window.benchStop = true; return window.benchGaps; });
  const fs = await import('node:fs');
  const fileBytes = inputs.reduce((n, f) => n + fs.statSync(f).size, 0);
  const wasmBytes = await page.evaluate(() => Module.HEAP8.length);
  console.log(`longest frame gap while opening ${Math.max(...gaps).toFixed(0)} ms (${gaps.filter((g) => g > 100).length} over 100 ms); ` +
              `wasm memory ${(wasmBytes / 1e6).toFixed(0)} MB = ${(wasmBytes / fileBytes).toFixed(2)}x the ${(fileBytes / 1e6).toFixed(0)} MB of ${inputs.length} file(s)`);
}
const s = await status();
if (s.error || !s.ranks.length) throw new Error(`the page did not open ${inputs.join(' ')}: ${s.error || 'no ranks'}`);
await page.evaluate(() => Module.ccall('app_command', 'number', ['string'], ['view timeline']));
await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const nodes = s.ranks.reduce((n, r) => n + r.summary.nodes, 0);
console.log(`open + timeline shown  ${((performance.now() - t) / 1000).toFixed(2)} s  (${s.ranks.length} ranks, ${nodes} nodes, ${s.error || 'no error'})`);
await idleShare('timeline shown');
const box = await page.locator('canvas').boundingBox();
await page.mouse.move(box.x + 800, box.y + 300);
const frames = [];
// 20 Ctrl+wheel steps in (zoom at the cursor), then 40 frames of right-button drag panning.
for (let i = 0; i < 60; ++i) {
  if (i < 20) {
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -100);
    await page.keyboard.up('Control');
  } else {
    if (i === 20) await page.mouse.down({ button: 'right' });
    await page.mouse.move(box.x + 800 - 10 * (i - 20), box.y + 300);
  }
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
  frames.push(await page.evaluate(() => Module.ccall('app_frame_ms', 'number', [], [])));
}
await page.mouse.up({ button: 'right' });
frames.sort((a, b) => a - b);
console.log(`frame CPU while panning/zooming: median ${frames[30].toFixed(1)} ms, p90 ${frames[54].toFixed(1)} ms (SwiftShader, no GPU)`);
await page.screenshot({ path: path.join(repo, 'build/e2e-shots/bench-timeline.png') });
// The graph of the current rank: laid out once, brought to a node in the middle of the trace
// (boxes on screen, not the empty space around a fitted graph), then 20 wheel steps out and in
// and 40 frames of drag panning.
t = performance.now();
await page.evaluate((n) => Module.ccall('app_command', 'number', ['string'], [`select ${n}`]), Math.floor((s.ranks[0]?.summary.nodes ?? 2) / 2));
await page.evaluate(() => Module.ccall('app_command', 'number', ['string'], ['view graph']));
await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
console.log(`graph shown            ${((performance.now() - t) / 1000).toFixed(2)} s (${s.ranks[0]?.summary.nodes} nodes on rank 0, layout included)`);
await page.mouse.move(box.x + 800, box.y + 400);
const graphFrames = [];
for (let i = 0; i < 60; ++i) {
  if (i < 20) {
    await page.mouse.wheel(0, i < 10 ? 100 : -100);
  } else {
    if (i === 20) await page.mouse.down({ button: 'right' });
    await page.mouse.move(box.x + 800 - 10 * (i - 20), box.y + 400 - 3 * (i - 20));
  }
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
  graphFrames.push(await page.evaluate(() => Module.ccall('app_frame_ms', 'number', [], [])));
}
await page.mouse.up({ button: 'right' });
graphFrames.sort((a, b) => a - b);
console.log(`frame CPU while panning/zooming the graph: median ${graphFrames[30].toFixed(1)} ms, p90 ${graphFrames[54].toFixed(1)} ms`);
await page.screenshot({ path: path.join(repo, 'build/e2e-shots/bench-graph.png') });
await browser.close();
server.close();
