import { parseArgs } from 'node:util';
import { type CliCommand, type CommandIo, createGroupCommit, describeServiceDatabase, openCache } from '@keel/core';
import { readEngineConfig } from '../config.ts';
import {
  bulkDeleteKeys,
  bulkRevokeKeys,
  createMerchant,
  createStore,
  getKeys,
  issueKey,
  setMerchantActive,
} from '../merchants/merchant-service.ts';
import { createPrincipalCache, KEY_SCOPES, type KeyScope } from '../merchants/principal.ts';
import { linkRealm, realmLink, unlinkRealm } from '../merchants/realm-link-service.ts';
import { inTransaction, type WriteContext } from '../write.ts';
import { bootstrapMerchant } from './bootstrap.ts';
import { ENGINE_USAGE as USAGE } from './usage.ts';

class UsageError extends Error {
  override name = 'UsageError';
}

async function withServices<T>(
  io: CommandIo,
  work: (services: Awaited<ReturnType<typeof open>>) => Promise<T>,
): Promise<T> {
  const services = await open(io);
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}

async function open(io: CommandIo) {
  const config = readEngineConfig(io.env);
  // Said on stderr (stdout stays one JSON object with --json), so a key is never created in an unexpected store.
  io.stderr.write(`keel: engine store: ${describeServiceDatabase(config.core, 'engine')}\n`);
  const { openEngineDatabase } = await import('../db/open.ts');
  const database = await openEngineDatabase(config);
  const cache = openCache({ redisUrl: config.core.redisUrl, service: 'engine' });
  const principals = await createPrincipalCache(database.db, cache.cache);
  const writes: WriteContext = { db: database.db, writes: createGroupCommit(database.db), notifyOutbox: () => {} };
  return {
    db: database.db,
    // The write path of the engine (the running engine's caches hear of key changes through the cache's pub/sub).
    writes,
    principals,
    close: async () => {
      await cache.close();
      await database.close();
    },
  };
}

/** The store flags a key scope needs, checked before anything is written (the service's rule, named as flags). */
function checkKeyStores(scope: KeyScope, stores: readonly string[]): void {
  if (scope === 'store' && stores.length !== 1)
    throw new UsageError('--scope store needs exactly one --store STORE_ID');
  if (scope === 'custom' && (stores.length < 1 || stores.length > 100))
    throw new UsageError('--scope custom needs 1 to 100 --store STORE_ID flags');
  if ((scope === 'merchant' || scope === 'merchant_network') && stores.length > 0)
    throw new UsageError(`--store is not allowed with --scope ${scope} (the key reaches its stores by scope)`);
}

