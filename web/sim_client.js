// The page's side of simulations in a Web Worker (chakra_sim_worker.js): what BrowserPlatform's
// start_simulation / cancel_simulation call, and the reports handed back to the app. Linked into
// the page's module with --pre-js.
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
