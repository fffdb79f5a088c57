// The architecture, checked: every import of every package's src/ against the layering rules of CONVENTIONS.md and
// the package arrows (models → core; guard, geo → core, models; engine → core, models, guard; nothing reaches a package's internals).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const PACKAGES = path.resolve(import.meta.dirname, '../..');

interface Import {
  /** The importing file, relative to packages/. */
  from: string;
  specifier: string;
  /** For a relative specifier: the resolved file, relative to packages/. */
  resolved: string | undefined;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** Every import of every `packages/<name>/src/**.ts`. */
export function importsOfPackages(root = PACKAGES): Import[] {
  const found: Import[] = [];
  for (const pkg of fs.readdirSync(root)) {
    for (const file of sourceFiles(path.join(root, pkg, 'src'))) {
      const text = fs.readFileSync(file, 'utf8');
      for (const match of text.matchAll(IMPORT)) {
        const specifier = (match[1] ?? match[2])!;
        const resolved = specifier.startsWith('.')
          ? path.relative(root, path.resolve(path.dirname(file), specifier))
          : undefined;
        found.push({ from: path.relative(root, file), specifier, resolved });
      }
    }
  }
  return found;
}

const packageOf = (relative: string) => relative.split(path.sep)[0]!;
const isRoutes = (file: string) => /-routes\.ts$/.test(file);
const isStore = (file: string) => /-store\.ts$/.test(file);
const isService = (file: string) => /-service\.ts$/.test(file);
/**
 * The allowed package arrows (a package always imports itself). The engine uses guard for detection only; sdk and
 * cli sit on top of everything and are not listed.
 */
const ARROWS: Record<string, readonly string[]> = {
  core: [],
  models: ['core'],
  guard: ['core', 'models'],
  geo: ['core', 'models'],
  engine: ['core', 'models', 'guard'],
};

/** The public entry points a package declares (`exports` of its package.json). */
function publicSubpaths(pkg: string): Set<string> {
  const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGES, pkg, 'package.json'), 'utf8')) as {
    exports?: Record<string, string>;
  };
  return new Set(Object.keys(manifest.exports ?? { '.': '' }));
}

/** The rule an import breaks, or undefined. */
export function brokenRule(entry: Import): string | undefined {
  const fromPkg = packageOf(entry.from);
  let toPkg: string | undefined;
  let subpath = '.';
  if (entry.resolved !== undefined) {
    toPkg = packageOf(entry.resolved);
    if (toPkg !== fromPkg) return 'reaches into another package by a relative path (import its public entry)';
  } else if (entry.specifier.startsWith('@keel/')) {
    const [, name, ...rest] = entry.specifier.split('/');
    toPkg = name;
    subpath = rest.length ? `./${rest.join('/')}` : '.';
    if (!publicSubpaths(toPkg!).has(subpath)) return `imports ${entry.specifier}, which ${toPkg} does not export`;
  }
  if (isRoutes(entry.from) && (entry.specifier === 'kysely' || (entry.resolved && isStore(entry.resolved))))
    return 'a route imports a store or Kysely (routes shape HTTP and call services)';
  if (isStore(entry.from) && entry.resolved && isService(entry.resolved)) return 'a store imports a service';
  const allowed = ARROWS[fromPkg];
  if (allowed && toPkg !== undefined && toPkg !== fromPkg && !allowed.includes(toPkg))
    return `${fromPkg} imports ${toPkg} (allowed: ${[fromPkg, ...allowed].join(', ')})`;
  return undefined;
}

