import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { keelInProcess } from './in-process.ts';

const KEEL = path.join(import.meta.dirname, '..', 'src', 'keel.ts');

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-cli-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// `keel` in this process; the `keel start` tests spawn the bin (signals, worker processes, listeners).
const run = keelInProcess;

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} in: ${seen}`)), 180_000);
    child.stdout!.on('data', (chunk) => {
      seen += chunk;
      const match = seen.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.on('exit', () => reject(new Error(`exited early: ${seen}`)));
  });
}

describe('keel start', () => {
  test('starts guard, prints its address, and on SIGTERM lets in-flight requests finish', async (t) => {
    // A slow AI upstream keeps a /detect request in flight while the process is told to stop.
    const upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: '{"scores":[0.9]}' } }] }));
        }, 800),
      );
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    t.after(() => upstream.close());
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

    const child = spawn(process.execPath, [KEEL, 'start', 'guard'], {
      env: {
        ...process.env,
        GUARD_PORT: '0',
        KEEL_DATA_DIR: tempDir(t),
        AI_MODEL_URL: upstreamUrl,
        AI_TIMEOUT_MS: '5000',
        LOG_LEVEL: 'warn',
      },
    });
    t.after(() => child.kill('SIGKILL'));
    const [, base] = await waitForLine(child, /guard listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const health = await fetch(`${base}/healthz`);
    assert.equal(await health.text(), 'UP');

    const inFlight = fetch(`${base}/detect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'mail jane.doe@example.org' }),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    const response = await inFlight;
    assert.equal(response.status, 200);
    const body = (await response.json()) as { detections: { confidence_explanation: { source: string } }[] };
    assert.equal(body.detections[0]!.confidence_explanation.source, 'HYBRID');
    assert.equal(await exited, 0);
  });

  test('GUARD_WORKERS runs guard in several processes that share one port and see every change at once', async (t) => {
    const child = spawn(process.execPath, [KEEL, 'start', 'guard'], {
      env: { ...process.env, GUARD_PORT: '0', GUARD_WORKERS: '2', KEEL_DATA_DIR: tempDir(t), LOG_LEVEL: 'warn' },
    });
    t.after(() => child.kill('SIGKILL'));
    const [, base] = await waitForLine(child, /guard listening on (http:\/\/127\.0\.0\.1:\d+) \(2 worker processes\)/);
    const detectTypes = async () => {
      const response = await fetch(`${base}/detect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ text: 'ref TCK-123' }),
      });
      const body = (await response.json()) as { detections: { type: string }[] };
      return body.detections.map((d) => d.type);
    };
    for (let i = 0; i < 4; i++) assert.deepEqual(await detectTypes(), []);
    const created = await fetch(`${base}/patterns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Name: 'TICKET', Regex: 'TCK-\\d+' }),
    });
    assert.equal(created.status, 201);
    // Each request opens a new connection (Connection: close), and the cluster hands new connections to the workers
    // in turn, so both workers answer here; every one of them must see the new pattern on the next request.
    for (let i = 0; i < 8; i++) assert.deepEqual(await detectTypes(), ['TICKET']);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });

  test('a bad configuration value stops start-up with a message naming the variable', async () => {
    const result = await run(['start'], { GUARD_PORT: 'abc' });
    assert.equal(result.code, 3);
    assert.match(result.stderr, /GUARD_PORT must be an integer/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
  });

  test('an unknown service or command is a usage error', async () => {
    const service = await run(['start', 'nope']);
    assert.equal(service.code, 2);
    assert.match(service.stderr, /unknown service "nope"/);
    assert.equal((await run(['frobnicate'])).code, 2);
  });
});

describe('keel migrate', () => {
  test('applies migrations to DATABASE_URL once', async (t) => {
    const file = path.join(tempDir(t), 'guard.sqlite');
    const first = await run(['migrate', 'guard'], { DATABASE_URL: `sqlite:${file}` });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /guard: applied 1 migration/);
    const second = await run(['migrate'], { DATABASE_URL: `sqlite:${file}` });
    assert.match(second.stdout, /guard is up to date/);
  });
});

describe('keel detect', () => {
  test('prints path:line:col TYPE score with values masked, and exits 1 when something would be blocked', async (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(
      path.join(dir, 'app.env'),
      'PORT=8080\nAWS_ACCESS_KEY_ID=AKIAQ3EGRTZ7VKD4LN2X\nADMIN=jane.doe@example.org\n',
    );
    const result = await run(['detect', path.join(dir, 'app.env')]);
    assert.equal(result.code, 1);
    const lines = result.stdout.trim().split('\n');
    assert.match(lines[0]!, /app\.env:2:19 block AWS_ACCESS_KEY (0\.\d\d|1\.00) AK\*+2X$/);
    assert.match(lines[1]!, /app\.env:3:7 mask EMAIL 0\.\d\d ja\*+rg$/);
    assert.equal(lines[2], 'keel: 2 findings in 1 file, 1 would be blocked (AWS_ACCESS_KEY); 1 file scanned');
    assert.doesNotMatch(result.stdout, /AKIAQ3EGRTZ7VKD4LN2X|jane\.doe/);
  });

  test('--json prints one object per finding; a clean file exits 0', async (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, 'notes.md'), 'Contact: jane.doe@example.org\n');
    fs.writeFileSync(path.join(dir, 'clean.txt'), 'version 1.2.3, order 1042\n');
    const result = await run(['detect', '--json', dir]);
    assert.equal(result.code, 0, 'an email is masked, not blocked');
    const findings = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      findings.map((f) => [path.basename(f.path), f.line, f.column, f.type, f.blocked]),
      [['notes.md', 1, 10, 'EMAIL', false]],
    );
    assert.match(findings[0].masked, /^ja\*+rg$/);
  });

  test('reads stdin when no path is given, and shows progress when scanning many files', async (t) => {
    const stdin = await run(['detect'], {}, 'card 4539 1488 0343 6467\n');
    assert.equal(stdin.code, 1);
    assert.match(stdin.stdout, /^<stdin>:1:6 block CREDIT_CARD /);
    const dir = tempDir(t);
    for (let i = 0; i < 30; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), `line ${i}\n`);
    const many = await run(['detect', dir]);
    assert.equal(many.code, 0);
    assert.match(many.stderr, /scanned 30\/30 files/);
    assert.equal(many.stdout, 'keel: no findings; 30 files scanned\n');
  });
});
