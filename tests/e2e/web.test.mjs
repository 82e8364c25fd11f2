// End-to-end test of the web app: Debian's Chromium (never a downloaded one) driven by
// playwright-core. Serves the wasm build, drops real multi-rank traces from ../shared on the
// page, opens every view, runs simulations and checks the numbers equal the native CLI's for the
// same files and settings, and reopens a share link in a fresh page. Screenshots of each step go
// to CHAKRA_SHOTS (looked at by people, kept by CI as artifacts).
//
// Environment: CHAKRA_WEB_DIR (build/wasm/web), CHAKRA_BIN (native chakra), CHAKRA_BENCH
// (chakra_bench, beside it in the build tree), CHAKRA_SHOTS, CHAKRA_SHARED_DIR (../shared).
// Run: node --test tests/e2e/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, mkdir, writeFile, mkdtemp, rm, rename } from 'node:fs/promises';
import { existsSync, appendFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveDir, launchChromium } from './serve.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const webDir = process.env.CHAKRA_WEB_DIR ?? path.join(repo, 'build/wasm/web');
const chakraBin = process.env.CHAKRA_BIN ?? path.join(repo, 'build/native/native/chakra');
const benchBin = process.env.CHAKRA_BENCH ?? path.join(path.dirname(chakraBin), '../bench/chakra_bench');
const shotsDir = process.env.CHAKRA_SHOTS ?? path.join(repo, 'build/e2e-shots');
const shared = process.env.CHAKRA_SHARED_DIR ?? path.join(repo, '../shared');
const twoRank = path.join(shared, 'data/chakra_et/ericding_pytorch_converted_2rank');
const resnet64 = path.join(shared, 'data/chakra_et/astra-sim_resnet50_dp_64npus_2023-11_no_metadata');
// Tests that read ../shared: where it is absent they are not run, counted for tests/run's last
// line (CHAKRA_NOT_RUN_FILE); CHAKRA_REQUIRE_SHARED=1 (CI) makes that an error.
const haveShared = existsSync(twoRank) && existsSync(resnet64);
if (!haveShared && process.env.CHAKRA_REQUIRE_SHARED === '1')
  throw new Error(`reference traces missing under ${shared} (CHAKRA_REQUIRE_SHARED=1)`);
let notRun = 0;
function sharedTest(name, fn) {
  if (haveShared) return test(name, fn);
  ++notRun;
  return test(name, { skip: `it reads ../shared, absent at ${shared}` }, fn);
}

let server, browser, page, url;
const consoleLines = [];

before(async () => {
  ({ server, url } = await serveDir(webDir));
  browser = await launchChromium();
  page = await openPage(url);
  await mkdir(shotsDir, { recursive: true });
});

after(async () => {
  await browser?.close();
  server?.close();
});

async function openPage(address) {
  const p = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  p.on('console', (msg) => consoleLines.push(msg.text()));
  p.on('pageerror', (err) => consoleLines.push('pageerror: ' + err.message));
  await p.goto(address);
  await p.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  return p;
}

// A run's per-NPU figure as an array (the page's status holds each run's result as chakra simulate
// --json writes it).
const perNpu = (run, key) => run.result.npus.map((n) => n[key]);
const status = (p = page) => p.evaluate(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])));
const command = (c, p = page) => p.evaluate((c) => Module.ccall('app_command', 'number', ['string'], [c]), c);
// Starts a run (in the page's simulation worker) and waits for it to end; returns what the
// command returned (0 when it could not start).
async function simulate(p = page) {
  const started = await command('simulate', p);
  await p.waitForFunction(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).simulating === null,
    null, { timeout: 120000 });
  return started;
}
const shot = async (name, p = page) => { await p.waitForTimeout(400); await p.screenshot({ path: path.join(shotsDir, name) }); };

// Drops files on the canvas the way a browser does (a DataTransfer with File objects).
async function drop(files, p = page) {
  const payload = [];
  for (const f of files) payload.push({ name: path.basename(f), bytes: [...await readFile(f)] });
  await p.evaluate((payload) => {
    const dt = new DataTransfer();
    for (const f of payload) dt.items.add(new File([new Uint8Array(f.bytes)], f.name));
    document.getElementById('canvas').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, payload);
  await p.waitForFunction(() => window.chakrakitReading === 0 && !JSON.parse(Module.ccall('app_status_json', 'string', [], [])).busy,
    null, { timeout: 60000 });
}

const filesIn = async (dir, re) => (await readdir(dir)).filter((n) => re.test(n)).sort().map((n) => path.join(dir, n));

// Clicks the canvas at (x, y) CSS pixels from its corner until a node is selected (up to 3
// clicks, 3 s each): the page draws only when something changes, and on a loaded machine the
// first click can come before the frame that lays out the view it aims at.
async function clickUntilSelected(x, y, p = page) {
  const box = await p.locator('canvas').boundingBox();
  for (let attempt = 0; attempt < 3; ++attempt) {
    await p.mouse.click(box.x + x, box.y + y);
    try {
      await p.waitForFunction(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).selected >= 0,
        null, { timeout: 3000 });
      return;
    } catch {
      // not selected yet: the view was not laid out when the click came; click again
    }
  }
}

test('the page starts with WebGL2 and the instanced rectangle shaders', async () => {
  assert.ok(consoleLines.some((l) => l.includes('WebGL 2.0') && l.includes('instanced rects on')), consoleLines.join('\n'));
  assert.ok(!consoleLines.some((l) => l.startsWith('pageerror')), consoleLines.join('\n'));
  const s = await status();
  assert.equal(s.ranks.length, 0);
  assert.match(s.version, /^\d+\.\d+\.\d+$/);
  await shot('01-start.png');
  // Idle when idle: no frame is drawn while nothing happens; input draws some.
  const frames = () => page.evaluate(() => Module._app_frames_drawn());
  await page.waitForTimeout(500);
  const before = await frames();
  await page.waitForTimeout(1000);
  assert.equal(await frames(), before, 'an idle page draws no frames');
  await page.mouse.move(300, 300);
  await page.mouse.move(320, 310);
  await page.waitForTimeout(200);
  assert.ok(await frames() > before, 'input draws frames');
});

sharedTest('a dropped 2-rank PyTorch trace decodes as in the native CLI, and every view opens', async () => {
  await drop(await filesIn(twoRank, /./));
  const s = await status();
  assert.equal(s.error, '');
  assert.equal(s.ranks.length, 2);
  const native = JSON.parse(execFileSync(chakraBin, ['info', '--json', ...await filesIn(twoRank, /\.et$/)], { encoding: 'utf8' }));
  for (let r = 0; r < 2; ++r) {
    assert.equal(s.ranks[r].rank, r);
    assert.deepEqual(s.ranks[r].summary, native[r].summary);
  }
  assert.equal(s.ranks[0].summary.nodes, 1634);
  assert.ok(s.log.some((l) => l.includes('communicator groups')), s.log.join('\n'));
  for (const [i, view] of ['overview', 'nodes', 'graph', 'timeline', 'simulation'].entries()) {
    assert.equal(await command('view ' + view), 1);
    await page.waitForTimeout(200);
    assert.equal((await status()).view, view);
    await shot(`02-${i + 1}-${view}.png`);
  }
  assert.ok(!consoleLines.some((l) => l.startsWith('pageerror')), consoleLines.join('\n'));
});

