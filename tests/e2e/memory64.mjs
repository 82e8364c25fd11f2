// On-demand measurement: does 64-bit WebAssembly memory (memory64) lift the page's 4 GiB wall in
// this Chromium, and at what cost in speed? (issue 63; core/docs/performance.md, "Memory64").
//   node tests/e2e/memory64.mjs [--gib N] [--runs R]
// One small module is built here twice, byte by byte, once with 32-bit and once with 64-bit
// memory: grow(pages), fill(from, to) storing each 8-byte word's address, sum(from, to) reading
// them back. In the page it prints: how far each memory grows (1 GiB steps, up to N GiB for
// memory64), whether the words above 4 GiB hold what was stored, whether JavaScript can view the
// whole buffer (the Uint8Array that Emscripten's glue reads the heap through), and the time to
// fill and to sum 1 GiB with each, taking turns, medians of R, with their ratio.
import { launchChromium } from './serve.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const maxGib = arg('--gib', 6), runs = arg('--runs', 5);

// The module's bytes for one address width; addresses are i32 or i64, the sum an i64.
function moduleBytes(memory64) {
  const A = memory64 ? 0x7e : 0x7f;           // the address type: i64 or i32
  const geU = memory64 ? 0x5a : 0x4f;         // A.ge_u
  const add = memory64 ? 0x7c : 0x6a;         // A.add
  const const8 = memory64 ? [0x42, 8] : [0x41, 8];
  const toI64 = memory64 ? [] : [0xad];       // i64.extend_i32_u
  const vec = (items) => [items.length, ...items.flat()];
  const section = (id, body) => [id, ...leb(body.length), ...body];
  const name = (s) => [s.length, ...Buffer.from(s)];
  const body = (locals, code) => { const b = [...vec(locals), ...code, 0x0b]; return [...leb(b.length), ...b]; };
  // for (i = from; i < to; i += 8) STEP(i): local 0 = from, 1 = to, i is local 0 itself
  const loop = (step) => [0x02, 0x40, 0x03, 0x40, 0x20, 0, 0x20, 1, geU, 0x0d, 1, ...step,
    0x20, 0, ...const8, add, 0x21, 0, 0x0c, 0, 0x0b, 0x0b];
  const types = vec([[0x60, 1, A, 1, A], [0x60, 2, A, A, 0], [0x60, 2, A, A, 1, 0x7e]]);
  const grow = body([], [0x20, 0, 0x40, 0]);
  const fill = body([], loop([0x20, 0, 0x20, 0, ...toI64, 0x37, 3, 0]));
  const sum = body([[1, 0x7e]], [...loop([0x20, 2, 0x20, 0, 0x29, 3, 0, 0x7c, 0x21, 2]), 0x20, 2]);
  return new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, types),
    ...section(3, vec([[0], [1], [2]])),
    ...section(5, [1, memory64 ? 0x04 : 0x00, 0]),  // one memory, no pages yet, no maximum
    ...section(7, vec([[...name('grow'), 0, 0], [...name('fill'), 0, 1], [...name('sum'), 0, 2], [...name('mem'), 2, 0]])),
    ...section(10, [3, ...grow, ...fill, ...sum])]);
}

function leb(n) {
  const out = [];
  do { let b = n & 0x7f; n = Math.floor(n / 128); if (n) b |= 0x80; out.push(b); } while (n);
  return out;
}

