// Shared by the browser test and the browser benchmark: a static server for the wasm build and
// Debian's Chromium (never a downloaded one) with the flags that work headless.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

const mime = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

// Serves the files of `dir` on a free localhost port; resolves to { server, url } (url of index.html).
export async function serveDir(dir) {
  const server = createServer(async (req, res) => {
    // Paths below `dir` only (the page and its examples/ folder).
    const name = path.normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^[/\\]+/, '') || 'index.html';
    try {
      if (name.split(/[/\\]/).includes('..')) throw new Error('outside');
      const body = await readFile(path.join(dir, name));
      res.writeHead(200, { 'content-type': mime[path.extname(name)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}/index.html` };
}

export function launchChromium() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--enable-unsafe-swiftshader'],
  });
}