const SQL = /\.(?:selectFrom|insertInto|updateTable|deleteFrom|transaction)\(/;

test('no route runs SQL: routes shape HTTP and call services', () => {
  const offenders = fs
    .readdirSync(PACKAGES)
    .flatMap((pkg) => sourceFiles(path.join(PACKAGES, pkg, 'src')))
    .filter((file) => isRoutes(file) && SQL.test(fs.readFileSync(file, 'utf8')))
    .map((file) => path.relative(PACKAGES, file));
  assert.deepEqual(offenders, []);
});

test('no import breaks a layering or package rule', () => {
  const imports = importsOfPackages();
  assert.ok(imports.length > 500, 'the scan sees the source files');
  const broken = imports
    .map((entry) => ({ entry, rule: brokenRule(entry) }))
    .filter((x) => x.rule !== undefined)
    .map(({ entry, rule }) => `${entry.from}: '${entry.specifier}' — ${rule}`);
  assert.deepEqual(broken, []);
});

test('the check recognises each rule it enforces', () => {
  const at = (from: string, specifier: string): Import => ({
    from,
    specifier,
    resolved: specifier.startsWith('.') ? path.join(path.dirname(from), specifier) : undefined,
  });
  const cases: [Import, RegExp][] = [
    [at('engine/src/catalog/cart-routes.ts', './cart-store.ts'), /route imports a store/],
    [at('engine/src/catalog/cart-routes.ts', 'kysely'), /route imports a store or Kysely/],
    [at('engine/src/catalog/cart-store.ts', './cart-service.ts'), /store imports a service/],
    [at('core/src/db/x.ts', '@keel/engine'), /core imports engine/],
    [at('core/src/db/x.ts', '@keel/models'), /core imports models/],
    [at('models/src/x.ts', '@keel/guard'), /models imports guard/],
    [at('guard/src/x.ts', '@keel/geo'), /guard imports geo/],
    [at('guard/src/x.ts', '@keel/engine'), /guard imports engine/],
    [at('geo/src/x.ts', '@keel/engine'), /geo imports engine/],
    [at('geo/src/x.ts', '@keel/guard'), /geo imports guard/],
    [at('engine/src/x.ts', '@keel/geo'), /engine imports geo/],
    [at('engine/src/x.ts', '@keel/models/src/bedrock-provider.ts'), /does not export/],
    [at('engine/src/x.ts', '@keel/guard/src/detect/detector.ts'), /does not export/],
    [at('engine/src/x.ts', '../../guard/src/index.ts'), /relative path/],
  ];
  for (const [entry, rule] of cases) assert.match(brokenRule(entry) ?? 'no rule broken', rule, entry.specifier);
  assert.equal(brokenRule(at('engine/src/catalog/cart-service.ts', './cart-store.ts')), undefined);
  assert.equal(brokenRule(at('engine/src/x.ts', '@keel/guard')), undefined);
  assert.equal(brokenRule(at('engine/src/x.ts', '@keel/models')), undefined);
  assert.equal(brokenRule(at('guard/src/x.ts', '@keel/models')), undefined);
  assert.equal(brokenRule(at('geo/src/x.ts', '@keel/models')), undefined);
  assert.equal(brokenRule(at('models/src/x.ts', '@keel/core')), undefined);
  assert.equal(brokenRule(at('geo/src/x.ts', '@keel/core/testing')), undefined);
});

// The store layer (issue 11): services hold the rules and run no query themselves; their queries are functions of
// their area's `*-store.ts`. Every `*-service.ts` of every package is held to it, and so is every other engine and geo
// module outside the places SQL lives (stores; each service's db/ folder: schema, migrations, opening, bulk inserts;
// the engine's two dialects' search implementations).
const SQL_HOMES = [/-store\.ts$/, /^(?:engine|geo)\/src\/db\//, /^engine\/src\/catalog\/search\//];

/** Whether the store-layer rule holds a source file (a path relative to packages/, `/`-separated). */
export function isStoreBacked(file: string): boolean {
  return isService(file) || (/^(?:engine|geo)\/src\//.test(file) && !SQL_HOMES.some((home) => home.test(file)));
}

/** Every source file of every package: its path relative to packages/ (`/`-separated). */
function allSourceFiles(): string[] {
  return fs
    .readdirSync(PACKAGES)
    .flatMap((pkg) => sourceFiles(path.join(PACKAGES, pkg, 'src')))
    .map((file) => path.relative(PACKAGES, file).split(path.sep).join('/'));
}

/** The store-layer offences among these files (`path: why`): each file the rule holds whose source runs SQL. */
export function storeLayerOffences(files: readonly string[], read: (file: string) => string): string[] {
  return files
    .filter(isStoreBacked)
    .map((file) => ({ file, why: serviceSql(read(file)) }))
    .filter((x) => x.why !== undefined)
    .map((x) => `${x.file}: ${x.why}`);
}

/** Why a module's source runs SQL itself (a query builder call, a `sql` template or kysely value import), or undefined. */
export function serviceSql(text: string): string | undefined {
  const builder = /\.(?:selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto|selectNoFrom)\(/.exec(text);
  if (builder) return `calls the query builder (${builder[0]})`;
  if (/\bsql\s*`/.test(text) || /import\s*(?:type\s+)?\{[^}]*\bsql\b[^}]*\}\s*from/.test(text)) return 'uses `sql`';
  if (/import\s+(?!type\s)[^;]*?from\s*['"]kysely['"]/.test(text)) return 'imports kysely (import only its types)';
  if (/\bpreparedQuery\(/.test(text)) return 'compiles a prepared query';
  return undefined;
}

test('store-backed services and modules run no SQL themselves: their queries are store functions', () => {
  const files = allSourceFiles().filter(isStoreBacked);
  assert.ok(files.includes('engine/src/sessions/session-service.ts'), 'the scan sees the engine services');
  assert.ok(files.includes('engine/src/runtime/orchestrator.ts'), 'the scan sees engine modules that are not services');
  assert.ok(files.includes('guard/src/patterns/pattern-service.ts'), "the scan sees guard's services");
  assert.ok(files.includes('geo/src/exports/export-service.ts'), "the scan sees geo's services");
  assert.ok(files.includes('geo/src/worker/geo-worker.ts'), 'the scan sees geo modules that are not services');
  assert.deepEqual(
    storeLayerOffences(files, (file) => fs.readFileSync(path.join(PACKAGES, file), 'utf8')),
    [],
  );
});

test('the service SQL check recognises each way of running SQL', () => {
  assert.match(serviceSql("await trx.selectFrom('cart').selectAll().execute();") ?? '', /query builder/);
  assert.match(serviceSql("await db\n  .updateTable('cart')") ?? '', /query builder/);
  assert.match(serviceSql("import { sql } from 'kysely';") ?? '', /sql/);
  assert.match(serviceSql('await sql`select 1`.execute(db);') ?? '', /sql/);
  assert.match(serviceSql("import { Kysely } from 'kysely';") ?? '', /imports kysely/);
  assert.match(serviceSql('const q = preparedQuery((db) => db);') ?? '', /prepared query/);
  assert.equal(serviceSql("import type { Selectable } from 'kysely';\nawait db.transaction().execute(f);"), undefined);
  assert.equal(serviceSql("import { findOpenCart } from './cart-store.ts';\nawait findOpenCart(trx, id);"), undefined);
});

test('the store-layer rule reports a geo or engine module that runs SQL again, never a store or db/ file', () => {
  const query = "await ctx.db.selectFrom('measure_run').select('id').where('id', '=', id).execute();";
  const modules = [
    'geo/src/worker/geo-worker.ts',
    'geo/src/events/visitor-salt.ts',
    'geo/src/cli/measure-command.ts',
    'geo/src/measure/run-finalize.ts',
    'geo/src/measure/answer-writer.ts',
    'geo/src/measure/measure-worker.ts',
    'engine/src/runtime/orchestrator.ts',
    'guard/src/patterns/pattern-service.ts',
  ];
  const homes = [
    'geo/src/measure/measure-store.ts',
    'geo/src/worker/job-store.ts',
    'geo/src/db/bulk-insert.ts',
    'geo/src/db/migrations/2026_11_26_0101_export_job_pruned.ts',
    'engine/src/catalog/cart-store.ts',
    'engine/src/db/migrations/index.ts',
    'engine/src/catalog/search/postgres-search.ts',
  ];
  const fixture: Record<string, string> = {
    ...Object.fromEntries([...modules, ...homes].map((file) => [file, query])),
    'geo/src/events/visitor-salt.ts': "import { sql } from 'kysely';",
    'geo/src/cli/measure-command.ts': "import { CompiledQuery } from 'kysely';",
    'geo/src/measure/run-service.ts': "import { findRun } from './measure-store.ts';\nawait findRun(ctx.db, ws, id);",
  };
  const why: Record<string, string> = {
    'geo/src/events/visitor-salt.ts': 'uses `sql`',
    'geo/src/cli/measure-command.ts': 'imports kysely (import only its types)',
  };
  assert.deepEqual(
    storeLayerOffences(Object.keys(fixture), (file) => fixture[file]!),
    modules.map((file) => `${file}: ${why[file] ?? 'calls the query builder (.selectFrom()'}`),
  );
});
