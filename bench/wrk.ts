// One wrk run (Debian's `wrk`, a native generator: C, epoll, one event loop per thread) for the GET and
// POST scenarios, so the generator is never the ceiling: autocannon in one thread caps at about 27k req/s
// on 2 cores, below what the server answers. wrk runs as a child process, optionally pinned to its own
// cores (taskset); a Lua script gives it the scenario's requests (rotating targeting keys, as load.ts
// does for autocannon) and prints its figures as one JSON line at the end.
//
// What wrk cannot do stays with autocannon: PATCH runs whose every answer is checked to be a change,
// and the paced (open-model) runs.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult, Sequence } from './load.js';

export interface WrkSpec {
  /** Origin, e.g. http://127.0.0.1:8080. */
  url: string;
  connections: number;
  durationSec: number;
  sequence: Sequence;
  threads: number;
  /** taskset CPU list for wrk (e.g. "1" or "8-15"); null: not pinned. */
  cpus: string | null;
}

const kMarker = 'WRK_JSON ';

/** Installs Debian's wrk when it is missing (needs root, as the project's other ensure scripts). */
export function ensureWrk(): void {
  try {
    execFileSync('sh', ['-c', 'command -v wrk'], { stdio: 'ignore' });
  } catch {
    execFileSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk'], {
      stdio: 'inherit',
      timeout: 600_000,
    });
  }
}

/** The Lua script: each wrk thread precomputes its share of the requests and cycles through them. */
export function wrkScript(sequence: Sequence, threads: number): string {
  if (sequence.kind === 'patch') throw new Error('PATCH runs check every answer: they stay with autocannon');
  const lua = (s: string) => JSON.stringify(s); // a JSON string literal is a valid Lua string literal for these ASCII values
  const headers = sequence.kind === 'fixed' ? (sequence.request.headers ?? {}) : (sequence.headers ?? {});
  const headerTable = `{${Object.entries(headers)
    .map(([k, v]) => `[${lua(k)}] = ${lua(v)}`)
    .join(', ')}}`;
  const build =
    sequence.kind === 'fixed'
      ? `requests[1] = wrk.format(${lua(sequence.request.method ?? 'GET')}, ${lua(sequence.request.path ?? '/')}, headers, ${sequence.request.body === undefined ? 'nil' : lua(sequence.request.body)})`
      : `for k = id, ${sequence.keys - 1}, ${threads} do
    local key = "user-" .. k
    local path = string.gsub(${lua(sequence.template)}, "{key}", key)
    local body = ${sequence.body === undefined ? 'nil' : `string.gsub(${lua(sequence.body)}, "{key}", key)`}
    requests[#requests + 1] = wrk.format(${lua(sequence.method ?? 'GET')}, path, headers, body)
  end`;
  return `local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

local requests = {}
local i = 0
function init(args)
  local headers = ${headerTable}
  ${build}
end

function request()
  i = i % #requests + 1
  return requests[i]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('${kMarker}{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
`;
}

interface WrkFigures {
  requests: number;
  durationUs: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
}

export function runWrk(spec: WrkSpec): { result: Promise<LoadResult>; stop(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-wrk-'));
  const script = join(dir, 'scenario.lua');
  writeFileSync(script, wrkScript(spec.sequence, spec.threads));
  const threads = Math.min(spec.threads, spec.connections);
  const wrkArgs = [`-t${threads}`, `-c${spec.connections}`, `-d${spec.durationSec}s`, '--timeout', '10s', '-s', script, spec.url];
  const child = spec.cpus === null ? spawn('wrk', wrkArgs) : spawn('taskset', ['-c', spec.cpus, 'wrk', ...wrkArgs]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const result = new Promise<LoadResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      rmSync(dir, { recursive: true, force: true });
      const line = stdout.split('\n').find((l) => l.startsWith(kMarker));
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk exited with ${code}: ${stderr.trim() || stdout.trim()}`));
        return;
      }
      const f = JSON.parse(line.slice(kMarker.length)) as WrkFigures;
      const seconds = f.durationUs / 1e6;
      const ok = f.requests - f.status;
      resolve({
        connections: spec.connections,
        durationSec: seconds,
        requests: f.requests,
        rps: f.requests / seconds,
        p50Ms: f.p50Us / 1000,
        p99Ms: f.p99Us / 1000,
        maxMs: f.maxUs / 1000,
        errors: f.connect + f.read + f.write,
        timeouts: f.timeout,
        non2xx: f.status,
        mismatches: 0,
        // wrk counts answers outside 2xx/3xx without their codes.
        statusCodes: { '2xx/3xx': ok, ...(f.status > 0 ? { other: f.status } : {}) },
      });
    });
  });
  return { result, stop: () => child.kill('SIGINT') };
}
