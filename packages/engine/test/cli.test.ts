import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { KEEL, runKeel, startReceiver, until } from './helper.ts';

function tempDir(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-engine-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const run = runKeel;

function startEngine(t: TestContext, env: Record<string, string>): Promise<{ child: ChildProcess; rest: string }> {
  const child = spawn(process.execPath, [KEEL, 'start', 'engine'], {
    env: {
      ...process.env,
      ENGINE_PORT: '0',
      ENGINE_MCP_PORT: '0',
      ENGINE_WEBHOOK_PORT: '0',
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  t.after(() => child.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`engine did not start: ${seen}`)), 180_000);
    child.stdout!.on('data', (chunk) => {
      seen += chunk;
      const match = seen.match(/engine listening on (http:\/\/\S+)/);
      if (match && seen.includes('ready')) {
        clearTimeout(timer);
        resolve({ child, rest: match[1]! });
      }
    });
    child.on('exit', () => reject(new Error(`engine exited: ${seen}`)));
  });
}

describe('keel engine commands', () => {
  test('bootstrap --json prints the documented object, a new merchant each run', async (t) => {
    const env = { KEEL_DATA_DIR: tempDir(t) };
    const first = await run(['engine', 'bootstrap', '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    const boot = JSON.parse(first.stdout);
    assert.deepEqual(Object.keys(boot).sort(), [
      'accessKey',
      'keys',
      'merchantId',
      'realmId',
      'secretKey',
      'storeIds',
      'subMerchantId',
      'subMerchantStoreId',
    ]);
    assert.deepEqual(Object.keys(boot.keys).sort(), ['custom', 'merchant', 'network', 'store']);
    assert.ok(boot.storeIds.length >= 2);
    const second = JSON.parse((await run(['engine', 'bootstrap', '--json'], env)).stdout);
    assert.notEqual(second.merchantId, boot.merchantId);
  });

  test('import products from CSV and JSONL: created, updated and rejected rows are counted', async (t) => {
    const dir = tempDir(t);
    const env = { KEEL_DATA_DIR: dir };
    const boot = JSON.parse((await run(['engine', 'bootstrap', '--json'], env)).stdout);
    const csv = path.join(dir, 'products.csv');
    fs.writeFileSync(
      csv,
      [
        'storeId,sku,name,price,inventoryQuantity,imageUrls,otherDetails',
        `${boot.storeIds[0]},C-1,Blue mug,12.50,4,https://cdn.example.com/a.jpg|https://cdn.example.com/b.jpg,"{""color"":""blue""}"`,
        `${boot.storeIds[0]},C-2,Red mug,abc,1,,`,
        `${boot.storeIds[0]},C-3,Green mug,9,1,,`,
      ].join('\n'),
    );
    const first = await run(['import', 'products', csv, '--merchant', boot.merchantId, '--json'], env);
    assert.equal(first.code, 1, 'a rejected row makes the exit code 1');
    const summary = JSON.parse(first.stdout);
    assert.deepEqual(
      { created: summary.created, updated: summary.updated, rejected: summary.rejected },
      { created: 2, updated: 0, rejected: 1 },
    );
    assert.equal(summary.rejections[0].line, 3);
    assert.match(first.stderr, /importing \[#+\] 100%/);
    const jsonl = path.join(dir, 'products.jsonl');
    fs.writeFileSync(
      jsonl,
      `${JSON.stringify({ sku: 'C-1', name: 'Blue mug v2', price: 13 })}\n${JSON.stringify({ sku: 'J-1', name: 'Jug', price: '3.00' })}\n`,
    );
    const second = await run(
      ['import', 'products', jsonl, '--merchant', boot.merchantId, '--store', boot.storeIds[0]],
      env,
    );
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /created 1, updated 1, rejected 0/);
    const denied = await run(
      ['import', 'products', jsonl, '--merchant', boot.subMerchantId, '--store', boot.storeIds[0], '--json'],
      env,
    );
    assert.equal(denied.code, 2, 'a merchant imports only into its own stores: refused once, up front');
    assert.match(denied.stderr, /--store \S+ is not a store of merchant /);
    assert.equal(denied.stdout, '', 'no row was written');
    const storeless = await run(['import', 'products', jsonl, '--merchant', boot.merchantId], env);
    assert.equal(storeless.code, 2);
    assert.match(storeless.stderr, /the rows name no store: pass --store STORE_ID, or give every row a storeId column/);
    assert.doesNotMatch(storeless.stderr, /line \d+:/, 'not one rejection per row');
  });

  test('nothing lost: the process is killed with deliveries pending; after a restart every event arrives', async (t) => {
    const dir = tempDir(t);
    let healthy = false;
    const delivered = new Set<string>();
    const receiver = await startReceiver(t, (received) => {
      if (!healthy) return 503;
      delivered.add(received.body.product.id);
      return 200;
    });
    const env = {
      KEEL_DATA_DIR: dir,
      KEEL_ALLOW_PRIVATE_URLS: 'true',
      ENGINE_WEBHOOK_RETRY_SCHEDULE: '0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5',
      ENGINE_WEBHOOK_TIMEOUT_MS: '1000',
      ENGINE_WEBHOOK_POLL_MS: '100',
    };
    const boot = JSON.parse((await run(['engine', 'bootstrap', '--json'], env)).stdout);
    const first = await startEngine(t, env);
    const headers = { authorization: `Bearer ${boot.keys.merchant}`, 'content-type': 'application/json' };
    const destination = await fetch(`${first.rest}/api/v1/catalog/webhooks/destinations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: receiver.url, events: ['product.created'] }),
    });
    assert.equal(destination.status, 201);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`${first.rest}/api/v1/catalog/products`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ storeId: boot.storeIds[0], sku: `K-${i}`, name: `Kill ${i}`, price: 1 }),
      });
      ids.push(((await response.json()) as { id: string }).id);
    }
    await until(() => receiver.received.length >= 5);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    healthy = true;
    await startEngine(t, env);
    await until(() => ids.every((id) => delivered.has(id)), 30_000);
    assert.equal(delivered.size, 20);
  });
});
