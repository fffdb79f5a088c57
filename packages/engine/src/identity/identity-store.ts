import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import { param, preparedQuery } from '../db/prepared.ts';
import type { EngineDb } from '../db/schema.ts';
import type { AccessKeyTable, IdentityTable, RealmTable } from '../runtime/db-tables.ts';

type Db = Executor<EngineDb>;
export type RealmRow = Selectable<RealmTable>;
export type IdentityRow = Selectable<IdentityTable>;
export type AccessKeyRow = Selectable<AccessKeyTable>;

export async function insertRealm(db: Db, row: Insertable<RealmTable>): Promise<void> {
  await db.insertInto('realm').values(row).execute();
}

export async function findRealm(db: Db, id: string): Promise<RealmRow | undefined> {
  return db.selectFrom('realm').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Records who created a realm. */
export async function setRealmCreator(db: Db, realmId: string, identityId: string): Promise<void> {
  await db.updateTable('realm').set({ created_by: identityId }).where('id', '=', realmId).execute();
}

/** Whether the database holds any realm. */
export async function anyRealmExists(db: Db): Promise<boolean> {
  return (await db.selectFrom('realm').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/** Writes the bootstrap marker `name` once: true for the one caller that wrote it, false once it exists. */
export async function claimBootstrapMarker(db: Db, name: string, now: string): Promise<boolean> {
  const claimed = await db
    .insertInto('runtime_bootstrap')
    .values({ name, created_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning('name')
    .executeTakeFirst();
  return claimed !== undefined;
}

export async function updateRealmTheme(db: Db, id: string, theme: string, now: string): Promise<void> {
  await db.updateTable('realm').set({ theme, updated_at: now }).where('id', '=', id).execute();
}

export async function insertIdentity(db: Db, row: Insertable<IdentityTable>): Promise<void> {
  await db.insertInto('identity').values(row).execute();
}

export async function findIdentity(db: Db, id: string): Promise<IdentityRow | undefined> {
  return db.selectFrom('identity').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findIdentityByUsernameKey(db: Db, usernameKey: string): Promise<IdentityRow | undefined> {
  return db.selectFrom('identity').selectAll().where('username_key', '=', usernameKey).executeTakeFirst();
}

/** An identity together with its role in a realm, when it is a member of it. */
export async function findMemberIdentity(
  db: Db,
  realmId: string,
  identityId: string,
): Promise<(IdentityRow & { role: string; member_since: string | Date }) | undefined> {
  return db
    .selectFrom('realm_member as m')
    .innerJoin('identity as i', 'i.id', 'm.identity_id')
    .selectAll('i')
    .select(['m.role as role', 'm.created_at as member_since'])
    .where('m.realm_id', '=', realmId)
    .where('m.identity_id', '=', identityId)
    .executeTakeFirst();
}

export async function listMembers(db: Db, realmId: string, limit: number, after: string | undefined) {
  let query = db
    .selectFrom('realm_member as m')
    .innerJoin('identity as i', 'i.id', 'm.identity_id')
    .selectAll('i')
    .select(['m.role as role', 'm.created_at as member_since'])
    .where('m.realm_id', '=', realmId);
  if (after) query = query.where('i.id', '>', after);
  return query
    .orderBy('i.id')
    .limit(limit + 1)
    .execute();
}

export async function upsertMember(
  db: Db,
  row: { realm_id: string; identity_id: string; role: string; now: string },
): Promise<void> {
  await db
    .insertInto('realm_member')
    .values({
      realm_id: row.realm_id,
      identity_id: row.identity_id,
      role: row.role,
      created_at: row.now,
      updated_at: row.now,
    })
    .onConflict((oc) => oc.columns(['realm_id', 'identity_id']).doUpdateSet({ role: row.role, updated_at: row.now }))
    .execute();
}

/** The realms an identity owns. */
export async function listOwnedRealmIds(db: Db, identityId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('realm_member')
    .select('realm_id')
    .where('identity_id', '=', identityId)
    .where('role', '=', 'owner')
    .execute();
  return rows.map((row) => row.realm_id);
}

/** The number of realms an identity owns. */
export async function countOwnedRealms(db: Db, identityId: string): Promise<number> {
  const row = await db
    .selectFrom('realm_member')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('identity_id', '=', identityId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countOwners(db: Db, realmId: string): Promise<number> {
  const row = await db
    .selectFrom('realm_member as m')
    .innerJoin('identity as i', 'i.id', 'm.identity_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('m.realm_id', '=', realmId)
    .where('m.role', '=', 'owner')
    .where('i.status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deleteMembership(db: Db, realmId: string, identityId: string): Promise<void> {
  await db.deleteFrom('realm_member').where('realm_id', '=', realmId).where('identity_id', '=', identityId).execute();
}

export async function updateIdentity(
  db: Db,
  id: string,
  changes: Partial<Pick<IdentityTable, 'display_name' | 'status' | 'metadata' | 'username' | 'username_key'>> & {
    updated_at: string;
  },
): Promise<void> {
  await db.updateTable('identity').set(changes).where('id', '=', id).execute();
}

/** Deletes an identity with its credentials and memberships (its agent configuration goes with it). */
export async function deleteIdentity(db: Db, id: string): Promise<void> {
  await db.deleteFrom('access_key').where('identity_id', '=', id).execute();
  await db.deleteFrom('realm_member').where('identity_id', '=', id).execute();
  await db.deleteFrom('agent_config').where('agent_id', '=', id).execute();
  await db.deleteFrom('identity').where('id', '=', id).execute();
}

export async function insertAccessKey(db: Db, row: Insertable<AccessKeyTable>): Promise<void> {
  await db.insertInto('access_key').values(row).execute();
}

/**
 * Replaces a key pair's secret hash; the previous one stays valid for the token exchange until
 * `previousExpiresAt` (null: it stops at once).
 */
export async function rotateAccessKeySecret(
  db: Db,
  keyId: string,
  secretHash: string,
  previousExpiresAt: string | null,
): Promise<void> {
  const current = await db.selectFrom('access_key').select('secret_hash').where('id', '=', keyId).executeTakeFirst();
  await db
    .updateTable('access_key')
    .set({
      secret_hash: secretHash,
      previous_secret_hash: previousExpiresAt === null ? null : (current?.secret_hash ?? null),
      previous_secret_expires_at: previousExpiresAt,
    })
    .where('id', '=', keyId)
    .execute();
}

const credentialQuery = preparedQuery((db) =>
  db
    .selectFrom('access_key as k')
    .innerJoin('identity as i', 'i.id', 'k.identity_id')
    .leftJoin('realm_member as m', (join) =>
      join.onRef('m.realm_id', '=', 'k.realm_id').onRef('m.identity_id', '=', 'k.identity_id'),
    )
    .leftJoin('realm as r', 'r.id', 'k.realm_id')
    .select([
      'k.id as key_id',
      'k.identity_id',
      'k.realm_id',
      'k.secret_hash',
      'k.previous_secret_hash',
      'k.previous_secret_expires_at',
      'k.expires_at',
      'k.revoked_at',
      'i.user_type',
      'i.status as identity_status',
      'm.role',
      'r.status as realm_status',
    ])
    .where('k.access_key', '=', param('accessKey')),
);

/** The key pair and its identity, looked up by the public access key (a prepared query: the token hot path). */
export async function findCredential(db: Db, accessKey: string) {
  return (await credentialQuery(db, { accessKey }))[0];
}

const standingQuery = preparedQuery((db) =>
  db
    .selectFrom('access_key as k')
    .innerJoin('identity as i', 'i.id', 'k.identity_id')
    .leftJoin('realm_member as m', (join) =>
      join.onRef('m.realm_id', '=', 'k.realm_id').onRef('m.identity_id', '=', 'k.identity_id'),
    )
    .leftJoin('realm as r', 'r.id', 'k.realm_id')
    .select([
      'k.identity_id',
      'k.realm_id',
      'k.expires_at',
      'k.revoked_at',
      'i.user_type',
      'i.status as identity_status',
      'm.role',
      'r.status as realm_status',
    ])
    .where('k.id', '=', param('keyId')),
);

/** The current standing of a key pair (for tokens already issued): revoked, expired, identity disabled, role. */
export async function findKeyStanding(db: Db, keyId: string) {
  return (await standingQuery(db, { keyId }))[0];
}

export async function touchAccessKey(db: Db, keyId: string, now: string): Promise<void> {
  await db.updateTable('access_key').set({ last_used_at: now }).where('id', '=', keyId).execute();
}

export async function listAccessKeys(db: Db, identityId: string): Promise<AccessKeyRow[]> {
  return db
    .selectFrom('access_key')
    .selectAll()
    .where('identity_id', '=', identityId)
    .orderBy('id', 'desc')
    .limit(200)
    .execute();
}

export async function revokeAccessKey(db: Db, identityId: string, keyId: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('access_key')
    .set({ revoked_at: now })
    .where('id', '=', keyId)
    .where('identity_id', '=', identityId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Revokes every unrevoked key of an identity for one realm. */
export async function revokeRealmKeysOf(db: Db, identityId: string, realmId: string, now: string): Promise<void> {
  await db
    .updateTable('access_key')
    .set({ revoked_at: now })
    .where('identity_id', '=', identityId)
    .where('realm_id', '=', realmId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function findAccessKey(db: Db, identityId: string, keyId: string): Promise<AccessKeyRow | undefined> {
  return db
    .selectFrom('access_key')
    .selectAll()
    .where('id', '=', keyId)
    .where('identity_id', '=', identityId)
    .executeTakeFirst();
}

export async function countActiveKeys(db: Db, identityId: string): Promise<number> {
  const row = await db
    .selectFrom('access_key')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('identity_id', '=', identityId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