sharedTest('clicking a node in the table selects it and shows its dependencies', async () => {
  await command('view nodes');
  await page.waitForTimeout(300);
  // Rows start under the tab bar and the table header; click the third row's id cell.
  await clickUntilSelected(300, 140);
  const s = await status();
  assert.ok(s.selected >= 0, 'a node is selected');
  assert.match(s.state, /(^|&)n=\d+/);  // the link's readable form (the address bar has it compressed)
  // The address bar follows within half a second (written at most twice a second).
  await page.waitForTimeout(700);
  assert.equal(await page.evaluate(() => location.hash.slice(1)), s.hash);
  await shot('03-selected.png');
  // Ctrl+C copies the selected row to the system clipboard, tab-separated, its id first.
  await page.keyboard.down('Control');
  await page.keyboard.down('c');
  await page.waitForTimeout(120);
  await page.keyboard.up('c');
  await page.keyboard.up('Control');
  await page.waitForTimeout(200);
  const copied = await page.evaluate(() => window.chakrakitClipboard);
  assert.equal(copied.split('\t')[0], String(s.selected), copied);
  assert.equal(copied.split('\t').length, 6);
  await command('view graph');
  await shot('03-graph-selected.png');
});

sharedTest('a simulation of a real trace gives the CLI\'s numbers; its errors show in the page', async () => {
  // The 2-rank trace names a communicator its comm_group.json lacks: a clear error, no dead page.
  await command('view simulation');
  await command('fit');
  assert.equal(await simulate(), 1);  // the worker finds the problem
  let s = await status();
  assert.match(s.log.at(-1), /communicator group \d+ is not defined/);
  assert.match(s.sim_error, /communicator group \d+ is not defined/);
  await shot('04-sim-error.png');

  await command('clear');
  await drop(await filesIn(resnet64, /\.et$/));
  s = await status();
  assert.equal(s.ranks.length, 64);
  await command('fit');
  assert.equal(await simulate(), 1);
  s = await status();
  assert.equal(s.runs.length, 1);
  const run = s.runs[0];
  assert.equal(perNpu(run, 'finish_ns').length, 64);
  assert.ok(run.result.end_ns > 0 && !run.result.deadlock);
  // The same files and the settings the page shows, through the CLI.
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'chakra-e2e-'));
  await writeFile(path.join(tmp, 'network.yml'), s.network);
  await writeFile(path.join(tmp, 'system.json'), s.system);
  execFileSync(chakraBin, ['simulate', '--workload', path.join(resnet64, 'resnet50_DataParallel'), '--network', path.join(tmp, 'network.yml'),
    '--system', path.join(tmp, 'system.json'), '--json', path.join(tmp, 'out.json'), '--no-summary']);
  const cli = JSON.parse(await readFile(path.join(tmp, 'out.json'), 'utf8'));
  assert.deepEqual(perNpu(run, 'finish_ns'), cli.npus.map((n) => n.finish_ns ?? n.finish));
  await shot('05-sim-result.png');
  // Change a parameter through a share link, run again, compare side by side.
  const slower = s.state.replace(/sim\.bw=[^&]*/, 'sim.bw=45');  // readable links still open
  await page.evaluate((h) => Module.ccall('app_apply_hash', null, ['string'], [h]), slower);
  assert.equal((await status()).error, '');
  assert.equal(await simulate(), 1);
  s = await status();
  assert.equal(s.runs.length, 2);
  assert.match(s.network, /bandwidth: \[ 45 \]/);
  assert.ok(s.runs[1].result.end_ns > s.runs[0].result.end_ns, 'a tenth of the bandwidth is slower');
  await shot('06-sim-compare.png');
  await command('view timeline');
  await page.evaluate((h) => Module.ccall('app_apply_hash', null, ['string'], [h]), (await status()).state.replace(/&?t\.(0|1|src)=[^&]*/g, '') + '&t.src=2');
  await shot('07-sim-timeline.png');
  const frameMs = await page.evaluate(() => Module.ccall('app_frame_ms', 'number', [], []));
  console.log(`# frame time with the simulated timeline of 64 NPUs: ${frameMs.toFixed(1)} ms (SwiftShader)`);
});

sharedTest('a share link restores the state in a fresh page once the same files are dropped', async () => {
  const before = await status();
  const fresh = await openPage(url + '#' + before.hash);
  let s = await status(fresh);
  assert.equal(s.error, '');
  assert.equal(s.view, before.view);
  assert.equal(s.network, before.network);
  assert.equal(s.system, before.system);
  assert.ok(s.log.some((l) => l.includes('drop the same files')), s.log.join('\n'));
  assert.ok(before.hash.length <= 500, `a compact link: ${before.hash.length} characters`);
  assert.ok(!before.state.includes('resnet50'), 'no file names in links');
  await drop(await filesIn(resnet64, /\.et$/), fresh);
  s = await status(fresh);
  assert.equal(s.ranks.length, 64);
  // Its runs are made again, each from its own settings in the link; then the state is the same,
  // the timeline of the run it showed included.
  assert.equal(before.runs.length, 2);
  await fresh.waitForFunction((n) => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).runs.length === n,
    before.runs.length, { timeout: 60000 });
  s = await status(fresh);
  assert.deepEqual(s.runs.map((r) => r.result.end_ns), before.runs.map((r) => r.result.end_ns));
  assert.equal(s.state, before.state);
  await shot('08-share-restored.png', fresh);
  // A hostile link is an error in the page, not a dead page.
  await fresh.evaluate(() => Module.ccall('app_apply_hash', null, ['string'], ['v=graph&sim.topo=Ring&sim.npus=0&sim.bw=1&sim.lat=1']));
  s = await status(fresh);
  assert.match(s.error, /npus_count '0' must be an integer from 1/);
  await fresh.evaluate(() => Module.ccall('app_apply_hash', null, ['string'], ['%%%']));
  assert.match((await status(fresh)).error, /^share link: /);
  await fresh.close();
});

sharedTest('a broken file dropped on the page gives an error naming it and changes nothing', async () => {
  const before = (await status()).ranks.length;
  const truncated = [...(await readFile(path.join(twoRank, 'chakra_trace.0.et'))).subarray(0, 1000)];
  await page.evaluate((bytes) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(bytes)], 'truncated.0.et'));
    document.getElementById('canvas').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, truncated);
  await page.waitForFunction(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).error !== '');
  const s = await status();
  assert.equal(s.ranks.length, before, 'nothing added for a broken file');
  assert.match(s.error, /^truncated\.0\.et: /);
  await shot('09-error.png');
  // Files of no kind the page reads say what they look like.
  const png = [...await readFile(path.join(shotsDir, '09-error.png'))];
  for (const [name, bytes, message] of [
    ['picture.png', png, /^picture\.png: not a trace this page reads: it looks like a PNG image/],
    ['hello.json', [...Buffer.from('{"hello": 1}')], /^hello\.json: not a trace this page reads: it looks like JSON of no kind/]]) {
    await page.evaluate(({ name, bytes }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(bytes)], name));
      document.getElementById('canvas').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, { name, bytes });
    await page.waitForFunction((n) => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).error.startsWith(n), name);
    const after = await status();
    assert.match(after.error, message);
    assert.equal(after.ranks.length, before, `nothing added for ${name}`);
  }
});

