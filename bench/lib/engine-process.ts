import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.join(import.meta.dirname, '..', '..');
const KEEL = path.join(ROOT, 'packages/cli/src/keel.ts');

export interface EngineBoot {
  merchantId: string;
  storeIds: string[];
  keys: Record<'merchant' | 'store' | 'network' | 'custom', string>;
  realmId: string;
  accessKey: string;
  secretKey: string;
}

export interface EngineProcess {
  /** The REST listener. */
  url: string;
  boot: EngineBoot;
  /** The engine process's id (to read its CPU time from /proc). */
  pid: number;
  stop(): Promise<void>;
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux; 10 ms resolution). */
export function cpuSecondsOf(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resolves with the first capture of `pattern` in the child's stdout; rejects if the child exits first. */
export function listening(child: ChildProcess, pattern: RegExp, label: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk) => {
      seen += chunk;
      const match = seen.match(pattern);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`${label} exited with ${code}: ${seen}`)));
  });
}

/**
 * Starts `keel start engine` in its own process (SQLite in a temporary data dir, generous rate limits, private URLs
 * allowed for local receivers, every listener on a free port) after `keel engine bootstrap --json`. `nodeFlags` go to
 * the engine's node (e.g. `--cpu-prof`).
 */
export async function startEngine(
  extraEnv: Record<string, string> = {},
  nodeFlags: readonly string[] = [],
): Promise<EngineProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-bench-engine-'));
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    KEEL_DATA_DIR: dataDir,
    RATE_LIMIT_MAX: '100000000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    KEEL_ALLOW_PRIVATE_URLS: 'true',
    ENGINE_PORT: '0',
    ENGINE_MCP_PORT: '0',
    ENGINE_WEBHOOK_PORT: '0',
    ...extraEnv,
  };
  const boot = JSON.parse(
    execFileSync(process.execPath, [KEEL, 'engine', 'bootstrap', '--json'], { env, encoding: 'utf8' }),
  ) as EngineBoot;
  const child = spawn(process.execPath, [...nodeFlags, KEEL, 'start', 'engine'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await listening(child, /engine listening on (\S+)[\s\S]*ready/, 'engine');
  return {
    url,
    boot,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.on('exit', resolve));
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
