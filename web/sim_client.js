// The page's side of its Web Workers (chakra_sim_worker.js): simulations (BrowserPlatform's
// start_simulation / cancel_simulation) and rank conversions (start_conversion), and the
// reports handed back to the app. Linked into the page's module with --pre-js.
Module.chakrakitSimulation = {
  worker: null,
  // `job` is a view of the module's memory (sim::encode_job bytes); it is copied and moved to
  // the worker.
  start(job) {
    if (!this.worker) {
      const w = new Worker('chakra_sim_worker.js');
      w.onmessage = (e) => { if (w === this.worker) this.receive(e.data); };
      w.onerror = (e) => {
        if (w !== this.worker) return;
        this.cancel();
        this.fail('the simulation worker stopped: ' + (e.message || 'chakra_sim_worker.js could not be loaded'));
      };
      this.worker = w;
    }
    const copy = job.slice();
    this.worker.postMessage({job: copy}, [copy.buffer]);
  },
  // A worker cannot be interrupted from outside but can be ended; the next run starts a new one.
  cancel() {
    if (this.worker) this.worker.terminate();
    this.worker = null;
  },
  receive(m) {
    if (m.progress) {
      Module._app_sim_progress(m.progress[0], m.progress[1]);
    } else if (m.result) {
      const ptr = Module._malloc(m.result.length);
      HEAPU8.set(m.result, ptr);
      Module._app_sim_finished(ptr, m.result.length);
      Module._free(ptr);
    } else if (m.error !== undefined) {
      this.fail(m.error);
    }
  },
  fail(message) { Module.ccall('app_sim_failed', null, ['string'], [message]); },
};

// Rank conversions (linking and converting a PyTorch rank) in a pool of workers of their own, one
// job at a time each, so a simulation's worker can be ended without losing them. The pool is as
// large as the machine's cores (at most 4): a folder of rank pairs converts in parallel. Workers
// idle for a few seconds are ended, which gives their memory back.
Module.chakrakitConversions = {
  idle: [],
  all: 0,
  waiting: [],  // {bytes, rank, generation} not yet given to a worker
  idleTimer: 0,
  start(job, rank, generation) {
    this.waiting.push({bytes: job.slice(), rank, generation});
    this.next();
  },
  next() {
    clearTimeout(this.idleTimer);
    if (!this.waiting.length && this.idle.length === this.all) {
      this.idleTimer = setTimeout(() => {
        for (const w of this.idle) w.terminate();
        this.all -= this.idle.length;
        this.idle = [];
      }, 5000);
      return;
    }
    while (this.waiting.length) {
      let w = this.idle.pop();
      if (!w && this.all < Math.min(4, Math.max(1, navigator.hardwareConcurrency || 2))) w = this.spawn();
      if (!w) return;
      const job = this.waiting.shift();
      w.job = job;
      w.postMessage({convert: job.bytes}, [job.bytes.buffer]);
    }
  },
  spawn() {
    const w = new Worker('chakra_sim_worker.js');
    this.all += 1;
    w.onmessage = (e) => {
      const job = w.job;
      w.job = null;
      this.idle.push(w);
      if (e.data.converted) {
        const ptr = Module._malloc(e.data.converted.length);
        HEAPU8.set(e.data.converted, ptr);
        Module._app_convert_finished(ptr, e.data.converted.length, job.rank, job.generation);
        Module._free(ptr);
      } else {
        Module.ccall('app_convert_failed', null, ['number', 'number', 'string'], [job.rank, job.generation, e.data.error]);
      }
      this.next();
    };
    w.onerror = (e) => {  // the worker itself failed (not loaded, out of memory): its job with it
      const job = w.job;
      this.all -= 1;
      this.idle = this.idle.filter((x) => x !== w);
      w.terminate();
      if (job) Module.ccall('app_convert_failed', null, ['number', 'number', 'string'],
        [job.rank, job.generation, 'the conversion worker stopped: ' + (e.message || 'chakra_sim_worker.js could not be loaded')]);
      this.next();
    };
    return w;
  },
};

