// The published package, as a user gets it: `npm pack`, installed from the tarball into a project outside this
// repository, type-checked there, and the README's examples run against live services on every Node.js found.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { keelInProcess } from '../../cli/test/in-process.ts';

const SDK = path.resolve(import.meta.dirname, '..');
const REPO = path.resolve(SDK, '..', '..');
const KEEL = path.join(REPO, 'packages', 'cli', 'src', 'keel.ts');
const TSC = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');

/** Every distinct Node.js major on this machine: this one (24) and the system's (`which -a node`, e.g. 20). */
function nodeBinaries(): { path: string; version: string }[] {
  const candidates = [process.execPath, '/usr/bin/node'];
  try {
    candidates.push(...execFileSync('which', ['-a', 'node'], { encoding: 'utf8' }).split('\n').filter(Boolean));
  } catch {
    // `which` missing or no node on PATH: the others still count.
  }
  const byMajor = new Map<string, { path: string; version: string }>();
  for (const candidate of candidates) {
    if (!fs.existsSync(candidate)) continue;
    const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
    const major = version.split('.')[0]!;
    if (!byMajor.has(major)) byMajor.set(major, { path: candidate, version });
  }
  return [...byMajor.values()];
}

/** The ```js blocks of the README, by the heading they follow (Guard, Geo, Engine). */
function readmeExamples(): Map<string, string> {
  const readme = fs.readFileSync(path.join(SDK, 'README.md'), 'utf8');
  const examples = new Map<string, string>();
  let heading = '';
  for (const block of readme.split(/^(?=## |```js\n)/m)) {
    if (block.startsWith('## ')) heading = block.slice(3, block.indexOf('\n')).trim();
    else if (block.startsWith('```js\n')) examples.set(heading, block.slice(6, block.indexOf('\n```', 5) + 1));
  }
  return examples;
}

const execFileAsync = promisify(execFile);

/** Runs a command to completion without blocking this process (the model double answers meanwhile). */
async function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const { stdout } = await execFileAsync(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    encoding: 'utf8',
    timeout: 180_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

function waitForReady(child: ChildProcess): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`keel start did not get ready: ${seen}`)), 180_000);
    child.stdout!.on('data', (chunk) => {
      seen += chunk;
      if (!/keel: ready/.test(seen)) return;
      clearTimeout(timer);
      resolve(new Map([...seen.matchAll(/keel: (.+?) listening on (http:\/\/\S+)/g)].map((m) => [m[1]!, m[2]!])));
    });
    child.on('exit', (code) => reject(new Error(`keel start exited with ${code}: ${seen}`)));
  });
}

