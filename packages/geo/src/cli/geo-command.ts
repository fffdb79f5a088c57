import { parseArgs } from 'node:util';
import { type CliCommand, type CommandIo, ConfigError, describeServiceDatabase, openDatabase } from '@keel/core';
import { GEO_PERMISSIONS, type KeyScope } from '../auth/permissions.ts';
import { readGeoConfig } from '../config.ts';
import { geoDatabaseUrl, geoSecretBox, prepareGeoDatabase } from '../db/open.ts';
import type { GeoDb } from '../db/schema.ts';
import {
  bootstrapTenant,
  createTenant,
  createWorkspace,
  issueApiKey,
  issueSiteToken,
} from '../tenancy/tenancy-service.ts';
import { GEO_USAGE as USAGE } from './usage.ts';

class UsageError extends Error {
  override name = 'UsageError';
}

function print(io: CommandIo, json: boolean, value: Record<string, unknown>, human: string): void {
  io.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

async function run(args: string[], io: CommandIo): Promise<number> {
  const [noun, verb, ...rest] = args;
  // The measurement commands build the app; the others need only the database.
  if (noun === 'run' || noun === 'prompts') return (await import('./measure-command.ts')).runMeasureCommand(args, io);
  const { values } = parseArgs({
    args: noun === 'bootstrap' ? args.slice(1) : rest,
    options: {
      json: { type: 'boolean', default: false },
      name: { type: 'string' },
      tenant: { type: 'string' },
      workspace: { type: 'string', multiple: true },
      timezone: { type: 'string' },
      permissions: { type: 'string' },
      'expires-in-days': { type: 'string' },
    },
    allowPositionals: false,
  });
  if (noun !== 'bootstrap' && verb !== 'create') throw new UsageError(`usage:\n${USAGE}`);
  const config = readGeoConfig(io.env);
  // Said on stderr (stdout stays one JSON object with --json), so a key is never created in an unexpected store.
  io.stderr.write(`keel: geo store: ${describeServiceDatabase(config.core, 'geo')}\n`);
  const database = await openDatabase<GeoDb>({ url: geoDatabaseUrl(config.core), schema: 'geo' });
  try {
    await prepareGeoDatabase(database.db);
    const db = database.db;
    const json = values.json ?? false;
    const need = (name: 'name' | 'tenant') => {
      const value = values[name];
      if (!value) throw new UsageError(`--${name} is required\n\nusage:\n${USAGE}`);
      return value;
    };
    switch (noun) {
      case 'bootstrap': {
        const result = await bootstrapTenant(db, geoSecretBox(config), values.name ?? 'Bootstrap tenant');
        print(
          io,
          json,
          result as unknown as Record<string, unknown>,
          [
            `tenant     ${result.tenantId}`,
            `workspaces ${result.workspaceIds.join(' ')}`,
            `read key   ${result.keys.read}`,
            `write key  ${result.keys.write}`,
            `signals    ${result.keys.signals}`,
            `admin key  ${result.keys.admin}`,
            `site token ${result.siteToken}`,
            'The secrets are shown once.',
          ].join('\n'),
        );
        return 0;
      }
      case 'tenant': {
        const result = await createTenant(db, { name: need('name') });
        print(io, json, result, `tenant ${result.tenantId} (organization ${result.organizationId})`);
        return 0;
      }
      case 'workspace': {
        const result = await createWorkspace(
          db,
          { tenantId: need('tenant'), name: need('name'), timezone: values.timezone },
          geoSecretBox(config),
        );
        print(io, json, result, `workspace ${result.workspaceId}`);
        return 0;
      }
      case 'key': {
        const permissions = (values.permissions ?? '')
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean);
        if (permissions.length === 0) throw new UsageError(`--permissions is required (${GEO_PERMISSIONS.join(', ')})`);
        const workspaces = values.workspace ?? [];
        const scope: KeyScope =
          workspaces.length === 0
            ? { type: 'tenant' }
            : { type: workspaces.length === 1 ? 'workspace' : 'workspaces', workspaceIds: workspaces };
        const days = values['expires-in-days'];
        if (days !== undefined && !/^[1-9]\d{0,4}$/.test(days))
          throw new UsageError('--expires-in-days must be a positive whole number');
        const expiresAt = days === undefined ? null : new Date(Date.now() + Number(days) * 86_400_000);
        const { key, row } = await issueApiKey(db, {
          tenantId: need('tenant'),
          name: need('name'),
          permissions,
          scope,
          expiresAt,
        });
        print(
          io,
          json,
          { id: row.id, key, permissions: JSON.parse(row.permissions), scope, expiresAt: row.expires_at },
          `key ${row.id}: ${key}\nThe secret is shown once.`,
        );
        return 0;
      }
      case 'site-token': {
        const workspace = values.workspace?.[0];
        if (!workspace) throw new UsageError('--workspace is required');
        const result = await issueSiteToken(db, {
          tenantId: need('tenant'),
          workspaceId: workspace,
          name: values.name ?? 'site',
        });
        print(io, json, result, `site token ${result.id}: ${result.token}\nThe secret is shown once.`);
        return 0;
      }
      default:
        throw new UsageError(`unknown geo command "${noun ?? ''}"\n\nusage:\n${USAGE}`);
    }
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('GEO_')) throw new ConfigError((error as Error).message);
    throw error;
  } finally {
    await database.close();
  }
}

/** `keel geo …`: tenants, workspaces, keys and site tokens from the command line. */
export const geoCommand: CliCommand = { name: 'geo', usage: USAGE, run };
