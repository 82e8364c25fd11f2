// Reads slices of files the page was given, off the page's thread: there each read's bytes wait
// for the frames being drawn (a 1 GB .et arrived at 37 MB/s while the module decoded 190 MB/s).
// Message in: [id, file, start, end]; out: [id, ArrayBuffer (transferred), null] or
// [id, null, reason].
onmessage = (e) => {
  const [id, file, start, end] = e.data;
  try {
    const bytes = new FileReaderSync().readAsArrayBuffer(file.slice(start, end));
    postMessage([id, bytes, null], [bytes]);
  } catch (err) {
    postMessage([id, null, String(err)]);
  }
};
