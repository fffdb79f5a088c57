import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { type CommandIo, ConfigError, createMemoryCache, openDatabase } from '@keel/core';
import { buildGeoApp } from '../app.ts';
import { readGeoConfig } from '../config.ts';
import { geoDatabaseUrl, geoSecretBox, prepareGeoDatabase } from '../db/open.ts';
import type { GeoDb } from '../db/schema.ts';
import { isUuid, normalizeUuid } from '../ids.ts';
import { claimRunById } from '../measure/measure-worker.ts';
import { importPrompts, parsePromptCsv } from '../measure/prompt-service.ts';
import { createRun, executeRun, getRun, type RunProgress } from '../measure/run-service.ts';
import { findWorkspaceTenant } from '../tenancy/tenancy-store.ts';
import { MEASURE_USAGE } from './usage.ts';

/** A usage mistake: the CLI prints the message and exits 2. */
function usage(message: string): never {
  throw Object.assign(new Error(`${message}\n\nusage:\n${MEASURE_USAGE}`), { name: 'UsageError' });
}

function uuidOption(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (!isUuid(value)) usage(`--${name} must be a UUID`);
  return normalizeUuid(value);
}

/** A one-line progress bar (redrawn in place on a terminal, a line per 10% otherwise). */
function progressBar(stderr: CommandIo['stderr']) {
  let lastTenth = -1;
  return (p: RunProgress) => {
    const fraction = p.total === 0 ? 1 : p.done / p.total;
    if (stderr.isTTY) {
      const width = 30;
      const filled = Math.round(fraction * width);
      stderr.write(
        `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.done}/${p.total} answers${p.failed ? `, ${p.failed} failed` : ''}`,
      );
      if (p.done === p.total) stderr.write('\n');
    } else if (Math.floor(fraction * 10) > lastTenth) {
      lastTenth = Math.floor(fraction * 10);
      stderr.write(`${p.done}/${p.total} answers${p.failed ? `, ${p.failed} failed` : ''}\n`);
    }
  };
}

/** The summary table: metric, value, 95% interval, sample count. */
export function summaryTable(summary: Record<string, any>): string {
  const rows: string[][] = [['metric', 'value', '95% interval', 'n']];
  for (const [name, m] of Object.entries((summary.metrics ?? {}) as Record<string, any>))
    rows.push([
      name,
      m.value.toFixed(4),
      `[${m.interval[0].toFixed(4)}, ${m.interval[1].toFixed(4)}]`,
      String(m.sampleCount),
    ]);
  for (const skipped of summary.skipped ?? []) rows.push([skipped.metric, 'skipped', skipped.reason, '']);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [
    line(rows[0]!),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.slice(1).map(line),
    '',
    `${summary.answered} answered, ${summary.failed} failed; ${summary.inputTokens} input + ${summary.outputTokens} output tokens; cost ${summary.cost}`,
  ].join('\n');
}

/** `keel geo run` and `keel geo prompts import`. */
export async function runMeasureCommand(args: string[], io: CommandIo): Promise<number> {
  const [noun, verb] = args;
  const rest = noun === 'run' ? args.slice(1) : args.slice(2);
  if (noun === 'prompts' && verb !== 'import') usage('unknown prompts command');
  const { values } = parseArgs({
    args: rest,
    options: {
      workspace: { type: 'string' },
      project: { type: 'string' },
      file: { type: 'string' },
      engine: { type: 'string', multiple: true },
      judge: { type: 'string' },
      samples: { type: 'string' },
      seed: { type: 'string' },
      resume: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  const workspaceId = uuidOption(values.workspace, 'workspace') ?? usage('--workspace is required');
  const projectId = uuidOption(values.project, 'project') ?? '';
  const config = readGeoConfig(io.env);
  const database = await openDatabase<GeoDb>({ url: geoDatabaseUrl(config.core), schema: 'geo' });
  try {
    await prepareGeoDatabase(database.db);
    const { app, ctx } = await buildGeoApp({
      config,
      db: database.db,
      cache: createMemoryCache(),
      secrets: geoSecretBox(config),
      logStream: io.stderr,
    });
    try {
      if ((await findWorkspaceTenant(ctx.db, workspaceId)) === undefined)
        throw new ConfigError(`workspace ${workspaceId} does not exist`);
      if (noun === 'prompts') {
        if (!values.file) usage('--file is required');
        let csv: string;
        try {
          csv = fs.readFileSync(values.file, 'utf8');
        } catch {
          throw new ConfigError(`cannot read ${values.file}`);
        }
        const result = await importPrompts(ctx, workspaceId, projectId, parsePromptCsv(csv));
        io.stdout.write(
          values.json
            ? `${JSON.stringify(result)}\n`
            : `${result.created} prompts created, ${result.updated} updated (${result.ids.length} in the file)\n`,
        );
        return 0;
      }
      const integer = (value: string | undefined, name: string) => {
        if (value === undefined) return undefined;
        if (!/^\d{1,10}$/.test(value)) usage(`--${name} must be a whole number`);
        return Number(value);
      };
      const runId = values.resume
        ? (uuidOption(values.resume, 'resume') as string)
        : (
            await createRun(ctx, workspaceId, {
              projectId,
              engineIds: values.engine?.map((id) => uuidOption(id, 'engine') as string),
              samples: integer(values.samples, 'samples'),
              seed: integer(values.seed, 'seed'),
              judgeEngineId: uuidOption(values.judge, 'judge'),
            })
          ).id;
      const run = await getRun(ctx, workspaceId, runId);
      if (run.status !== 'completed') {
        const workerId = `keel-cli-${process.pid}`;
        if (!(await claimRunById(ctx, runId, workerId)))
          throw new ConfigError(
            `run ${runId} is being executed by another worker; try again when its claim goes stale`,
          );
        if (!values.json) io.stderr.write(`run ${runId}: ${run.totalTasks} answers to collect\n`);
        await executeRun(ctx, runId, {
          onProgress: values.json ? undefined : progressBar(io.stderr),
          onHeartbeat: () => claimRunById(ctx, runId, workerId, true).then(() => undefined),
        });
      }
      const done = await getRun(ctx, workspaceId, runId);
      io.stdout.write(
        values.json
          ? `${JSON.stringify(done)}\n`
          : `run ${runId} ${done.status}\n\n${summaryTable(done.summary ?? {})}\n`,
      );
      return done.status === 'completed' ? 0 : 1;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code?.startsWith('GEO_') || code === 'OUTBOUND_URL_REJECTED') throw new ConfigError((error as Error).message);
      throw error;
    } finally {
      await app.close();
    }
  } finally {
    await database.close();
  }
}