sharedTest('a file larger than a slice is read and decoded in slices: the status says what it does from the start, and it decodes as the CLI does', async () => {
  const p = await openPage(url);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'chakra-slices-'));
  try {
    // The ResNet rank replicated 3x (chakra_bench writes it): 27 MB, over the 16 MB the module
    // holds undecoded, so the page reads while it decodes (the worker reads 3 slices ahead).
    execFileSync(benchBin, ['--copies', '3', '--make-input', '--work', dir]);
    const et = path.join(dir, 'resnet_rank.1.et');
    await rename(path.join(dir, 'resnet_x3.et'), et);
    await p.evaluate(() => {
      window.seen = [];
      window.watch = setInterval(() => {
        const s = JSON.parse(Module.ccall('app_brief_status_json', 'string', [], []));
        if (s.busy) window.seen.push(`${s.loading_file}|${s.loading_phase}|${s.loading_bytes}`);
      }, 5);
    });
    await p.setInputFiles('#file', [et]);
    await p.waitForFunction(() => window.chakrakitReading === 0 && !JSON.parse(Module.ccall('app_status_json', 'string', [], [])).busy,
      null, { timeout: 60000 });
    const seen = await p.evaluate(() => { clearInterval(window.watch); return window.seen; });
    const size = (await readFile(et)).length;
    assert.ok(size > 16 << 20);
    assert.ok(seen.includes(`resnet_rank.1.et|reading and decoding|${size}`), seen.join('\n'));
    const s = await status(p);
    assert.equal(s.error, '');
    const native = JSON.parse(execFileSync(chakraBin, ['info', '--json', et], { encoding: 'utf8' }));
    assert.equal(s.ranks.length, 1);
    assert.equal(s.ranks[0].rank, 1);
    assert.equal(s.ranks[0].checked, true);
    assert.deepEqual(s.ranks[0].summary, native[0].summary);
    // A large file of no kind the page reads: refused after its first slice, nothing kept.
    const png = path.join(dir, 'huge.png');
    await writeFile(png, Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(20 << 20, 7)]));
    await p.setInputFiles('#file', [png]);
    await p.waitForFunction(() => window.chakrakitReading === 0 && JSON.parse(Module.ccall('app_status_json', 'string', [], [])).error !== '',
      null, { timeout: 60000 });
    const after = await status(p);
    assert.match(after.error, /^huge\.png: not a trace this page reads: it looks like a PNG image/);
    assert.equal(after.ranks.length, 1);
    assert.equal(after.busy, false);
    // Clear, then one file three times: the memory the first load took is reused, not added to.
    // The ResNet rank itself (9 MB): held whole, so every load takes the same memory, where the
    // peak of a streamed file depends on how its reads and decoding interleave.
    const rank = path.join(dir, 'resnet_rank.1.small.et');
    execFileSync('sh', ['-c', `gzip -dc "${path.join(shared, 'reference/chakra/outputs/trace_link/resnet_2gpu_rank1.et.gz')}" > "${rank}"`]);
    const rankNative = JSON.parse(execFileSync(chakraBin, ['info', '--json', rank], { encoding: 'utf8' }));
    let heap = 0;
    for (let i = 0; i < 3; ++i) {
      await p.evaluate(() => Module.ccall('app_command', 'number', ['string'], ['clear']));
      await p.setInputFiles('#file', [rank]);
      await p.waitForFunction(() => window.chakrakitReading === 0 && !JSON.parse(Module.ccall('app_status_json', 'string', [], [])).busy,
        null, { timeout: 60000 });
      assert.deepEqual((await status(p)).ranks[0].summary, rankNative[0].summary);
      const now = await p.evaluate(() => Module.HEAP8.length);
      if (i === 0) heap = now;
      else assert.equal(now, heap, `load ${i + 1} after Clear`);
    }
    // A page whose file reader cannot start (copied without file_reader.js): the large file is
    // dropped with the reason, not left reading forever.
    const q = await openPage(url);
    try {
      await q.route('**/file_reader.js', (r) => r.fulfill({ status: 404, body: 'not found' }));
      await q.setInputFiles('#file', [et]);
      await q.waitForFunction(() => window.chakrakitReading === 0 && JSON.parse(Module.ccall('app_status_json', 'string', [], [])).error !== '',
        null, { timeout: 60000 });
      const failed = await status(q);
      assert.match(failed.error, /^resnet_rank\.1\.et: could not be read to its end \(.*file_reader\.js\) failed to start\)$/);
      assert.equal(failed.ranks.length, 0);
      assert.equal(failed.busy, false);
    } finally {
      await q.close();
    }
  } finally {
    await p.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a long simulation runs in a worker: the page keeps drawing, shows progress, and can cancel it', async () => {
  // Long enough to be cancelled mid-run: 512 layers, where 128 take the native CLI 0.7 s.
  const p = await openPage(url + '#synth=llama2-7b&synth.layers=512&synth.dp=16&synth.tp=8&v=simulation');
  await p.waitForFunction(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).ranks.length === 128,
    null, { timeout: 60000 });
  await command('fit', p);
  // Frames drawn by the page while the run is under way.
  const countFrames = (ms) => p.evaluate((ms) => new Promise((done) => {
    let frames = 0;
    const end = performance.now() + ms;
    const tick = () => { frames++; if (performance.now() < end) requestAnimationFrame(tick); else done(frames); };
    requestAnimationFrame(tick);
  }), ms);
  await command('view overview');  // the first page's 64-rank timeline would compete for the CPU
  const idle = await countFrames(2000);
  assert.equal(await command('simulate', p), 1);
  const frames = await countFrames(2000);
  console.log(`# frames idle ${idle}, while simulating ${frames}`);
  let s = await status(p);
  assert.notEqual(s.simulating, null, 'still running after two seconds');
  // SwiftShader draws on the CPU, which the worker shares: half the idle rate is enough (a run on
  // the page's thread would draw one frame at most).
  assert.ok(frames >= Math.max(4, idle / 2), `the page drew ${frames} frames in the 2 s after the run started, ${idle} idle`);
  await p.waitForFunction(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).simulating > 0,
    null, { timeout: 60000 });
  await shot('10-sim-progress.png', p);
  assert.notEqual((await status(p)).simulating, null, 'the run must still be going to be cancelled');
  assert.equal(await command('cancel', p), 1);
  s = await status(p);
  assert.equal(s.simulating, null);
  assert.equal(s.runs.length, 0);
  assert.equal(s.log.at(-1), 'run 1 cancelled');
  // A smaller workload afterwards runs to the end in a fresh worker, with the same numbers as here.
  await p.evaluate(() => Module.ccall('app_apply_hash', null, ['string'], ['synth=llama2-7b&synth.layers=2&synth.dp=2&synth.tp=2&v=simulation']));
  await command('fit', p);
  assert.equal(await simulate(p), 1);
  s = await status(p);
  assert.equal(s.runs.length, 1, s.log.join('\n'));
  assert.equal(s.runs[0].id, 2);
  assert.ok(s.runs[0].result.end_ns > 0 && !s.runs[0].result.deadlock);
  await p.close();
});

