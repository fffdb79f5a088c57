import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.join(import.meta.dirname, '..', '..');
const KEEL = path.join(ROOT, 'packages/cli/src/keel.ts');

export interface GeoProcess {
  url: string;
  boot: {
    tenantId: string;
    workspaceId: string;
    workspaceIds: string[];
    keys: Record<'read' | 'write' | 'signals' | 'admin', string>;
    siteToken: string;
  };
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts `keel start geo` in its own process (SQLite in a temporary data dir, or DATABASE_URL) and bootstraps a tenant. */
export async function startGeo(
  extraEnv: Record<string, string> = {},
  options: { dataDir?: string } = {},
): Promise<GeoProcess> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'keel-geo-bench-'));
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    GEO_PORT: '0',
    KEEL_DATA_DIR: dataDir,
    RATE_LIMIT_MAX: '100000000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    ...extraEnv,
  };
  const boot = JSON.parse(
    execFileSync(process.execPath, [KEEL, 'geo', 'bootstrap', '--json'], { env, encoding: 'utf8' }),
  );
  const child = spawn(process.execPath, [KEEL, 'start', 'geo'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = seen.match(/geo listening on (\S+)/);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`geo exited with ${code}: ${seen}`)));
  });
  return {
    url,
    boot,
    env,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.on('exit', resolve));
      }
      if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
