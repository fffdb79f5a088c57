// The shipped example flow set (issue 13 item 6), end to end through the `keel` CLI (in-process, `runKeel`) on the
// embedded default (SQLite in KEEL_DATA_DIR): bootstrap → install → run on the scripted local model the command starts,
// and `flows approve` deciding an execution that waits for an approval.
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

  test('flows approve decides a waiting execution from the CLI: approve, deny with a reason, clear refusals', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-flows-approve-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const base = { KEEL_DATA_DIR: dir, LOG_LEVEL: 'error' };
    const boot = JSON.parse((await keel(['engine', 'bootstrap', '--json'], base)).stdout);
    const env = { ...base, ENGINE_ACCESS_KEY: boot.accessKey, ENGINE_SECRET_KEY: boot.secretKey };
    const install = await keel(['engine', 'flows', 'install', 'shopping-assistant', '--demo-products', '--json'], env);
    assert.equal(install.code, 0, install.stderr);
    const highValue = ['engine', 'flows', 'run', 'shopping-assistant', '--message', 'I need a tent for two'];
    /** A run that stops waiting for the approval: its execution and approval ids, and the printed command. */
    const waitingRun = async () => {
      const ran = await keel([...highValue, '--quantity', '2'], env);
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.stdout, /waiting for approval apr_[0-9a-f]{24}: keel engine flows approve [0-9a-f-]{36}/);
      const [, approvalId, executionId] =
        /waiting for approval (apr_[0-9a-f]{24}): keel engine flows approve (\S+)/.exec(ran.stdout)!;
      return { approvalId: approvalId!, executionId: executionId! };
    };

    // Without --approval: the only pending approval is approved; the execution continues here to the handoff.
    const first = await waitingRun();
    const approved = await keel(['engine', 'flows', 'approve', first.executionId, '--json'], env);
    assert.equal(approved.code, 0, approved.stderr);
    const events = lines(approved.stdout);
    assert.deepEqual(events[0], { decision: 'approve', approval_id: first.approvalId });
    assert.ok(events.some((e) => e.type === 'approval.approved'));
    assert.ok(!events.some((e) => e.type === 'execution.waiting_for_approval'), 'earlier steps are not printed again');
    assert.equal(events.at(-1)!.state, 'succeeded');
    assert.equal(events.at(-1)!.action.type, 'CHECKOUT_HANDOFF');
    assert.equal(events.at(-1)!.action.data.total, '298.00');

    // Decided: nothing is pending any more.
    const again = await keel(['engine', 'flows', 'approve', first.executionId], env);
    assert.equal(again.code, 5, 'a refusal (409)');
    assert.match(again.stderr, /waits for no approval \(state succeeded\)/);

    // --deny with --approval and --reason: the denial is stored with its reason and the flow takes on_deny.
    const second = await waitingRun();
    const wrong = await keel(
      ['engine', 'flows', 'approve', second.executionId, '--approval', `apr_${'0'.repeat(24)}`],
      env,
    );
    assert.equal(wrong.code, 5);
    assert.match(wrong.stderr, new RegExp(`does not wait for approval apr_0{24} \\(pending: ${second.approvalId}\\)`));
    const denied = await keel(
      [
        'engine',
        'flows',
        'approve',
        second.executionId,
        '--approval',
        second.approvalId,
        '--deny',
        '--reason',
        'Over the monthly budget',
        '--json',
      ],
      env,
    );
    assert.equal(denied.code, 0, denied.stderr);
    const deniedEvents = lines(denied.stdout);
    assert.deepEqual(deniedEvents[0], { decision: 'deny', approval_id: second.approvalId });
    const denial = deniedEvents.find((e) => e.type === 'approval.denied');
    assert.equal(denial?.data.reason, 'Over the monthly budget', 'the reason goes with the decision');
    assert.equal(deniedEvents.at(-1)!.state, 'succeeded');
    assert.notEqual(deniedEvents.at(-1)!.action.type, 'CHECKOUT_HANDOFF', 'denied: the flow takes on_deny');
    const decided = await keel(['engine', 'flows', 'approve', second.executionId], env);
    assert.equal(decided.code, 5, 'a denied approval is decided too');

    // Usage errors: no execution, a malformed approval id, an unknown execution.
    const none = await keel(['engine', 'flows', 'approve'], env);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /name one execution/);
    const malformed = await keel(['engine', 'flows', 'approve', second.executionId, '--approval', 'x'], env);
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /--approval is an approval id/);
    const unknown = await keel(['engine', 'flows', 'approve', '01a21852-2d33-7e44-8f55-a66b77c88d01'], env);
    assert.equal(unknown.code, 5);
    assert.match(unknown.stderr, /execution 01a21852-2d33-7e44-8f55-a66b77c88d01 failed \(404 RUNTIME_NOT_FOUND\)/);
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
