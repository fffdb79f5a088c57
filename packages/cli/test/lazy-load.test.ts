// `keel` loads only what the command needs: `help` and `--help` no service, a guard command no engine or geo, a geo
// command no guard or engine. Each case runs `keel` in a child that records every module it resolved.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';

const KEEL = path.join(import.meta.dirname, '..', 'src', 'keel.ts');
const RECORDER = path.join(import.meta.dirname, 'fixtures', 'record-modules.ts');
const PACKAGES = path.resolve(import.meta.dirname, '..', '..');

/** The light entry points a service gives `keel help`: its commands' names and usage lines. */
const MANIFESTS = [
  'engine/src/cli/commands.ts',
  'engine/src/cli/usage.ts',
  'geo/src/cli/commands.ts',
  'geo/src/cli/usage.ts',
];

interface Loaded {
  code: number | null;
  stdout: string;
  /** The workspace packages' source files the process loaded, as `package/src/…` (the manifests left out). */
  files: string[];
  /** The dependencies (node_modules packages) the process loaded. */
  dependencies: Set<string>;
}

async function loadedBy(args: string[], env: Record<string, string>): Promise<Loaded> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-lazy-'));
  try {
    const record = path.join(dir, 'modules.json');
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', RECORDER, KEEL, ...args], {
        env: { ...process.env, KEEL_DATA_DIR: path.join(dir, 'data'), ...env, KEEL_TEST_MODULES_FILE: record },
      });
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      child.stderr.resume();
      child.on('close', (exit) => resolve({ code: exit, stdout: out }));
      child.stdin.end('');
    });
    const urls = JSON.parse(fs.readFileSync(record, 'utf8')) as string[];
    const files = urls
      .filter((url) => url.startsWith('file:'))
      .map((url) => path.relative(PACKAGES, new URL(url).pathname))
      .filter(
        (file) =>
          !file.startsWith('..') && !file.includes('node_modules') && file !== path.relative(PACKAGES, RECORDER),
      );
    return {
      code,
      stdout,
      files: files.filter((file) => !MANIFESTS.includes(file)),
      dependencies: new Set(urls.flatMap((url) => url.match(/\/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? [])),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const of = (files: string[], pkg: string) => files.filter((file) => file.startsWith(`${pkg}/`));

describe('keel loads only what a command needs', () => {
  test('help and a command’s --help load no service, no core and no dependency', async () => {
    for (const args of [
      ['help'],
      ['engine', 'keys', '--help'],
      ['geo', '--help'],
      ['import', '--help'],
      ['start', '--help'],
    ]) {
      const loaded = await loadedBy(args, {});
      assert.equal(loaded.code, 0, args.join(' '));
      assert.match(loaded.stdout, /Usage:/);
      assert.deepEqual(
        loaded.files.filter((file) => !file.startsWith('cli/')),
        [],
        `keel ${args.join(' ')} loaded service code`,
      );
      assert.deepEqual([...loaded.dependencies], [], `keel ${args.join(' ')} loaded a dependency`);
    }
  });

  test('a guard command loads guard but neither engine nor geo; detect only guard’s scanner', async () => {
    for (const args of [
      ['detect', '--json'],
      ['migrate', 'guard'],
    ]) {
      const loaded = await loadedBy(args, {});
      assert.equal(loaded.code, 0, args.join(' '));
      assert.ok(of(loaded.files, 'guard').length > 0, `keel ${args.join(' ')} did not load guard`);
      assert.deepEqual(of(loaded.files, 'engine'), [], `keel ${args.join(' ')} loaded the engine`);
      assert.deepEqual(of(loaded.files, 'geo'), [], `keel ${args.join(' ')} loaded geo`);
      assert.equal(loaded.files.includes('guard/src/app.ts'), args[0] === 'migrate', `keel ${args.join(' ')}`);
    }
  });

  test('a geo command loads geo but neither guard nor the engine (nor the XLSX and PDF writers)', async () => {
    const loaded = await loadedBy(['geo', 'bootstrap', '--json'], {});
    assert.equal(loaded.code, 0);
    assert.ok(JSON.parse(loaded.stdout).tenantId, loaded.stdout);
    assert.ok(of(loaded.files, 'geo').length > 0);
    assert.deepEqual(of(loaded.files, 'guard'), []);
    assert.deepEqual(of(loaded.files, 'engine'), []);
    assert.equal(loaded.files.includes('geo/src/app.ts'), false, 'keel geo bootstrap loaded geo’s app');
    assert.equal(loaded.dependencies.has('exceljs'), false);
    assert.equal(loaded.dependencies.has('pdfmake'), false);
    assert.ok(loaded.dependencies.has('kysely'), 'the recorder saw no dependency at all');
  });

  test('an engine command loads its part of the engine (and guard’s scanner), not the apps, not geo', async () => {
    const loaded = await loadedBy(['engine', 'bootstrap', '--json'], {});
    assert.equal(loaded.code, 0);
    assert.ok(JSON.parse(loaded.stdout).merchantId, loaded.stdout);
    assert.ok(of(loaded.files, 'engine').length > 0);
    assert.deepEqual(of(loaded.files, 'geo'), []);
    assert.ok(loaded.files.includes('guard/src/local-scanner.ts'));
    assert.equal(loaded.files.includes('guard/src/app.ts'), false, 'the engine loaded guard’s app');
    assert.equal(loaded.files.includes('engine/src/app.ts'), false, 'keel engine loaded the engine’s HTTP apps');
  });

  test('keel start with one service loads only that service, and checks its configuration first', async () => {
    const loaded = await loadedBy(['start', 'geo'], { GEO_PORT: 'not-a-port' });
    assert.equal(loaded.code, 3);
    assert.ok(of(loaded.files, 'geo').length > 0);
    assert.deepEqual(of(loaded.files, 'guard'), []);
    assert.deepEqual(of(loaded.files, 'engine'), []);
  });
});
