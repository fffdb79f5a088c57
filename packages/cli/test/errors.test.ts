// Every user mistake ends in one line naming the flag or thing and what is expected, with its own exit code;
// stack traces only with --debug.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { AppError, ConfigError } from '@keel/core';
import { nextSteps } from '../src/commands/start.ts';
import { describeFailure } from '../src/errors.ts';
import { EXIT } from '../src/exit-codes.ts';
import { keelInProcess } from './in-process.ts';

const KEEL = path.join(import.meta.dirname, '..', 'src', 'keel.ts');
const STACK = /\n\s+at /;

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-cli-errors-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `keel` in this process, quiet logs; `spawnKeel` runs the bin where the process itself is under test. */
const keel = (args: string[], env: Record<string, string> = {}) => keelInProcess(args, { LOG_LEVEL: 'silent', ...env });

function spawnKeel(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [KEEL, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end('');
  });
}

/** Asserts a failure printed exactly one line (no stack) and exited with the given code. */
function assertOneLine(result: { code: number | null; stderr: string }, code: number, pattern: RegExp): void {
  assert.equal(result.code, code, result.stderr);
  assert.match(result.stderr, pattern);
  // Besides the line saying which store a command opens.
  const lines = result.stderr
    .trim()
    .split('\n')
    .filter((line) => !/^keel: \w+ store: /.test(line));
  assert.equal(lines.length, 1, `one line: ${result.stderr}`);
  assert.doesNotMatch(result.stderr, STACK);
}

describe('keel exit codes and messages', () => {
  test('an unknown option or a flag without its value is a usage error (2) naming the flag', async (t) => {
    const env = { KEEL_DATA_DIR: tempDir(t) };
    const [unknown, missing, detectOption] = await Promise.all([
      keel(['engine', 'keys', 'create', '--merchant', 'm', '--frobnicate'], env),
      keel(['engine', 'keys', 'create', '--merchant'], env),
      keel(['detect', '--colour'], env),
    ]);
    assertOneLine(unknown, EXIT.usage, /^keel: unknown option --frobnicate$/m);
    assertOneLine(missing, EXIT.usage, /^keel: --merchant needs a value \(--merchant VALUE\)$/m);
    assertOneLine(detectOption, EXIT.usage, /^keel: unknown option --colour$/m);
  });

  test('a key scope without the stores it needs names the --store flag, not the API field (2)', async (t) => {
    const env = { KEEL_DATA_DIR: tempDir(t) };
    // One after the other: in one process, two commands opening the same SQLite file at once would wait on each
    // other's lock (separate processes do not).
    const store = await keel(['engine', 'keys', 'create', '--merchant', 'm', '--scope', 'store'], env);
    const custom = await keel(['engine', 'keys', 'create', '--merchant', 'm', '--scope', 'custom'], env);
    const merchant = await keel(
      ['engine', 'keys', 'create', '--merchant', 'm', '--scope', 'merchant', '--store', 's'],
      env,
    );
    const expires = await keel(
      ['engine', 'keys', 'create', '--merchant', 'm', '--scope', 'merchant', '--expires', 'soon'],
      env,
    );
    assertOneLine(store, EXIT.usage, /^keel: --scope store needs exactly one --store STORE_ID$/m);
    assert.doesNotMatch(store.stderr, /storeIds/);
    assertOneLine(custom, EXIT.usage, /^keel: --scope custom needs 1 to 100 --store STORE_ID flags$/m);
    assertOneLine(merchant, EXIT.usage, /^keel: --store is not allowed with --scope merchant/m);
    assertOneLine(expires, EXIT.usage, /^keel: --expires must be an ISO 8601 date-time/m);
  });

  test('a rule the service enforces (an unknown merchant) is refused (5) in one line; --debug adds the stack', async (t) => {
    const env = { KEEL_DATA_DIR: tempDir(t) };
    const merchant = '0193a1b2-0000-7000-8000-000000000000';
    const plain = await keel(['engine', 'stores', 'create', '--merchant', merchant, '--name', 'Shop'], env);
    assertOneLine(plain, EXIT.refused, new RegExp(`^keel: merchant ${merchant} does not exist$`, 'm'));
    const debug = await keel(['--debug', 'engine', 'stores', 'create', '--merchant', merchant, '--name', 'Shop'], env);
    assert.equal(debug.code, EXIT.refused);
    assert.match(debug.stderr, STACK);
  });

  test('keel detect on a path that does not exist is an input error (4), not "would be blocked" (1)', async () => {
    const missing = path.join(os.tmpdir(), `keel-missing-${process.pid}`, 'dir');
    const result = await keel(['detect', missing]);
    assertOneLine(
      result,
      EXIT.input,
      new RegExp(`^keel: ${missing.replace(/[/.]/g, '\\$&')}: no such file or directory$`, 'm'),
    );
    assert.equal(result.stdout, '', 'nothing scanned');
  });

  test('bad environment variables are a configuration error (3), every one listed at once', async () => {
    const result = await keel(['migrate'], { GUARD_PORT: 'x', DATABASE_URL: 'mysql://h/db' });
    assert.equal(result.code, EXIT.config);
    assert.match(result.stderr, /^ {2}- DATABASE_URL .*\n {2}- GUARD_PORT must be an integer/m);
    assert.doesNotMatch(result.stderr, STACK);
  });

  test('a port already in use is "unavailable" (6)', async (t) => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    t.after(() => blocker.close());
    const port = (blocker.address() as net.AddressInfo).port;
    // The bin itself: its exit code and its one line on stderr.
    const result = await spawnKeel(['start', 'guard'], { GUARD_PORT: String(port), KEEL_DATA_DIR: tempDir(t) });
    assertOneLine(result, EXIT.unavailable, /EADDRINUSE/);
  });

  test('every command answers --help with its usage (0); `keel help COMMAND` too', async () => {
    const commands = [
      ['start'],
      ['migrate'],
      ['detect'],
      ['engine', 'keys', 'create'],
      ['geo', 'bootstrap'],
      ['import', 'products'],
    ];
    const results = await Promise.all([
      ...commands.map((command) => keel([...command, '--help'])),
      keel(['help', 'detect']),
      keel(['engine', '-h']),
    ]);
    for (const [i, result] of results.entries()) {
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^Usage:\n {2}keel /, `usage of ${commands[i]?.join(' ') ?? 'help'}`);
    }
    assert.match(results[2]!.stdout, /keel detect \[PATH…\] \[--json\]/);
    assert.match(results[3]!.stdout, /keel engine keys create --merchant ID/);
  });

  test('keel help lays every command out alike and lists the exit codes', async () => {
    const result = await keel(['help']);
    assert.equal(result.code, 0);
    const synopses = result.stdout.split('\n').filter((line) => /^\s+keel /.test(line));
    assert.ok(synopses.length >= 10);
    for (const line of synopses) assert.match(line, /^ {2}keel \S/, `aligned: ${line}`);
    for (const code of Object.values(EXIT)) assert.match(result.stdout, new RegExp(`^ {2}${code} +\\S`, 'm'));
  });
});