describe('@keel/sdk as an npm package', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-sdk-package-'));
  const dataDir = path.join(work, 'data');
  const project = path.join(work, 'consumer');
  const serviceEnv = {
    ...process.env,
    KEEL_DATA_DIR: dataDir,
    KEEL_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'warn',
    GUARD_PORT: '0',
    GEO_PORT: '0',
    ENGINE_PORT: '0',
    ENGINE_MCP_PORT: '0',
    ENGINE_WEBHOOK_PORT: '0',
  };
  let services: ChildProcess | undefined;
  let urls = new Map<string, string>();
  let modelUrl = '';
  const model = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          choices: [{ message: { role: 'assistant', content: 'Yes, the Trail 2 comes in size 42.' } }],
          usage: { prompt_tokens: 12, completion_tokens: 9 },
        }),
      );
    });
  });

  before(async () => {
    assert.ok(!project.startsWith(REPO), 'the consumer project is outside the repository');
    await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
    modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
    services = spawn(process.execPath, [KEEL, 'start'], { env: serviceEnv, stdio: ['ignore', 'pipe', 'inherit'] });
    urls = await waitForReady(services);
  });

  after(async () => {
    if (services && services.exitCode === null) {
      const exited = new Promise((resolve) => services!.once('exit', resolve));
      services.kill('SIGTERM');
      await exited;
    }
    await new Promise<void>((resolve) => model.close(() => resolve()));
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('npm pack builds a tarball of JavaScript and declarations only, with no dependencies', async () => {
    // `npm pack` runs `prepare`, which builds dist/ (its output may precede npm's JSON).
    const output = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: SDK });
    const packed = JSON.parse(output.slice(output.indexOf('[\n'))) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed[0]!.files.map((f) => f.path).sort();
    assert.ok(files.includes('dist/index.js') && files.includes('dist/index.d.ts'));
    assert.ok(files.includes('dist/api/engine.d.ts') && files.includes('README.md'));
    assert.deepEqual(
      files.filter((f) => !/^(dist\/.+\.(js|d\.ts)|README\.md|package\.json)$/.test(f)),
      [],
      'no sources, tests or scripts',
    );
    const manifest = JSON.parse(fs.readFileSync(path.join(SDK, 'package.json'), 'utf8'));
    assert.equal(manifest.dependencies, undefined, 'no runtime dependencies');
    assert.equal(manifest.engines.node, '>=20');

    fs.mkdirSync(project);
    fs.writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(work, packed[0]!.filename)], {
      cwd: project,
    });
    const installed = path.join(project, 'node_modules', '@keel', 'sdk');
    assert.ok(fs.existsSync(path.join(installed, 'dist', 'index.js')));
    assert.ok(!fs.existsSync(path.join(project, 'node_modules', '@keel', 'engine')), 'no service installed');
  });

  test("the README's examples type-check against the installed declarations", async () => {
    const examples = readmeExamples();
    assert.deepEqual([...examples.keys()], ['Guard', 'Geo', 'Engine']);
    for (const [name, code] of examples) fs.writeFileSync(path.join(project, `${name.toLowerCase()}.mjs`), code);
    fs.writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          allowJs: true,
          checkJs: true,
          types: ['node'],
          typeRoots: [path.join(REPO, 'node_modules', '@types')],
        },
        include: ['*.mjs'],
      }),
    );
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project });
  });

  // One run per Node version, one after the other: guard is single-tenant, and the README's guard example creates and
  // deletes a pattern of a fixed name, so two runs at once would collide.
  describe('live examples', () => {
    for (const node of nodeBinaries()) {
      test(`the README's examples run against live services on Node ${node.version}`, async () => {
        // Fresh credentials per run, with the commands the README tells a user to run (`keel` in this process).
        const bootstrap = async (service: string) => {
          const result = await keelInProcess([service, 'bootstrap', '--json'], serviceEnv);
          assert.equal(result.code, 0, result.stderr);
          return JSON.parse(result.stdout);
        };
        const geo = await bootstrap('geo');
        const engine = await bootstrap('engine');
        const env = {
          PATH: process.env.PATH,
          GUARD_URL: urls.get('guard'),
          GEO_URL: urls.get('geo'),
          GEO_API_KEY: geo.keys.admin,
          GEO_WORKSPACE_ID: geo.workspaceId,
          ENGINE_URL: urls.get('engine REST') ?? urls.get('engine'),
          ENGINE_ACCESS_KEY: engine.accessKey,
          ENGINE_SECRET_KEY: engine.secretKey,
          MODEL_URL: modelUrl,
          MODEL_API_KEY: 'sk-test-model-key-0123456789',
        };
        const guard = await run(node.path, ['guard.mjs'], { cwd: project, env });
        assert.match(guard, /^true Blocked due to high confidence detection: CREDIT_CARD$/m);
        assert.match(guard, /^Mail \[EMAIL\], card \[CREDIT_CARD\]$/m);
        assert.match(guard, /\[ 'EMPLOYEE_ID' \]/);
        const geoOut = await run(node.path, ['geo.mjs'], { cwd: project, env });
        assert.match(geoOut, /^2 targets created$/m);
        assert.match(geoOut, /geo_list_metrics/);
        const engineOut = await run(node.path, ['engine.mjs'], { cwd: project, env });
        assert.match(engineOut, /^RESPOND Yes, the Trail 2 comes in size 42\.$/m);
        assert.match(engineOut, /^2 messages$/m);
      });
    }
  });
});