// A pool of workers of its own (chakra_sim_worker.js), a job at a time each, at most `max` (and
// one per core). `post(w, job)` hands a job to a worker (it may wait for what the job needs);
// `reported(job, data)` takes the worker's answer; `failed(job, message)` a worker that stopped.
// Idle workers are ended after a few seconds, which gives their memory back; cancel() ends them
// all and drops what waits.
function chakrakitPool(max, post, reported, failed) {
  return {
    idle: [],
    busy: [],
    all: 0,
    waiting: [],
    idleTimer: 0,
    add(job) {
      this.waiting.push(job);
      this.next();
    },
    cancel() {
      this.waiting = [];
      for (const w of this.idle.concat(this.busy)) w.terminate();
      this.idle = [];
      this.busy = [];
      this.all = 0;
    },
    async next() {
      clearTimeout(this.idleTimer);
      if (!this.waiting.length && !this.busy.length) {
        this.idleTimer = setTimeout(() => this.cancel(), 5000);
        return;
      }
      while (this.waiting.length) {
        let w = this.idle.pop();
        if (!w && this.all < Math.min(max, Math.max(1, navigator.hardwareConcurrency || 2))) w = this.spawn();
        if (!w) return;
        const job = this.waiting.shift();
        w.job = job;
        this.busy.push(w);
        await post(w, job);
      }
    },
    spawn() {
      const w = new Worker('chakra_sim_worker.js');
      this.all += 1;
      w.onmessage = (e) => {
        const job = w.job;
        this.busy = this.busy.filter((x) => x !== w);
        w.job = null;
        this.idle.push(w);
        reported(job, e.data);
        this.next();
      };
      w.onerror = (e) => {  // the worker itself failed (not loaded, out of memory): its job with it
        const job = w.job;
        this.busy = this.busy.filter((x) => x !== w);
        this.all -= 1;
        w.terminate();
        if (job) failed(job, 'the worker stopped: ' + (e.message || 'chakra_sim_worker.js could not be loaded'));
        this.next();
      };
      return w;
    },
  };
}

// A sweep's points (sim::encode_job bytes), one per core, at most 8.
Module.chakrakitSweep = Object.assign(chakrakitPool(8,
  (w, job) => w.postMessage({sweep: job.bytes}, [job.bytes.buffer]),
  (job, data) => {
    if (!data.swept) return Module.chakrakitSweep.fail(job, data.error);
    const ptr = Module._malloc(data.swept.length);
    HEAPU8.set(data.swept, ptr);
    Module._app_sweep_finished(ptr, data.swept.length, job.point, job.generation, data.ms);
    Module._free(ptr);
  },
  (job, message) => Module.chakrakitSweep.fail(job, message)), {
  start(job, point, generation) { this.add({bytes: job.slice(), point, generation}); },
  fail(job, message) { Module.ccall('app_sweep_failed', null, ['number', 'number', 'string'], [job.point, job.generation, message]); },
});

// The benchmark suite's entries (chakra::suite::entry_job texts), one per core, at most 4 (an
// entry of thousands of ranks holds gigabytes). The measured runs an entry reads
// (examples/NAME/, bundled beside the page) are fetched once and put at /examples/NAME in each
// worker before its first entry that needs them.
Module.chakrakitSuite = Object.assign(chakrakitPool(4,
  async (w, job) => {
    w.sent = w.sent || new Set();
    for (const name of job.names) {
      if (w.sent.has(name)) continue;
      w.sent.add(name);
      w.postMessage({files: await Module.chakrakitSuite.runs.get(name)});
    }
    w.postMessage({suite: job.text});
  },
  (job, data) => {
    if (data.suite_rows === undefined) return Module.chakrakitSuite.fail(job, data.error);
    Module.ccall('app_suite_finished', null, ['string', 'number', 'number'], [data.suite_rows, job.entry, job.generation]);
  },
  (job, message) => Module.chakrakitSuite.fail(job, message)), {
  runs: new Map(),  // NAME -> a promise of its files, [[path, bytes], ...]
  start(text, entry, generation, names) {
    const job = {text, entry, generation, names: names.split('\n').filter((n) => n)};
    for (const name of job.names) if (!this.runs.has(name)) this.runs.set(name, this.fetchRun(name));
    Promise.all(job.names.map((n) => this.runs.get(n))).then(() => this.add(job), (e) => {
      this.runs.clear();
      this.fail(job, 'the suite\'s measured runs could not be fetched: ' + e.message);
    });
  },
  async fetchRun(name) {
    const manifest = await (await fetch('examples/manifest.json')).json();
    if (!manifest[name]) throw new Error('examples/' + name + ' is not among the page\'s examples');
    return Promise.all(manifest[name].map(async (file) => {
      const response = await fetch('examples/' + name + '/' + file);
      if (!response.ok) throw new Error('examples/' + name + '/' + file + ': HTTP ' + response.status);
      return ['/examples/' + name + '/' + file, new Uint8Array(await response.arrayBuffer())];
    }));
  },
  fail(job, message) { Module.ccall('app_suite_failed', null, ['number', 'number', 'string'], [job.entry, job.generation, message]); },
});
