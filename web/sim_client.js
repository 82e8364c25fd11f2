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

// A sweep's points in a pool of workers of their own (one per core, at most 8), a point at a
// time each; cancelling ends the pool. Idle workers are ended after a few seconds.
Module.chakrakitSweep = {
  idle: [],
  busy: [],
  all: 0,
  waiting: [],  // {bytes, point, generation}
  idleTimer: 0,
  start(job, point, generation) {
    this.waiting.push({bytes: job.slice(), point, generation});
    this.next();
  },
  cancel() {
    this.waiting = [];
    for (const w of this.idle) w.terminate();
    for (const w of this.busy) w.terminate();
    this.idle = [];
    this.busy = [];
    this.all = 0;
  },
  next() {
    clearTimeout(this.idleTimer);
    if (!this.waiting.length && !this.busy.length) {
      this.idleTimer = setTimeout(() => this.cancel(), 5000);
      return;
    }
    while (this.waiting.length) {
      let w = this.idle.pop();
      if (!w && this.all < Math.min(8, Math.max(1, navigator.hardwareConcurrency || 2))) w = this.spawn();
      if (!w) return;
      const job = this.waiting.shift();
      w.job = job;
      this.busy.push(w);
      w.postMessage({sweep: job.bytes}, [job.bytes.buffer]);
    }
  },
  done(w) {
    this.busy = this.busy.filter((x) => x !== w);
    w.job = null;
  },
  spawn() {
    const w = new Worker('chakra_sim_worker.js');
    this.all += 1;
    w.onmessage = (e) => {
      const job = w.job;
      this.done(w);
      this.idle.push(w);
      if (e.data.swept) {
        const ptr = Module._malloc(e.data.swept.length);
        HEAPU8.set(e.data.swept, ptr);
        Module._app_sweep_finished(ptr, e.data.swept.length, job.point, job.generation, e.data.ms);
        Module._free(ptr);
      } else {
        Module.ccall('app_sweep_failed', null, ['number', 'number', 'string'], [job.point, job.generation, e.data.error]);
      }
      this.next();
    };
    w.onerror = (e) => {
      const job = w.job;
      this.done(w);
      this.all -= 1;
      w.terminate();
      if (job) Module.ccall('app_sweep_failed', null, ['number', 'number', 'string'],
        [job.point, job.generation, 'the sweep worker stopped: ' + (e.message || 'chakra_sim_worker.js could not be loaded')]);
      this.next();
    };
    return w;
  },
};
