// Runs inside the page's worker before its module (sim_worker.cpp): {job} is a simulation,
// {convert} a rank conversion, {sweep} a sweep's point, {suite} a benchmark suite's entry (text),
// {files} files the suite's entries read, put in the worker's memory file system first ([path,
// bytes] pairs). Messages that arrive while the module is still compiling wait for it, in order.
let chakrakitPending = [];
let chakrakitReady = false;
function chakrakitRun(message) {
  if (message.files) {
    for (const [path, bytes] of message.files) {
      FS.mkdirTree(path.substring(0, path.lastIndexOf('/')));
      FS.writeFile(path, bytes);
    }
    return;
  }
  if (message.suite !== undefined) {
    const size = lengthBytesUTF8(message.suite);
    const ptr = _malloc(size + 1);
    stringToUTF8(message.suite, ptr, size + 1);
    _suite_worker_run(ptr, size);
    _free(ptr);
    return;
  }
  const bytes = message.job || message.convert || message.sweep;
  const ptr = _malloc(bytes.length);
  HEAPU8.set(bytes, ptr);
  if (message.job) _sim_worker_run(ptr, bytes.length);
  else if (message.sweep) _sweep_worker_run(ptr, bytes.length);
  else _convert_worker_run(ptr, bytes.length);
  _free(ptr);
}
Module.onRuntimeInitialized = () => {
  chakrakitReady = true;
  for (const m of chakrakitPending) chakrakitRun(m);
  chakrakitPending = [];
};
self.onmessage = (e) => {
  if (chakrakitReady) chakrakitRun(e.data);
  else chakrakitPending.push(e.data);
};