// A real 8-rank run, host ETs and Kineto traces dropped together: the page links (with sync
// dependencies), converts with the replay model and simulates; each rank's measured step sits
// beside its simulated one, with the CLI's numbers for the same files and preset.
sharedTest('real host ET + Kineto pairs replay against their measured steps, as in the CLI', async () => {
  const dlrm = path.join(shared, 'data/pairs/dlrm_8rank_v100');
  const files = [];
  for (let r = 0; r < 8; ++r) files.push(...await filesIn(path.join(dlrm, `rank${r}`), /\.json$/));
  await command('clear');
  // A Kineto trace alone opens to its measured timeline (no replay until its host ET comes).
  const kineto0 = files.find((f) => f.includes('worker0_'));
  await page.setInputFiles('#file', [kineto0]);
  await page.waitForFunction(() => window.chakrakitReading === 0 && JSON.parse(Module.ccall('app_status_json', 'string', [], [])).ranks.length === 1,
    null, { timeout: 60000 });
  assert.equal(await command('timeline 0'), 1);
  await page.waitForTimeout(300);
  const alone = (await status()).timeline_tracks;
  for (const name of ['rank 0 stream 7', 'rank 0 stream 84'])
    assert.ok(alone.includes(name), `${name} in ${alone.join(', ')}`);
  // Kineto names threads by their OS ids: the main thread and autograd's.
  assert.equal(alone.filter((n) => n.startsWith('rank 0 thread ')).length, 2, alone.join(', '));
  await shot('06a-kineto-alone.png');
  await command('clear');
  // What the status says while they open (pairs are linked and converted in Web Workers).
  await page.evaluate(() => {
    window.seenPhases = new Set();
    window.phaseWatch = setInterval(() => window.seenPhases.add(JSON.parse(Module.ccall('app_brief_status_json', 'string', [], [])).loading_phase), 10);
  });
  const t0 = Date.now();
  await page.setInputFiles('#file', files);  // "Open files...": faster to script than a drop of 14 MB
  // Every file handed over and opened, each rank linked once both its files are in.
  await page.waitForFunction(() => {
    const s = JSON.parse(Module.ccall('app_status_json', 'string', [], []));
    return window.chakrakitReading === 0 && !s.busy && s.ranks.length === 8;
  }, null, { timeout: 60000 });
  console.log(`# 8 DLRM host ET + Kineto pairs read, linked and converted in ${((Date.now() - t0) / 1000).toFixed(2)} s`);
  const phases = await page.evaluate(() => { clearInterval(window.phaseWatch); return [...window.seenPhases]; });
  assert.ok(phases.includes('linking and converting'), phases.join(', '));
  let s = await status();
  assert.equal(s.error, '');
  assert.equal(s.ranks.length, 8);
  assert.equal(await command('preset v100-dgx1-8'), 1);
  await command('view simulation');
  assert.equal(await simulate(), 1);
  s = await status();
  const run = s.runs.at(-1);
  assert.equal(perNpu(run, 'measured_step_ns').length, 8);
  for (let r = 0; r < 8; ++r) {
    assert.ok(perNpu(run, 'measured_step_ns')[r] > 0, `rank ${r} has a measured step`);
    const error = (perNpu(run, 'finish_ns')[r] - perNpu(run, 'start_ns')[r]) / perNpu(run, 'measured_step_ns')[r] - 1;
    assert.ok(Math.abs(error) < 0.06, `rank ${r}: simulated ${perNpu(run, 'finish_ns')[r] - perNpu(run, 'start_ns')[r]} ns against ${perNpu(run, 'measured_step_ns')[r]} ns`);
  }
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'chakra-e2e-'));
  execFileSync(chakraBin, ['link', dlrm, '-o', path.join(tmp, 'linked/dlrm.json'), '--sync-deps', '--quiet']);
  execFileSync(chakraBin, ['convert', 'pytorch', path.join(tmp, 'linked'), '-o', path.join(tmp, 'et/dlrm')]);
  execFileSync(chakraBin, ['simulate', '--workload', path.join(tmp, 'et/dlrm'), '--preset', 'v100-dgx1-8',
    '--json', path.join(tmp, 'out.json'), '--no-summary']);
  const cli = JSON.parse(await readFile(path.join(tmp, 'out.json'), 'utf8'));
  assert.deepEqual(perNpu(run, 'finish_ns'), cli.npus.map((n) => n.finish_ns));
  assert.deepEqual(perNpu(run, 'measured_step_ns'), cli.npus.map((n) => n.measured_step_ns));
  assert.ok(run.result.start_error.nodes > 1000, JSON.stringify(run.result.start_error));
  assert.deepEqual(run.result.start_error, cli.start_error);
  await shot('06b-measured-vs-simulated.png');
  // The critical path across the 8 ranks in the Analysis view: on the measured times, step for
  // step what chakra analyze --critical-path finds on the same converted traces; on the run, a
  // path as long as the run's step.
  assert.equal(await command('analysis 0'), 1);
  assert.equal(await command('analysis tab path'), 1);
  await page.waitForTimeout(400);
  const measuredPath = (await status()).critical_path;
  const cliPath = JSON.parse(execFileSync(chakraBin, ['analyze', '--critical-path', '--json', path.join(tmp, 'et')],
    { encoding: 'utf8', maxBuffer: 1 << 28 })).critical_path;
  assert.equal(measuredPath.step, cliPath.step);
  assert.deepEqual(measuredPath.steps, cliPath.steps);
  await shot('06d-critical-path-measured.png');
  assert.equal(await command(`analysis ${run.id}`), 1);
  await page.waitForTimeout(400);
  const simulatedPath = (await status()).critical_path;
  assert.equal(simulatedPath.step, Math.max(...cli.npus.map((n) => n.finish_ns)));
  assert.equal(simulatedPath.steps.reduce((sum, x) => sum + x.duration, 0), simulatedPath.step);
  await shot('06e-critical-path-simulated.png');
  // The run compared with the measured times, rank by rank and kernel by kernel.
  assert.equal(await command('analysis tab compare'), 1);
  assert.equal(await command('compare 0'), 1);
  await page.waitForTimeout(400);
  const comparison = (await status()).comparison;
  assert.equal(comparison.length, 8, JSON.stringify(comparison));
  for (const c of comparison) assert.ok(c.changed > 0 && c.changed < c.names && c.step_a > 0 && c.step_b > 0, JSON.stringify(c));
  await shot('06f-compare-run-with-measured.png');
  assert.equal(await command('compare none'), 1);
  assert.equal(await command('analysis tab breakdown'), 1);
  // The measured timeline: per rank a track per CPU thread and per CUDA stream.
  assert.equal(await command('timeline 0'), 1);
  await page.waitForTimeout(300);
  const tracks = (await status()).timeline_tracks;
  for (const name of ['rank 0 thread 1', 'rank 0 stream 7', 'rank 0 stream 84', 'rank 7 stream 84'])
    assert.ok(tracks.includes(name), `${name} in ${tracks.join(', ')}`);
  await shot('06c-measured-timeline.png');
});

sharedTest('text is rasterised at the screen\'s pixels and follows the device pixel ratio; the layout stays in CSS pixels', async () => {
  const p = await browser.newPage({ viewport: { width: 1400, height: 860 }, deviceScaleFactor: 2 });
  await p.goto(url);
  await p.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  const display = () => p.evaluate(() => JSON.parse(Module.ccall('app_display_json', 'string', [], [])));
  let d = await display();
  assert.equal(d.device_pixel_ratio, 2);
  assert.equal(d.font_pixels, 28);       // the atlas at the device's pixels
  assert.equal(d.font_css_pixels, 14);   // drawn at 14 CSS px, as at ratio 1
  const cssHeight = await p.evaluate(() => document.getElementById('canvas').clientHeight);
  assert.deepEqual(d.display, [1400, cssHeight]);
  // Clicks land where they are in CSS pixels: the same row as at ratio 1 selects a node.
  await drop(await filesIn(twoRank, /./), p);
  await command('view nodes', p);
  await p.waitForTimeout(300);
  await clickUntilSelected(300, 140, p);
  assert.ok((await status(p)).selected >= 0, 'a node is selected');
  await shot('07a-ratio-2.png', p);
  // Browser zoom or another screen changes the ratio: the atlas is rebuilt for it.
  const cdp = await p.context().newCDPSession(p);
  await cdp.send('Emulation.setDeviceMetricsOverride', { width: 1400, height: 860, deviceScaleFactor: 3, mobile: false });
  await p.evaluate(() => Module._app_wake());
  await p.waitForFunction(() => JSON.parse(Module.ccall('app_display_json', 'string', [], [])).device_pixel_ratio === 3,
    null, { timeout: 5000 });
  d = await display();
  assert.equal(d.font_pixels, 42);
  assert.equal(d.font_css_pixels, 14);
  await shot('07b-ratio-3.png', p);
  await p.close();
});