function print(io: CommandIo, json: boolean, value: unknown, text: string): void {
  io.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

/** `keel engine …`: bootstrap credentials and manage merchants, stores and keys from the command line. */
export const engineCommand: CliCommand = {
  name: 'engine',
  usage: USAGE,
  async run(args, io) {
    const [area, action, ...rest] = args;
    if (area === 'flows') return (await import('./flows-command.ts')).runFlowsCommand(action, rest, io);
    const parse = (argv: string[]) =>
      parseArgs({
        args: argv,
        allowPositionals: true,
        options: {
          json: { type: 'boolean', default: false },
          name: { type: 'string' },
          parent: { type: 'string' },
          merchant: { type: 'string' },
          scope: { type: 'string' },
          store: { type: 'string', multiple: true },
          expires: { type: 'string' },
          realm: { type: 'string' },
        },
      });
    if (area === 'bootstrap') {
      const { values } = parse([action, ...rest].filter((a): a is string => a !== undefined));
      const result = await withServices(io, ({ db, principals }) => bootstrapMerchant(db, principals));
      print(
        io,
        values.json ?? false,
        result,
        [
          `merchant          ${result.merchantId}`,
          `sub-merchant      ${result.subMerchantId}`,
          `stores            ${result.storeIds.join(', ')}`,
          `sub-merchant store ${result.subMerchantStoreId}`,
          '',
          'keys (shown once; store them now):',
          ...Object.entries(result.keys).map(([scope, key]) => `  ${scope.padEnd(9)} ${key}`),
          '',
          `runtime realm     ${result.realmId} (service identity, owner)`,
          `  access_key ${result.accessKey}`,
          `  secret_key ${result.secretKey}`,
        ].join('\n'),
      );
      return 0;
    }
    const { values, positionals } = parse(rest);
    const json = values.json ?? false;
    const need = (value: string | undefined, flag: string) => {
      if (!value) throw new UsageError(`--${flag} is required\n\n${USAGE}`);
      return value;
    };
    return withServices(io, async ({ db, writes, principals }) => {
      if (area === 'merchants' && action === 'create') {
        const merchant = await createMerchant(db, {
          name: need(values.name, 'name'),
          ...(values.parent ? { parentId: values.parent } : {}),
        });
        print(io, json, merchant, merchant.id);
        return 0;
      }
      if (area === 'merchants' && (action === 'activate' || action === 'deactivate')) {
        await setMerchantActive(db, principals, need(positionals[0], 'merchant id'), action === 'activate');
        print(io, json, { ok: true }, `${action}d`);
        return 0;
      }
      if (area === 'stores' && action === 'create') {
        const store = await createStore(db, principals, {
          merchantId: need(values.merchant, 'merchant'),
          name: need(values.name, 'name'),
        });
        print(io, json, store, store.id);
        return 0;
      }
      if (area === 'keys') {
        const merchantId = need(values.merchant, 'merchant');
        if (action === 'create') {
          const scope = need(values.scope, 'scope') as KeyScope;
          if (!KEY_SCOPES.includes(scope)) throw new UsageError(`--scope must be one of ${KEY_SCOPES.join(', ')}`);
          checkKeyStores(scope, values.store ?? []);
          if (values.expires !== undefined && Number.isNaN(Date.parse(values.expires)))
            throw new UsageError('--expires must be an ISO 8601 date-time, e.g. 2027-01-31T00:00:00Z');
          const issued = await inTransaction(writes, (trx) =>
            issueKey(trx, {
              merchantId,
              scope,
              name: values.name ?? `${scope} key`,
              storeIds: values.store ?? [],
              expiresAt: values.expires ?? null,
            }),
          );
          print(
            io,
            json,
            { key: issued.secret, record: issued.key },
            `${issued.secret}\n(key ${issued.key.id}; shown once)`,
          );
          return 0;
        }
        if (action === 'list') {
          const keys = [];
          let cursor: string | undefined;
          do {
            const page = await getKeys(db, merchantId, 100, cursor);
            keys.push(...page.data);
            cursor = page.nextCursor ?? undefined;
          } while (cursor);
          print(
            io,
            json,
            keys,
            keys
              .map((k) => `${k.id}  ${k.prefix}…  ${k.scope.padEnd(16)} ${k.status.padEnd(8)} ${k.name}`)
              .join('\n') || '(no keys)',
          );
          return 0;
        }
        if (action === 'revoke') {
          if (positionals.length === 0) throw new UsageError('name at least one key id');
          const result = await bulkRevokeKeys(writes, principals, merchantId, positionals);
          print(io, json, result, `revoked ${result.revoked.length}, already revoked ${result.alreadyRevoked.length}`);
          return 0;
        }
        if (action === 'delete') {
          if (positionals.length === 0) throw new UsageError('name at least one key id');
          const result = await bulkDeleteKeys(writes, principals, merchantId, positionals);
          print(io, json, result, `deleted ${result.deleted.length}`);
          return 0;
        }
      }
      if (area === 'realms') {
        const realmId = need(values.realm, 'realm');
        if (action === 'link') {
          const link = await inTransaction(writes, (trx) =>
            linkRealm(trx, {
              realmId,
              merchantId: need(values.merchant, 'merchant'),
              createdBy: 'keel engine realms link',
            }),
          );
          print(io, json, link, `realm ${link.realmId} linked to merchant ${link.merchantId}`);
          return 0;
        }
        if (action === 'unlink') {
          const removed = await inTransaction(writes, (trx) => unlinkRealm(trx, realmId));
          print(io, json, { unlinked: removed }, removed ? 'unlinked' : 'the realm had no link');
          return 0;
        }
        if (action === 'show') {
          const link = (await realmLink(db, realmId)) ?? null;
          print(io, json, link, link ? `realm ${link.realmId} → merchant ${link.merchantId}` : '(no link)');
          return 0;
        }
      }
      throw new UsageError(`unknown engine command\n\n  ${USAGE}`);
    });
  },
};
