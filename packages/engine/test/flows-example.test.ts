// The shipped example flow set (issue 13 item 6), end to end through the `keel` CLI as child processes on the
// embedded default (SQLite in KEEL_DATA_DIR): bootstrap → install → run on the scripted local model the command starts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { scriptedAnswer } from '../src/cli/scripted-model.ts';
import { runKeel } from './helper.ts';

const keel = runKeel;

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, any>);

describe('keel engine flows: the shopping assistant example', () => {
  test('installed with one command and run end to end on the scripted model, steps printed as they happen', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-flows-example-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const base = { KEEL_DATA_DIR: dir, LOG_LEVEL: 'error' };
    const boot = await keel(['engine', 'bootstrap', '--json'], base);
    assert.equal(boot.code, 0, boot.stderr);
    const { accessKey, secretKey, realmId, merchantId } = JSON.parse(boot.stdout);
    const env = { ...base, ENGINE_ACCESS_KEY: accessKey, ENGINE_SECRET_KEY: secretKey };

    const missing = await keel(['engine', 'flows', 'install', 'shopping-assistant'], base);
    assert.equal(missing.code, 2, 'no key pair is a usage error');
    assert.match(missing.stderr, /key pair is required/);

    const installed = await keel(
      ['engine', 'flows', 'install', 'shopping-assistant', '--demo-products', '--json'],
      env,
    );
    assert.equal(installed.code, 0, installed.stderr);
    const install = JSON.parse(installed.stdout);
    assert.equal(install.realm_id, realmId);
    assert.equal(install.merchant_id, merchantId);
    assert.equal(install.flow_version, 1);
    assert.equal(install.fixtures, 3);
    assert.equal(install.demo_products, 4);

    // Found, below the approval threshold: search → details → cart → checkout handoff.
    const happy = await keel(
      ['engine', 'flows', 'run', 'shopping-assistant', '--message', 'I need a tent for two', '--json'],
      env,
    );
    assert.equal(happy.code, 0, happy.stderr);
    const events = lines(happy.stdout);
    const steps = events.filter((e) => String(e.type).startsWith('step.')).map((e) => e.data.node_id);
    assert.deepEqual(steps, [
      'terms',
      'search',
      'pick',
      'details',
      'cart',
      'high_value',
      'checkout',
      'summary',
      'handoff',
    ]);
    const done = events.at(-1)!;
    assert.equal(done.state, 'succeeded');
    assert.equal(done.action.type, 'CHECKOUT_HANDOFF');
    assert.match(done.action.data.checkout_id, /^chk_/);
    assert.match(done.action.data.handoff_reference, /^hof_/);
    assert.equal(done.action.data.total, '149.00');
    assert.match(done.action.content, /Trail tent for two/);

    // A high-value cart waits for an approval; --approve grants it and the run continues to the handoff.
    const approved = await keel(
      [
        'engine',
        'flows',
        'run',
        'shopping-assistant',
        '--message',
        'I need a tent for two',
        '--quantity',
        '2',
        '--approve',
        '--json',
      ],
      env,
    );
    assert.equal(approved.code, 0, approved.stderr);
    const approvedEvents = lines(approved.stdout);
    assert.ok(approvedEvents.some((e) => e.type === 'execution.waiting_for_approval'));
    assert.ok(approvedEvents.some((e) => e.decision === 'approve'));
    assert.equal(approvedEvents.at(-1)!.action.type, 'CHECKOUT_HANDOFF');
    assert.equal(approvedEvents.at(-1)!.action.data.total, '298.00');

    // Nothing found: a broader word, a second search, alternatives offered (text output this time).
    const none = await keel(
      ['engine', 'flows', 'run', 'shopping-assistant', '--message', 'a unicorn saddle please'],
      env,
    );
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, /step\.done +broaden +ai/);
    assert.match(none.stdout, /OFFER_PRODUCT_ALTERNATIVES: Nothing matched exactly/);

    // A re-install finds what it created: same flow and agent, still version 1 (the config did not change).
    const again = await keel(['engine', 'flows', 'install', 'shopping-assistant', '--json'], env);
    assert.equal(again.code, 0, again.stderr);
    const second = JSON.parse(again.stdout);
    assert.equal(second.flow_id, install.flow_id);
    assert.equal(second.agent_id, install.agent_id);
    assert.equal(second.flow_version, 1);
  });

  test('the scripted model answers each step of the assistant by rule', () => {
    const decide = 'Does one match?\nChoose exactly one of these keys:\n- match: …';
    assert.deepEqual(JSON.parse(scriptedAnswer(decide, JSON.stringify({ products: ['Tent'] }))), {
      choice: 'match',
      confidence: 0.9,
    });
    assert.equal(JSON.parse(scriptedAnswer(decide, JSON.stringify({ products: [] }))).choice, 'none');
    assert.equal(scriptedAnswer('Extract the product to search for …', 'I need a tent for two'), 'tent');
    assert.equal(scriptedAnswer('Reply with one broader search word only.', 'a unicorn saddle please'), 'saddle');
  });
});