// A first visit: the start page, and each one-click example opens what its card promises.
test('a first visit sees the start page; each one-click example opens what it promises', async () => {
  const p = await openPage(url);
  const startShown = () => p.evaluate(() => !document.getElementById('start').hidden);
  assert.ok(await startShown(), 'the start page shows on an empty page');
  await shot('08a-start.png', p);
  const example = async (name) => {
    await p.evaluate(() => { window.chakrakitExample = ''; });
    await p.click(`[data-example="${name}"]`);
    await p.waitForFunction((name) => window.chakrakitExample === name, name, { timeout: 120000 });
    await p.waitForTimeout(300);
    return status(p);
  };
  // The real PyTorch pair: linked in the page, on its measured timeline.
  let s = await example('pair');
  assert.equal(s.error, '');
  assert.equal(s.view, 'timeline');
  for (const name of ['rank 0 thread 1', 'rank 0 stream 7', 'rank 0 stream 84'])
    assert.ok(s.timeline_tracks.includes(name), `${name} in ${s.timeline_tracks.join(', ')}`);
  assert.ok(!await startShown(), 'the start page hides once something is open');
  await shot('08b-example-pair.png', p);
  // Clear brings the start page back.
  await p.click('#clear');
  await p.waitForFunction(() => !document.getElementById('start').hidden, null, { timeout: 5000 });
  // ResNet-50 on 64 NPUs, simulated on the TPU v4 preset (64 chips).
  s = await example('resnet64');
  assert.equal(s.ranks.length, 64);
  assert.equal(s.view, 'simulation');
  assert.equal(s.runs.length, 1);
  assert.equal(perNpu(s.runs[0], 'finish_ns').length, 64);
  assert.ok(perNpu(s.runs[0], 'finish_ns').every((t) => t > 0));
  await shot('08c-example-resnet64.png', p);
  // A chart's PNG button downloads its picture (here through the same request by command).
  assert.equal(await command('save chart Step per NPU (from its start), run 1', p), 1);
  await p.evaluate(() => Module._app_wake());
  await p.waitForFunction(() => window.chakrakitLastDownload, null, { timeout: 5000 });
  const png = await p.evaluate(() => window.chakrakitLastDownload);
  assert.equal(png.name, 'Step per NPU (from its start), run 1.png');
  assert.deepEqual(png.head, [137, 80, 78, 71, 13, 10, 26, 10]);  // the PNG signature
  assert.ok(png.size > 2000, `${png.size} bytes`);
  // The synthetic Llama step: 16 ranks in 4 pipeline stages, simulated, on its timeline.
  await p.click('#clear');
  s = await example('llama');
  assert.equal(s.ranks.length, 16);
  assert.equal(s.view, 'timeline');
  assert.equal(s.runs.length, 1);
  assert.ok(s.timeline_tracks.includes('npu 15'), s.timeline_tracks.join(', '));
  await shot('08d-example-llama.png', p);
  // "?" lists the keys (the header's button too); "?" again or Esc hides them.
  assert.equal((await status(p)).keys_shown, false);
  await p.click('#keys');
  assert.equal((await status(p)).keys_shown, true);
  await shot('08e-keys.png', p);
  await p.click('#keys');
  assert.equal((await status(p)).keys_shown, false);
  await p.mouse.move(700, 400);
  await p.keyboard.type('?');
  await p.waitForTimeout(200);
  assert.equal((await status(p)).keys_shown, true, 'the ? key shows the list');
  await p.keyboard.type('?');
  await p.waitForTimeout(200);
  assert.equal((await status(p)).keys_shown, false, 'and hides it');
  await p.close();
});

test('timeline keys and wheel as in Perfetto: scroll, Ctrl+wheel zoom, pan kept on the data, W/S/A/D, Shift+wheel, F, ./, Esc, Ctrl+F', async () => {
  const p = await openPage(url);
  await p.click('[data-example="resnet64"]');
  await p.waitForFunction(() => window.chakrakitExample === 'resnet64', null, { timeout: 120000 });
  await command('timeline 1', p);  // 64 NPUs: more tracks than fit
  await p.waitForTimeout(300);
  const box = await p.locator('canvas').boundingBox();
  await p.mouse.move(box.x + 800, box.y + 400);
  let s = await status(p);
  const [begin, end] = s.timeline_extent;
  const window0 = s.timeline_window;
  // The wheel scrolls the tracks and leaves the time window alone.
  await p.mouse.wheel(0, 300);
  await p.waitForTimeout(300);
  s = await status(p);
  assert.ok(s.timeline_scroll > 0, `scrolled ${s.timeline_scroll}`);
  assert.deepEqual(s.timeline_window, window0);
  // Ctrl+wheel zooms in at the cursor.
  await p.keyboard.down('Control');
  await p.mouse.wheel(0, -300);
  await p.keyboard.up('Control');
  await p.waitForTimeout(300);
  s = await status(p);
  const span = (w) => w[1] - w[0];
  assert.ok(span(s.timeline_window) < 0.7 * span(window0), `zoomed: ${s.timeline_window} from ${window0}`);
  // A held far past the start: the window stops at the data's margin.
  await p.keyboard.down('a');
  await p.waitForTimeout(1500);
  await p.keyboard.up('a');
  s = await status(p);
  assert.ok(s.timeline_window[0] >= begin - 0.025 * (end - begin) - 1e-6, `${s.timeline_window} against [${begin}, ${end}]`);
  // A key held for a few frames, as a person presses it (ImGui 1.86 samples keys once a frame).
  const tap = async (key) => { await p.keyboard.down(key); await p.waitForTimeout(120); await p.keyboard.up(key); await p.waitForTimeout(200); };
  // D pans right, W zooms in, S zooms out (held, as keys are); Shift+wheel pans.
  const held = async (key, ms = 300) => { await p.keyboard.down(key); await p.waitForTimeout(ms); await p.keyboard.up(key); await p.waitForTimeout(150); };
  let before = (await status(p)).timeline_window;
  await held('d');
  s = await status(p);
  assert.ok(s.timeline_window[0] > before[0], `D pans right: ${s.timeline_window} after ${before}`);
  before = s.timeline_window;
  await held('w');
  s = await status(p);
  assert.ok(span(s.timeline_window) < span(before), `W zooms in: ${s.timeline_window} after ${before}`);
  before = s.timeline_window;
  await held('s');
  s = await status(p);
  assert.ok(span(s.timeline_window) > span(before), `S zooms out: ${s.timeline_window} after ${before}`);
  before = s.timeline_window;
  await p.keyboard.down('Shift');
  await p.mouse.wheel(0, 200);
  await p.keyboard.up('Shift');
  await p.waitForTimeout(300);
  s = await status(p);
  assert.notEqual(s.timeline_window[0], before[0], 'Shift+wheel pans');
  assert.ok(Math.abs(span(s.timeline_window) - span(before)) < 1e-6 * span(before), 'and keeps the zoom');
  // F focuses the selected slice; . and , step along its track; Esc clears the selection.
  assert.equal(await command('view timeline', p), 1);
  assert.equal(await command('select 100', p), 1);
  const first = (await status(p)).selected;
  await tap('f');
  s = await status(p);
  assert.ok(span(s.timeline_window) < (end - begin) / 20, `focused: ${s.timeline_window}`);
  // The details give when the selected node ran in the run shown: the slice F focused on.
  assert.equal(s.selected_simulated.length, 2);
  assert.ok(s.selected_simulated[1] > s.selected_simulated[0], `${s.selected_simulated}`);
  assert.ok(s.selected_simulated[0] >= s.timeline_window[0] && s.selected_simulated[1] <= s.timeline_window[1]);
  await tap('.');
  const next = (await status(p)).selected;
  assert.ok(next >= 0 && next !== first, `next slice ${next} after ${first}`);
  await tap(',');
  assert.equal((await status(p)).selected, first);
  await shot('09-timeline-keys.png', p);
  // Ctrl+F finds slices by name; Enter selects the next match and brings it into view.
  await p.keyboard.down('Control');
  await tap('f');
  await p.keyboard.up('Control');
  await p.keyboard.type('allreduce', { delay: 30 });
  await p.waitForTimeout(200);
  s = await status(p);
  assert.ok(s.timeline_found > 0, `found ${s.timeline_found}`);
  await tap('Enter');
  s = await status(p);
  assert.ok(s.selected >= 0 && s.selected !== first, `a match selected: ${s.selected}`);
  await tap('Enter');
  const second = (await status(p)).selected;
  assert.ok(second >= 0, 'Enter again: the next match');
  await shot('09b-timeline-find.png', p);
  await p.mouse.move(box.x + 800, box.y + 400);  // back over the tracks: keys go to the timeline
  await tap('Escape');  // leaves the search box (Enter gave it the focus back)
  await tap('Escape');  // clears the selection
  assert.equal((await status(p)).selected, -1);
  // Ctrl+V pastes the system clipboard into the field being edited (here the find box).
  await p.keyboard.down('Control');
  await tap('f');
  await p.keyboard.up('Control');
  for (let i = 0; i < 12; ++i) await tap('Backspace');
  await p.evaluate(() => {
    const data = new DataTransfer();
    data.setData('text', 'BWD_IG');
    window.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data }));
  });
  await p.waitForTimeout(300);
  s = await status(p);
  assert.ok(s.timeline_found > 0, `pasted query finds ${s.timeline_found}`);
  await p.close();
});