describe('describeFailure', () => {
  test('maps each kind of failure to its exit code; an unexpected one hides its stack unless --debug', () => {
    assert.equal(describeFailure(new ConfigError('GUARD_PORT must be an integer'), false).exitCode, EXIT.config);
    const refused = describeFailure(
      new AppError('VALIDATION_FAILED', 'invalid product', 400, { details: [{ path: 'sku', message: 'is required' }] }),
      false,
    );
    assert.deepEqual(refused, { message: 'invalid product (sku: is required)', exitCode: EXIT.refused });
    const bug = describeFailure(new TypeError('x is not a function'), false);
    assert.equal(bug.exitCode, EXIT.internal);
    assert.match(bug.message, /x is not a function \(run again with --debug for the stack trace\)/);
    assert.doesNotMatch(bug.message, STACK);
    assert.match(describeFailure(new TypeError('x is not a function'), true).message, STACK);
    assert.equal(describeFailure(new AppError('INTERNAL', 'boom', 500), false).exitCode, EXIT.internal);
  });
});

describe('configuration before side effects', () => {
  test('keel start checks every service first: all bad variables in one message, nothing created or printed', async (t) => {
    const dataDir = tempDir(t);
    const result = await keel(['start'], {
      KEEL_DATA_DIR: dataDir,
      RATE_LIMIT_MAX: 'lots',
      CONFIDENCE_BLOCK_THRESHOLD: '2',
      ENGINE_TOKEN_TTL_SECONDS: '5',
      GEO_EVENTS_MAX_BATCH: '0',
    });
    assert.equal(result.code, EXIT.config, result.stderr);
    for (const name of [
      'RATE_LIMIT_MAX',
      'CONFIDENCE_BLOCK_THRESHOLD',
      'ENGINE_TOKEN_TTL_SECONDS',
      'GEO_EVENTS_MAX_BATCH',
    ])
      assert.match(result.stderr, new RegExp(`^ {2}- ${name} `, 'm'));
    assert.equal(result.stderr.match(/RATE_LIMIT_MAX/g)?.length, 1, 'a shared variable is listed once');
    assert.equal(result.stdout, '', 'no key printed');
    assert.deepEqual(fs.readdirSync(dataDir), [], 'no database created');
  });

  test('keel start and the bootstrap commands say which store they use', async (t) => {
    const dataDir = tempDir(t);
    const [geo, engine] = await Promise.all([
      keel(['geo', 'bootstrap', '--json'], { KEEL_DATA_DIR: dataDir }),
      keel(['engine', 'bootstrap', '--json'], { KEEL_DATA_DIR: dataDir }),
    ]);
    assert.equal(geo.code, 0, geo.stderr);
    assert.equal(engine.code, 0, engine.stderr);
    assert.equal(geo.stderr, `keel: geo store: SQLite ${path.join(dataDir, 'geo.sqlite')}\n`);
    assert.equal(engine.stderr, `keel: engine store: SQLite ${path.join(dataDir, 'engine.sqlite')}\n`);
    assert.ok(JSON.parse(geo.stdout).keys.admin, 'stdout stays one JSON object');
    assert.ok(JSON.parse(engine.stdout).accessKey);

    const child = spawn(process.execPath, [KEEL, 'start', 'guard'], {
      env: { ...process.env, GUARD_PORT: '0', KEEL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    });
    t.after(() => child.kill('SIGKILL'));
    let seen = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        seen += chunk;
        if (seen.includes('keel: ready')) resolve();
      });
      child.on('exit', () => reject(new Error(seen)));
    });
    assert.match(
      seen,
      new RegExp(`^keel: guard store: SQLite ${path.join(dataDir, 'guard.sqlite').replace(/[/.]/g, '\\$&')}$`, 'm'),
    );
  });
});

