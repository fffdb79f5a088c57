import { after, before, type TestContext } from 'node:test';
import type { TestDatabaseTarget } from '@keel/core/testing';
import { bootstrapTenant } from '../src/tenancy/tenancy-service.ts';
import { buildGeo, type GeoUnderTest } from './helper.ts';

/**
 * One geo app for a whole suite (a `describe`): built on a fresh database before its first test and closed after
 * its last. Tests isolate by data instead of by app: each calls the returned function for two new tenants (with
 * their own workspaces and keys), so nothing one test writes is visible to another's keys. Tests that need a
 * clock of their own, another configuration or a database nobody else writes keep `buildGeo`.
 */
/** What a test of a shared suite works with: the suite's app and two tenants of its own (no test clock). */
export type SuiteGeo = Omit<GeoUnderTest, 'clock'>;

export function sharedGeo(target: TestDatabaseTarget, env: Record<string, string> = {}): () => Promise<SuiteGeo> {
  let geo: GeoUnderTest | undefined;
  const cleanups: (() => unknown)[] = [];
  // buildGeo registers its clean-up with the test context; the suite runs it after its last test instead.
  const suiteContext = { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext;
  before(async () => {
    geo = await buildGeo(suiteContext, target, env);
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return async () => {
    if (!geo) throw new Error('sharedGeo: call it inside a describe, and the returned function inside its tests');
    const { app, ctx, db, cache } = geo;
    const [a, b] = [
      await bootstrapTenant(db, ctx.secrets, 'Tenant A'),
      await bootstrapTenant(db, ctx.secrets, 'Tenant B'),
    ];
    return { app, ctx, db, cache, a, b };
  };
}