// Track groups as in Perfetto: a click on a rank's name folds its tracks into one row; a
// right-click pins a track under the axis. Both travel in the share link.
test('ranks fold into one row and tracks pin under the axis, and links keep both', async () => {
  const p = await openPage(url);
  await p.click('[data-example="resnet64"]');
  await p.waitForFunction(() => window.chakrakitExample === 'resnet64', null, { timeout: 120000 });
  await command('timeline 1', p);
  await p.waitForTimeout(300);
  let s = await status(p);
  const rows = s.timeline_rows;
  assert.ok(rows > 64, `${rows} rows for 64 NPUs`);
  const box = await p.locator('canvas').boundingBox();  // the app's coordinates are the canvas's
  const [x, y] = [box.x + s.timeline_row0[0], box.y + s.timeline_row0[1]];
  const tap = async (px, py, button = 'left') => { await p.mouse.click(px, py, { button }); await p.waitForTimeout(250); };
  await tap(x + 20, y + 9);  // npu 0's name: fold it
  s = await status(p);
  assert.deepEqual(s.timeline_folded, [0]);
  assert.ok(s.timeline_rows < rows, `${s.timeline_rows} rows folded, ${rows} before`);
  await shot('11a-timeline-folded.png', p);
  // And unfold it. The page draws only when woken, and a CI run once missed this click (the
  // rank stayed folded): the click is tried again (at most three times) until the rank unfolds,
  // each time after the last one has had time to show.
  for (let attempt = 0; attempt < 3; ++attempt) {
    await p.waitForTimeout(400);
    if ((await status(p)).timeline_folded.length === 0) break;
    await tap(x + 20, y + 9);
  }
  await p.waitForTimeout(400);
  assert.deepEqual((await status(p)).timeline_folded, []);
  // The third row's name: its menu, then "Pin to top", its first item. A menu opens in the frame
  // after the click, and the page draws only when woken: under load a click can come before the
  // menu is there, so the two clicks are tried again (at most three times) until the pin shows;
  // each try first waits up to 2 s for the last one's pin (a slow frame once pinned two tracks).
  const pinShown = () => p.waitForFunction(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).timeline_pinned.length > 0,
    null, { timeout: 2000, polling: 100 }).then(() => true, () => false);
  for (let attempt = 0; attempt < 3 && !(attempt > 0 && await pinShown()); ++attempt) {
    await tap(x + 40, y + 9 + 18 * 2, 'right');
    await p.waitForTimeout(250);
    await tap(x + 70, y + 9 + 18 * 2 + 14);
  }
  s = await status(p);
  assert.equal(s.timeline_pinned.length, 1, JSON.stringify(s.timeline_pinned));
  assert.ok(s.timeline_pinned[0].startsWith('npu '), s.timeline_pinned[0]);
  const pinned = s.timeline_pinned;
  await p.mouse.move(x + 600, y + 200);
  await p.mouse.wheel(0, 600);  // the rows scroll, the pinned track stays
  await p.waitForTimeout(300);
  await shot('11b-timeline-pinned.png', p);
  // The link keeps the pin and the folds: fold every rank through a link, then read it back.
  const state = (await status(p)).state;
  assert.match(state, /t\.pin=/);
  await p.evaluate((h) => Module.ccall('app_apply_hash', null, ['string'], [h]), state + '&t.fold=0-63');
  await p.waitForTimeout(300);
  s = await status(p);
  assert.equal(s.timeline_folded.length, 64);
  assert.equal(s.timeline_rows, 64);
  assert.deepEqual(s.timeline_pinned, pinned);
  assert.match(s.state, /t\.fold=0-63/);
  await shot('11c-timeline-all-folded.png', p);
  // A bad fold list is refused with its reason, and changes nothing.
  await p.evaluate(() => Module.ccall('app_apply_hash', null, ['string'], ['v=timeline&t.fold=5-2']));
  await p.waitForTimeout(200);
  s = await status(p);
  assert.match(s.error, /t\.fold/);
  assert.equal(s.timeline_folded.length, 64);
  await p.close();
});

// The Analysis view of the bundled DLRM pair: HTA's analyses in the page, the CLI's figures.
test('the Analysis view gives chakra analyze\'s figures for a real pair, and a kernel click finds it on the timeline', async () => {
  const p = await openPage(url);
  await p.click('[data-example="pair"]');
  await p.waitForFunction(() => window.chakrakitExample === 'pair', null, { timeout: 120000 });
  assert.equal(await command('view analysis', p), 1);
  await p.waitForTimeout(300);
  const s = await status(p);
  assert.equal(s.analysis.length, 1, JSON.stringify(s.analysis));
  const kineto = path.join(repo, 'assets/examples/dlrm_rank0_pair/worker0_step_12.1694128201545.pt.trace.json.gz');
  const cli = JSON.parse(execFileSync(chakraBin, ['analyze', '--json', kineto]).toString()).ranks[0];
  for (const key of ['span', 'idle', 'compute', 'non_compute']) assert.equal(s.analysis[0][key], cli[key], key);
  await shot('12-analysis.png', p);
  await p.close();
});

