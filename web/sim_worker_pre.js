// Runs inside the simulation worker before its module (sim_worker.cpp): a job that arrives while
// the module is still compiling waits for it.
let chakrakitPendingJob = null;
let chakrakitReady = false;
function chakrakitRunJob(job) {
  const ptr = _malloc(job.length);
  HEAPU8.set(job, ptr);
  _sim_worker_run(ptr, job.length);
  _free(ptr);
}
Module.onRuntimeInitialized = () => {
  chakrakitReady = true;
  if (chakrakitPendingJob) chakrakitRunJob(chakrakitPendingJob);
  chakrakitPendingJob = null;
};
self.onmessage = (e) => {
  if (chakrakitReady) chakrakitRunJob(e.data.job);
  else chakrakitPendingJob = e.data.job;
};
