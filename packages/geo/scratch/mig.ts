import { openDatabase } from '@keel/core';
import { Migrator } from 'kysely';
import { geoMigrations } from '../src/db/migrations/index.ts';

const d = await openDatabase<any>({ url: 'postgres://postgres@127.0.0.1:5432/test', schema: 'geo' });
const m = new Migrator({ db: d.db, provider: { getMigrations: async () => geoMigrations } });
console.log(JSON.stringify(await m.getMigrations()));
const { sql } = await import('kysely');
console.log((await sql`show search_path`.execute(d.db)).rows);
console.log((await sql`select * from kysely_migration`.execute(d.db)).rows);
await d.close();