// The Sweep view: a spec run in the page's workers gives chakra sweep's steps point for point;
// chakra sweep's own table dropped on the page opens in the view.
test('the Sweep view runs a sweep in workers as chakra sweep does, and opens its table', async () => {
  const p = await openPage(url);
  const spec = [
    'workload:',
    '  collective: {type: all_gather, size: 1MiB, npus: 8}',
    'network: {topology: [Ring], npus: [8], bandwidth: [50], latency: [500]}',
    'system: {preset: astra-sim-ring-8}',
    'axes:',
    '  workload.collective.size: [64KiB, 1MiB, 16MiB]',
    '  network.bandwidth: [25, 50, 100, 200]',
    '  system.all-gather-implementation: [[ring], [direct], [oops]]',
    '',
  ].join('\n');
  assert.equal(await command('sweep spec ' + spec, p), 1);
  assert.equal(await command('view sweep', p), 1);
  assert.equal(await command('sweep run', p), 1);
  await p.waitForFunction(() => { const s = JSON.parse(Module.ccall('app_status_json', 'string', [], [])).sweep; return !s.running && s.done > 0; },
    null, { timeout: 120000 });
  const s = (await status(p)).sweep;
  assert.equal(s.points, 36);
  assert.equal(s.done, 36);
  assert.equal(s.failed, 12, 'the [oops] algorithm fails its points, the rest run');
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'chakra-e2e-sweep-'));
  await writeFile(path.join(tmp, 'spec.yaml'), spec);
  execFileSync(chakraBin, ['sweep', path.join(tmp, 'spec.yaml'), '-o', path.join(tmp, 'results'), '--quiet']);
  const rows = (await readFile(path.join(tmp, 'results.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(s.steps, rows.map((r) => r.step_ns));
  await shot('14a-sweep-run.png', p);
  await drop([path.join(tmp, 'results.jsonl')], p);
  const opened = (await status(p)).sweep;
  assert.equal(opened.source, 'results.jsonl');
  assert.deepEqual(opened.steps, s.steps);
  await shot('14b-sweep-table.png', p);
  await p.close();
});

// The Suite view: a share link naming a cluster (an H100 IB 2x8 with twice the links) and a suite
// run runs the built-in benchmark suite in the page's workers; its scores are chakra suite run's
// for the same network and system, to the last digit; a result chakra suite run wrote (the
// reference preset's), dropped on the page, shows beside it; a board opens as its results.
test('the Suite view runs the benchmark suite from a link as chakra suite run does, and compares results', async () => {
  const p = await openPage(url);
  await p.evaluate(() => Module.ccall('app_apply_hash', null, ['string'], [
    'sim.preset=h100-ib-2x8&sim.topo=Switch,Switch&sim.npus=8,2&sim.bw=900,100&sim.lat=500,2000&sim.ar=ring,ring&sim.ag=ring,ring' +
    '&sim.rs=ring,ring&sim.a2a=direct,direct&sim.peak=989&sim.mem=3350&v=suite&suite=run']));
  await p.waitForFunction(() => { const s = JSON.parse(Module.ccall('app_status_json', 'string', [], [])).suite; return !s.running && s.done > 0; },
    null, { timeout: 600000 });
  const s = (await status(p)).suite;
  assert.equal(s.error, '');
  assert.equal(s.done, s.entries);
  assert.equal(s.results.length, 1);
  const page = s.results[0];
  assert.equal(page.system, 'h100-ib-2x8 (edited)', 'the link\'s cluster, not the page\'s default');
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'chakra-e2e-suite-'));
  await writeFile(path.join(tmp, 'net.yml'), page.system_network);
  await writeFile(path.join(tmp, 'sys.json'), page.system_system);
  execFileSync(chakraBin, ['suite', 'run', '--network', path.join(tmp, 'net.yml'), '--system', path.join(tmp, 'sys.json'),
    '-o', path.join(tmp, 'cli.json')]);
  const cli = JSON.parse(await readFile(path.join(tmp, 'cli.json'), 'utf8'));
  assert.equal(page.system_hash, cli.system.hash);
  assert.equal(page.overall, cli.overall);
  assert.deepEqual(page.classes, cli.classes);
  assert.ok(page.overall > 1, 'twice the links score above the reference');
  await shot('15a-suite-run.png', p);
  execFileSync(chakraBin, ['suite', 'run', '--preset', 'h100-ib-2x8', '-o', path.join(tmp, 'reference.json')]);
  await drop([path.join(tmp, 'reference.json')], p);
  const both = (await status(p)).suite.results;
  assert.deepEqual(both.map((r) => r.source), ['run', 'reference.json']);
  assert.equal(both[1].overall, 1);
  await shot('15b-suite-compare.png', p);
  // A board (BOARD.json, as chakra suite board writes it) opens as its results, best first; each
  // replaces the shown result of its system.
  const reference = JSON.parse(await readFile(path.join(tmp, 'reference.json'), 'utf8'));
  await writeFile(path.join(tmp, 'board.json'), JSON.stringify({ suite_board: cli.suite, suite_hash: cli.suite_hash,
    sources: ['cli.json', 'reference.json'], results: [cli, reference] }));
  await drop([path.join(tmp, 'board.json')], p);
  const board = (await status(p)).suite.results;
  assert.deepEqual(board.map((r) => r.source), ['board.json: cli.json', 'board.json: reference.json']);
  assert.deepEqual(board.map((r) => r.overall), [cli.overall, 1]);
  await p.close();
});

// Golden screenshots of the start page and every view, at device-pixel ratio 1 and 2, from a
// workload the page makes itself (no file, no time in the picture beyond a run's wall time).
// CHAKRA_UPDATE_GOLDEN=1 records them; look at them before committing.
const goldenDir = path.join(repo, 'tests/data/golden/web');
// Share of pixels whose colour differs by more than a small tolerance in some channel from
// every pixel around the same place in the other picture (so glyphs that one machine's text
// rasteriser puts a subpixel off, as in the page's HTML start card, do not count), decoded by
// the browser itself (no PNG library needed here).
const differingFraction = (p, a, b) => p.evaluate(async ([a, b]) => {
  const pixels = async (base64) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const g = canvas.getContext('2d');
    g.drawImage(bitmap, 0, 0);
    return g.getImageData(0, 0, bitmap.width, bitmap.height);
  };
  const [x, y] = [await pixels(a), await pixels(b)];
  if (x.width !== y.width || x.height !== y.height) return 1;
  const close = (i, j) => Math.abs(x.data[i] - y.data[j]) <= 24 && Math.abs(x.data[i + 1] - y.data[j + 1]) <= 24 &&
    Math.abs(x.data[i + 2] - y.data[j + 2]) <= 24;
  let differing = 0;
  for (let row = 0; row < x.height; ++row)
    for (let col = 0; col < x.width; ++col) {
      const i = 4 * (row * x.width + col);
      if (close(i, i)) continue;
      let near = false;
      for (let dr = -1; dr <= 1 && !near; ++dr)
        for (let dc = -1; dc <= 1 && !near; ++dc) {
          const r = row + dr, c = col + dc;
          if (r >= 0 && r < x.height && c >= 0 && c < x.width) near = close(i, 4 * (r * x.width + c));
        }
      if (!near) ++differing;
    }
  return differing / (x.width * x.height);
}, [a.toString('base64'), b.toString('base64')]);

test('the start page and every view look as recorded, at device-pixel ratio 1 and 2', async () => {
  const update = !!process.env.CHAKRA_UPDATE_GOLDEN;
  await mkdir(goldenDir, { recursive: true });
  const shots = {};
  for (const ratio of [1, 2]) {
    const p = await browser.newPage({ viewport: { width: 960, height: 600 }, deviceScaleFactor: ratio });
    await p.goto(url);
    await p.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    await p.mouse.move(1, 599);  // no hover anywhere
    const take = async (name) => {
      await p.waitForTimeout(400);
      shots[`${name}-${ratio}x`] = [p, await p.screenshot()];
    };
    await take('start');
    await p.evaluate(() => Module.ccall('app_apply_hash', null, ['string'], ['synth=llama2-7b&synth.layers=2&synth.dp=2&synth.tp=2&v=overview']));
    await p.waitForFunction(() => JSON.parse(Module.ccall('app_status_json', 'string', [], [])).ranks.length === 4, null, { timeout: 30000 });
    await command('fit', p);
    assert.equal(await simulate(p), 1);
    for (const view of ['overview', 'nodes', 'graph', 'simulation', 'analysis', 'sweep', 'suite']) {
      assert.equal(await command(`view ${view}`, p), 1);
      await take(view);
    }
    assert.equal(await command('timeline 1', p), 1);
    await take('timeline');
  }
  const names = Object.keys(shots);
  for (const name of names) {
    const [p, png] = shots[name];
    const golden = path.join(goldenDir, `${name}.png`);
    await writeFile(path.join(shotsDir, `golden-${name}.png`), png);
    if (update) {
      await writeFile(golden, png);
      continue;
    }
    const want = await readFile(golden).catch(() => assert.fail(`${golden} is missing; record it with CHAKRA_UPDATE_GOLDEN=1`));
    const fraction = await differingFraction(p, png, want);
    assert.ok(fraction <= 0.01, `${name}: ${(fraction * 100).toFixed(2)}% of pixels differ from ${golden}; see ${shotsDir}/golden-${name}.png`);
  }
  // The comparison sees a wrong view: two views differ far beyond the tolerance.
  const [p1, overview] = shots['overview-1x'];
  assert.ok(await differingFraction(p1, overview, shots['nodes-1x'][1]) > 0.05);
  for (const [p] of Object.values(shots)) if (!p.isClosed()) await p.close();
  assert.ok(!update, `golden images rewritten in ${goldenDir}; look at them, then run again without CHAKRA_UPDATE_GOLDEN`);
});