describe('keel start output', () => {
  test('after the listeners: every docs page, a first request and the bootstrap commands', () => {
    const text = nextSteps([
      { name: 'guard', addresses: [{ label: 'guard', url: 'http://127.0.0.1:8081' }], close: async () => {} },
      {
        name: 'engine',
        addresses: [
          { label: 'engine', url: 'http://127.0.0.1:8083' },
          { label: 'engine-mcp', url: 'http://127.0.0.1:8084' },
        ],
        close: async () => {},
      },
      { name: 'geo', addresses: [{ label: 'geo', url: 'http://127.0.0.1:8082' }], close: async () => {} },
    ]);
    for (const docs of ['8081/docs', '8083/docs', '8084/docs', '8082/docs']) assert.ok(text.includes(docs), docs);
    assert.match(text, /curl -s http:\/\/127\.0\.0\.1:8081\/detect /);
    assert.match(text, /^ {2}npx keel geo bootstrap/m);
    assert.match(text, /^ {2}npx keel engine bootstrap/m);
    assert.doesNotMatch(text, /KEEL_DATA_DIR|DATABASE_URL/, 'the defaults need no variable');
  });

  test('the bootstrap commands write where the services read: the same KEEL_DATA_DIR, or a note on DATABASE_URL', () => {
    const geo = [{ name: 'geo', addresses: [{ label: 'geo', url: 'http://127.0.0.1:8082' }], close: async () => {} }];
    const dataDir = nextSteps(geo, { KEEL_DATA_DIR: '/srv/keel data' });
    assert.match(dataDir, /^ {2}KEEL_DATA_DIR='\/srv\/keel data' npx keel geo bootstrap/m);
    const postgres = nextSteps(geo, {
      DATABASE_URL: 'postgres://keel:s3cret@db.internal/keel',
      KEEL_DATA_DIR: '/srv/keel',
    });
    assert.match(postgres, /^ {2}npx keel geo bootstrap/m);
    assert.match(postgres, /with the same DATABASE_URL/);
    assert.doesNotMatch(postgres, /s3cret|db\.internal/, 'never the URL itself');
  });
});
