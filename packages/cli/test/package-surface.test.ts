// What each workspace package's manifest promises exists: every `exports`, `bin`, `main` and `types` target.
// The SDK's targets live in dist/ (built by its `prepare`, checked by its pack-and-install test), so here its
// sources are checked to be what the build compiles.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const PACKAGES = path.resolve(import.meta.dirname, '..', '..');

/** Every file path a manifest field names (conditional exports flattened). */
function targets(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value && typeof value === 'object') return Object.values(value).flatMap(targets);
  return [];
}

test('every exports, bin, main and types target of every package exists', () => {
  const checked: string[] = [];
  for (const name of fs.readdirSync(PACKAGES)) {
    const manifestPath = path.join(PACKAGES, name, 'package.json');
    if (!fs.existsSync(manifestPath)) continue;
    const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
    for (const target of targets([manifest.exports, manifest.bin, manifest.main, manifest.types])) {
      const built = target.replace(/^\.\/dist\//, './src/').replace(/\.d\.ts$|\.js$/, '.ts');
      const file = path.join(PACKAGES, name, target.startsWith('./dist/') ? built : target);
      assert.ok(fs.existsSync(file), `${manifest.name}: ${target} does not exist`);
      checked.push(`${manifest.name} ${target}`);
    }
  }
  assert.ok(checked.includes('@keel/cli ./src/keel.ts'));
  assert.ok(checked.includes('@keel/sdk ./dist/index.js'));
});

test('the CLI is a command, not a library: it names no exports, only its bin', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGES, 'cli', 'package.json'), 'utf8'));
  assert.equal(manifest.exports, undefined);
  assert.equal(manifest.main, undefined);
  assert.deepEqual(manifest.bin, { keel: './src/keel.ts' });
  assert.equal(
    fs.readFileSync(path.join(PACKAGES, 'cli', 'src', 'keel.ts'), 'utf8').split('\n')[0],
    '#!/usr/bin/env node',
  );
});