sharedTest('chakra view serves the page on 127.0.0.1 with the given traces preloaded, and stops on Ctrl-C', async () => {
  const { spawn } = await import('node:child_process');
  const dlrm0 = path.join(shared, 'data/pairs/dlrm_8rank_v100/rank0');
  const child = spawn(chakraBin, ['view', dlrm0, '--no-browser', '--web', webDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 10000;
    while (!/http:\/\/127\.0\.0\.1:\d+\/\?preload/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const address = out.match(/http:\/\/127\.0\.0\.1:\d+\/\?preload/)?.[0];
    assert.ok(address, `an address in: ${out} ${err}`);
    assert.match(out, /2 files to preload/);
    // Nothing outside the page's folder and the named files is served.
    const origin = new URL(address).origin;
    assert.equal((await fetch(origin + '/%2e%2e/%2e%2e/etc/passwd')).status, 404);
    assert.equal((await fetch(origin + '/preload/0/passwd')).status, 404);
    const p = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    await p.goto(address);
    await p.waitForFunction(() => window.chakrakitPreloaded === true, null, { timeout: 60000 });
    const s = await status(p);
    assert.equal(s.error, '');
    assert.equal(s.ranks.length, 1);
    assert.match(s.ranks[0].source, /dlrm_eg_0\.json/);  // the host ET, linked with its Kineto trace
    assert.ok(!await p.evaluate(() => !document.getElementById('start').hidden), 'no start page over preloaded traces');
    await shot('10-chakra-view.png', p);
    await p.close();
  } finally {
    child.kill('SIGINT');
  }
  assert.equal(await exited, 0);
  assert.match(err, /stopped/);

  // A preloaded file gone before the page fetched it: the page says which, and opens nothing.
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'chakra-view-'));
  const gone = path.join(tmp, 'gone.et');
  await writeFile(gone, await readFile(path.join(twoRank, 'chakra_trace.0.et')));
  const second = spawn(chakraBin, ['view', gone, '--no-browser', '--web', webDir], { stdio: ['ignore', 'pipe', 'ignore'] });
  let printed = '';
  second.stdout.on('data', (d) => { printed += d; });
  try {
    const deadline = Date.now() + 10000;
    while (!/\?preload/.test(printed) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await rm(gone);
    const p = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    await p.goto(printed.match(/http:\/\/127\.0\.0\.1:\d+\/\?preload/)[0]);
    await p.waitForFunction(() => window.chakrakitPreloaded === true, null, { timeout: 30000 });
    const line = await p.evaluate(() => document.getElementById('status').textContent);
    assert.match(line, /Could not preload the files of chakra view: .*preload\/0\/gone\.et: 404/);
    assert.equal((await status(p)).ranks.length, 0);
    await p.close();
  } finally {
    second.kill('SIGINT');
  }
});

// What native/run-example serves: the bundled run, converted by the CLI, preloaded by chakra view
// --simulate and simulated in the page on the same preset, gives the CLI's figures.
test('native/run-example\'s page: the bundled run preloaded and simulated as chakra simulate does', async () => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'chakra-example-'));
  const run = path.join(repo, 'assets/examples/dlrm_8rank');
  execFileSync(chakraBin, ['link', run, '-o', path.join(tmp, 'linked/run.json'), '--sync-deps', '--quiet']);
  execFileSync(chakraBin, ['convert', 'pytorch', path.join(tmp, 'linked'), '-o', path.join(tmp, 'et/run')]);
  execFileSync(chakraBin, ['simulate', '--workload', path.join(tmp, 'et/run'), '--preset', 'v100-dgx1-8', '--json',
    path.join(tmp, 'sim.json')]);
  const cli = JSON.parse(await readFile(path.join(tmp, 'sim.json'), 'utf8'));
  const { spawn } = await import('node:child_process');
  const child = spawn(chakraBin, ['view', path.join(tmp, 'et'), '--no-browser', '--web', webDir, '--simulate', 'v100-dgx1-8'],
    { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  try {
    const deadline = Date.now() + 10000;
    while (!/\?preload/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const p = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    await p.goto(out.match(/http:\/\/127\.0\.0\.1:\d+\/\?preload/)[0]);
    await p.waitForFunction(() => {
      const s = JSON.parse(Module.ccall('app_status_json', 'string', [], []));
      return s.runs.length === 1 && s.simulating === null;
    }, null, { timeout: 120000 });
    const s = await status(p);
    assert.equal(s.ranks.length, 8);
    assert.deepEqual(perNpu(s.runs[0], 'finish_ns'), cli.npus.map((n) => n.finish_ns));
    assert.deepEqual(perNpu(s.runs[0], 'measured_step_ns'), cli.npus.map((n) => n.measured_step_ns));
    await shot('11-run-example.png', p);
    await p.close();
  } finally {
    child.kill('SIGINT');
  }
});

sharedTest('slowdowns run in the simulation worker as the CLI runs them, and the page exports an anonymized ZIP', async () => {
  const allReduce = path.join(shared, 'data/chakra_et/astra-sim_AllReduce_1MB_8npus_2024-11');
  const p = await openPage(url);
  await drop(await filesIn(allReduce, /\.et$/), p);
  await command('fit', p);
  await command('view simulation', p);
  const spec = 'npu=3:compute=2:delay=5us; npu=all:comm=1.5; dim=0:bandwidth=0.5';
  assert.equal(await command('slowdown npu=3:speed=2', p), 0);
  assert.equal(await command('slowdown ' + spec, p), 1);
  assert.equal(await simulate(p), 1);
  const s = await status(p);
  assert.equal(s.runs.length, 1);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'chakra-e2e-'));
  await writeFile(path.join(tmp, 'network.yml'), s.network);
  await writeFile(path.join(tmp, 'system.json'), s.system);
  execFileSync(chakraBin, ['simulate', '--workload', path.join(allReduce, 'AllReduce_1MB'), '--network', path.join(tmp, 'network.yml'),
    '--system', path.join(tmp, 'system.json'), '--slowdown', spec, '--json', path.join(tmp, 'out.json'), '--no-summary']);
  const cli = JSON.parse(await readFile(path.join(tmp, 'out.json'), 'utf8'));
  assert.deepEqual(perNpu(s.runs[0], 'finish_ns'), cli.npus.map((n) => n.finish_ns ?? n.finish));
  await shot('11-slowdowns.png', p);
  // Overview: "Export anonymized copy" (here by command) downloads a ZIP.
  await command('view overview', p);
  assert.equal(await command('export anonymized k', p), 1);
  await p.evaluate(() => Module._app_wake());
  await p.waitForFunction(() => window.chakrakitLastDownload?.name === 'anonymized.zip', null, { timeout: 5000 });
  const zip = await p.evaluate(() => window.chakrakitLastDownload);
  assert.deepEqual(zip.head.slice(0, 4), [80, 75, 3, 4]);  // a ZIP's local file header
  assert.ok(zip.size > 8 * 30, `${zip.size} bytes`);
  await shot('12-overview-export.png', p);
  await p.close();
});

if (notRun && process.env.CHAKRA_NOT_RUN_FILE) appendFileSync(process.env.CHAKRA_NOT_RUN_FILE, `${notRun}\n`);