// Runs in the page: everything is measured where the app would run.
async function measure({ m32, m64, maxGib, runs }) {
  const GiB = 2 ** 30, pagesPerGib = GiB / 65536;
  const make = async (bytes) => (await WebAssembly.instantiate(new Uint8Array(bytes))).instance.exports;
  const out = { userAgent: navigator.userAgent };
  const growAll = (e, big, limitGib) => {
    const t = performance.now();
    let gib = 0;
    for (; gib < limitGib; ++gib) {
      try {
        if (Number(e.grow(big ? BigInt(pagesPerGib) : pagesPerGib)) < 0) break;
      } catch (err) { out[`${big ? 'm64' : 'm32'}_grow_error`] = String(err); break; }
    }
    return { gib, ms: performance.now() - t, bytes: e.mem.buffer.byteLength };
  };
  let e32, e64;
  try { e32 = await make(m32); } catch (err) { out.m32_error = String(err); }
  try { e64 = await make(m64); } catch (err) { out.m64_error = String(err); return out; }
  out.m32_grow = growAll(e32, false, maxGib);
  out.m64_grow = growAll(e64, true, maxGib);
  if (out.m64_grow.bytes > 4 * GiB + 65536) {
    // The words of the last GiB, above the 4 GiB line: stored and read back.
    const top = BigInt(out.m64_grow.bytes), from = top - BigInt(GiB);
    e64.fill(from, top);
    const n = BigInt(GiB / 8);
    const expected = n * from + 8n * (n * (n - 1n) / 2n);  // the sum of the addresses stored
    out.above_4gib_correct = BigInt.asUintN(64, e64.sum(from, top)) === BigInt.asUintN(64, expected);
    try {
      out.js_view_bytes = new Uint8Array(e64.mem.buffer).length;
    } catch (err) { out.js_view_error = String(err); }
  }
  // 1 GiB filled and summed with each width, taking turns.
  const times = { fill32: [], fill64: [], sum32: [], sum64: [] };
  for (let r = 0; r < runs; ++r) {
    let t = performance.now(); e32.fill(0, GiB); times.fill32.push(performance.now() - t);
    t = performance.now(); e64.fill(0n, BigInt(GiB)); times.fill64.push(performance.now() - t);
    t = performance.now(); e32.sum(0, GiB); times.sum32.push(performance.now() - t);
    t = performance.now(); e64.sum(0n, BigInt(GiB)); times.sum64.push(performance.now() - t);
  }
  const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
  for (const k of Object.keys(times)) out[`${k}_ms`] = median(times[k]);
  return out;
}

const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto('about:blank');
  const r = await page.evaluate(measure, { m32: [...moduleBytes(false)], m64: [...moduleBytes(true)], maxGib, runs });
  console.log(`browser                ${r.userAgent}`);
  if (r.m64_error) {
    console.log(`memory64               not available: ${r.m64_error}`);
    process.exit(1);
  }
  const gib = (b) => (b / 2 ** 30).toFixed(2);
  console.log(`memory32 grows to      ${gib(r.m32_grow.bytes)} GiB (${r.m32_grow.ms.toFixed(0)} ms)${r.m32_grow_error ? `; then: ${r.m32_grow_error}` : ''}`);
  console.log(`memory64 grows to      ${gib(r.m64_grow.bytes)} GiB (${r.m64_grow.ms.toFixed(0)} ms; asked up to ${maxGib} GiB)${r.m64_grow_error ? `; then: ${r.m64_grow_error}` : ''}`);
  if ('above_4gib_correct' in r) {
    console.log(`words above 4 GiB      ${r.above_4gib_correct ? 'stored and read back correctly' : 'WRONG'}`);
    console.log(`JavaScript view        ${r.js_view_error ? `fails: ${r.js_view_error}` : `${gib(r.js_view_bytes)} GiB as one Uint8Array`}`);
  }
  console.log(`fill 1 GiB (median ${runs})  memory32 ${r.fill32_ms.toFixed(0)} ms, memory64 ${r.fill64_ms.toFixed(0)} ms: ${(r.fill64_ms / r.fill32_ms).toFixed(2)}x`);
  console.log(`sum 1 GiB (median ${runs})   memory32 ${r.sum32_ms.toFixed(0)} ms, memory64 ${r.sum64_ms.toFixed(0)} ms: ${(r.sum64_ms / r.sum32_ms).toFixed(2)}x`);
  if (r.above_4gib_correct === false) process.exit(1);
} finally {
  await browser.close();
}
