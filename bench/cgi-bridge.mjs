#!/usr/bin/env node
// node bench/cgi-bridge.mjs ROOT STATS-FILE
//
// How Node git hosts serve git today: a node:http server on 127.0.0.1 that runs `git
// http-backend` as a CGI program for each request (GIT_PROJECT_ROOT=ROOT, every repository
// exported), pipes the request body in and the CGI answer out. Prints its URL; on SIGTERM writes
// STATS-FILE: its own peak RSS and the largest of its http-backend children's (each run under
// /usr/bin/time), in MB. It stops by itself after 15 minutes without a request (a benchmark that
// died leaves nothing running). The benchmark's reference for `packwright serve`.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { readFileSync, writeFileSync, rmSync, existsSync } from 'node:fs';

const [root, statsFile] = process.argv.slice(2);
const childRss = `${statsFile}.children`;
rmSync(childRss, { force: true });
let idle;
const stop = () => {
  server.close();
  server.closeAllConnections();
  const children = existsSync(childRss) ? readFileSync(childRss, 'utf8').split('\n').map(Number).filter((n) => n > 0) : [];
  writeFileSync(statsFile, JSON.stringify({ peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024), childPeakRssMB: Math.round(Math.max(0, ...children) / 1024) }));
  process.exit(0);
};
const armIdle = () => {
  clearTimeout(idle);
  idle = setTimeout(stop, 15 * 60 * 1000);
};
const server = createServer((req, res) => {
  armIdle();
  const url = new URL(req.url, 'http://localhost');
  const env = {
    ...process.env, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1), REQUEST_METHOD: req.method, CONTENT_TYPE: req.headers['content-type'] ?? '',
    SERVER_PROTOCOL: 'HTTP/1.1', REMOTE_ADDR: '127.0.0.1',
  };
  if (req.headers['content-encoding'] !== undefined) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
  if (req.headers['git-protocol'] !== undefined) env.HTTP_GIT_PROTOCOL = req.headers['git-protocol'];
  if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
  const child = spawn('/usr/bin/time', ['-a', '-f', '%M', '-o', childRss, 'git', 'http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  req.pipe(child.stdin);
  child.stdin.on('error', () => {});
  let head = Buffer.alloc(0);
  let started = false;
  child.stdout.on('data', (chunk) => {
    if (started) {
      if (!res.write(chunk)) {
        child.stdout.pause();
        res.once('drain', () => child.stdout.resume());
      }
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    started = true;
    let status = 200;
    for (const line of head.toString('latin1', 0, end).split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon);
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
      else res.setHeader(name, value);
    }
    res.statusCode = status;
    res.write(head.subarray(end + 4));
  });
  child.on('close', () => res.end());
  res.on('close', () => child.kill());
});
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}`));
armIdle();
process.on('SIGTERM', stop);
