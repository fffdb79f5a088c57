import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { waitUntil } from '@keel/core/testing';
import { createExecutionWorker, type ExecutionWorker } from '../src/executions/execution-worker.ts';
import { createTriggerScheduler } from '../src/flows/flow-trigger-scheduler.ts';
import { fireDueSchedules } from '../src/flows/flow-trigger-service.ts';
import { publishedFlow } from './execution-helper.ts';
import { viewerToken } from './flow-routing-helper.ts';
import { type RuntimeUnderTest, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

const NODES = [
  {
    id: 'done',
    type: 'output',
    action: 'DATA_RESULT',
    data: { object: { order: { var: 'input.order' }, source: { var: 'input.source' } } },
  },
];
const CONTRACT = {
  input: {
    type: 'object',
    properties: { order: { type: 'string' }, source: { type: 'string' } },
    required: ['order'],
  },
};

for (const target of testDatabaseTargets()) {
  describe(`flow triggers (${target.dialect})`, () => {
    const shared = sharedRuntime(target);
    let worker: ExecutionWorker | undefined;
    after(async () => {
      await worker?.stop();
    });

    async function setup() {
      const engine = await shared.fresh();
      if (!worker) {
        worker = createExecutionWorker(engine.runtime, { concurrency: 4, leaseMs: 3000, pollMs: 50 });
        engine.runtime.extensions.executions = worker;
        worker.start();
      }
      const flow = await publishedFlow(engine, engine.a.token, `Orders ${Math.random()}`, NODES, {
        config: { contract: CONTRACT },
        input: { order: 'A-1' },
      });
      return { engine, flow, token: engine.a.token };
    }

    const triggers = (flowId: string) => `/api/v1/runtime/flows/${flowId}/triggers`;
    const executionsOf = async (engine: RuntimeUnderTest, flowId: string, token = engine.a.token) =>
      (await engine.call('GET', `/api/v1/runtime/executions?flow_id=${flowId}&limit=100`, { token })).body.data as {
        id: string;
        state: string;
        input: Record<string, unknown>;
      }[];

    test('create, list and delete; bad bodies, foreign realms and roles', async () => {
      const { engine, flow, token } = await setup();
      const created = await engine.call('POST', triggers(flow.id), {
        token,
        body: { kind: 'event', name: 'Order paid', event: 'order.paid', input: { source: 'shop' } },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.kind, 'event');
      assert.equal(created.body.next_run_at, null);
      const schedule = await engine.call('POST', triggers(flow.id), {
        token,
        body: { kind: 'schedule', name: 'Hourly', interval_seconds: 3600, input: { order: 'S-1' } },
      });
      assert.equal(schedule.status, 201);
      assert.ok(Date.parse(schedule.body.next_run_at) > Date.now() + 3500_000);

      const listed = await engine.call('GET', `${triggers(flow.id)}?limit=1`, { token });
      assert.equal(listed.body.data.length, 1);
      const rest = await engine.call('GET', `${triggers(flow.id)}?limit=1&cursor=${listed.body.next_cursor}`, {
        token,
      });
      assert.deepEqual(
        [...listed.body.data, ...rest.body.data].map((t: { id: string }) => t.id),
        [created.body.id, schedule.body.id],
      );
      assert.equal(rest.body.next_cursor, null);

      for (const [body, pattern] of [
        [{ kind: 'schedule', name: 'x' }, /interval_seconds/],
        [{ kind: 'event', name: 'x', interval_seconds: 60 }, /interval_seconds/],
        [{ kind: 'schedule', name: 'x', interval_seconds: 10 }, /interval_seconds/],
        [{ kind: 'event', name: 'x', start_at: new Date().toISOString() }, /start_at/],
        [{ kind: 'cron', name: 'x' }, /kind/],
      ] as const) {
        const bad = await engine.call('POST', triggers(flow.id), { token, body });
        assert.equal(bad.status, 400, JSON.stringify(bad.body));
        assert.match(bad.body.error.message, pattern);
      }
      const foreign = await engine.call('GET', triggers(flow.id), { token: engine.b.token });
      assert.equal(foreign.status, 404);
      const foreignFire = await engine.call('POST', `${triggers(flow.id)}/${created.body.id}/fire`, {
        token: engine.b.token,
        body: { event_id: 'e-1' },
      });
      assert.equal(foreignFire.status, 404);

      // Roles: a viewer reads triggers but cannot create, fire or delete them.
      const viewer = await viewerToken(engine, engine.a, `trigger-viewer-${Math.random().toString(36).slice(2, 8)}`);
      assert.equal((await engine.call('GET', triggers(flow.id), { token: viewer })).status, 200);
      const viewerCalls = [
        engine.call('POST', triggers(flow.id), { token: viewer, body: { kind: 'event', name: 'No' } }),
        engine.call('POST', `${triggers(flow.id)}/${created.body.id}/fire`, {
          token: viewer,
          body: { event_id: 'v-1' },
        }),
        engine.call('DELETE', `${triggers(flow.id)}/${created.body.id}`, { token: viewer }),
      ];
      for (const denied of await Promise.all(viewerCalls))
        assert.equal(denied.status, 403, JSON.stringify(denied.body));

      const deleted = await engine.call('DELETE', `${triggers(flow.id)}/${created.body.id}`, { token });
      assert.equal(deleted.status, 204);
      const gone = await engine.call('POST', `${triggers(flow.id)}/${created.body.id}/fire`, {
        token,
        body: { event_id: 'e-1' },
      });
      assert.equal(gone.status, 404);
    });

    test('an event id runs at most once, concurrent duplicate fires included', async () => {
      const { engine, flow, token } = await setup();
      const trigger = (
        await engine.call('POST', triggers(flow.id), {
          token,
          body: { kind: 'event', name: 'Order paid', input: { source: 'webhook' } },
        })
      ).body;
      const fire = (eventId: string, payload: Record<string, unknown> = { order: 'A-7' }) =>
        engine.call('POST', `${triggers(flow.id)}/${trigger.id}/fire`, { token, body: { event_id: eventId, payload } });

      const first = await fire('evt-1');
      assert.equal(first.status, 202, JSON.stringify(first.body));
      assert.equal(first.body.duplicate, false);
      assert.deepEqual(first.body.execution.input, { source: 'webhook', order: 'A-7' });
      const again = await fire('evt-1', { order: 'other' });
      assert.equal(again.status, 200);
      assert.equal(again.body.duplicate, true);
      assert.equal(again.body.execution_id, first.body.execution_id);

      const burst = await Promise.all(Array.from({ length: 12 }, () => fire('evt-burst')));
      assert.deepEqual(burst.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 202]);
      assert.equal(new Set(burst.map((r) => r.body.execution_id)).size, 1);

      await waitUntil(async () => {
        const all = await executionsOf(engine, flow.id);
        return all.length === 2 && all.every((e) => e.state === 'succeeded');
      }, 10_000);

      const invalid = await fire('evt-bad', { order: 42 });
      assert.equal(invalid.status, 400);
      assert.match(invalid.body.error.message, /input\.order/);
      const unfired = await fire('evt-bad', { order: 'fine now' });
      assert.equal(unfired.status, 202, 'a rejected fire records nothing');
    });

    test('fires of a schedule, an inactive trigger or an inactive flow are 409s', async () => {
      const { engine, flow, token } = await setup();
      const schedule = (
        await engine.call('POST', triggers(flow.id), {
          token,
          body: { kind: 'schedule', name: 'Hourly', interval_seconds: 3600, input: { order: 'S-1' } },
        })
      ).body;
      const asEvent = await engine.call('POST', `${triggers(flow.id)}/${schedule.id}/fire`, {
        token,
        body: { event_id: 'x' },
      });
      assert.equal(asEvent.status, 409);
      const paused = (
        await engine.call('POST', triggers(flow.id), {
          token,
          body: { kind: 'event', name: 'Paused', is_active: false, input: { order: 'P-1' } },
        })
      ).body;
      const pausedFire = await engine.call('POST', `${triggers(flow.id)}/${paused.id}/fire`, {
        token,
        body: { event_id: 'x' },
      });
      assert.equal(pausedFire.status, 409);
      const event = (
        await engine.call('POST', triggers(flow.id), {
          token,
          body: { kind: 'event', name: 'E', input: { order: 'E-1' } },
        })
      ).body;
      await engine.call('POST', `/api/v1/runtime/flows/${flow.id}/archive`, { token, body: {} });
      const archivedFire = await engine.call('POST', `${triggers(flow.id)}/${event.id}/fire`, {
        token,
        body: { event_id: 'x' },
      });
      assert.equal(archivedFire.status, 409);
      const afterArchive = await engine.call('POST', triggers(flow.id), {
        token,
        body: { kind: 'event', name: 'Late' },
      });
      assert.equal(afterArchive.status, 409);
    });

    test('a due schedule slot queues exactly one execution across concurrent instances, then the next slot', async () => {
      const { engine, flow, token } = await setup();
      const schedule = (
        await engine.call('POST', triggers(flow.id), {
          token,
          body: {
            kind: 'schedule',
            name: 'Every minute',
            interval_seconds: 60,
            start_at: new Date(Date.now() - 1000).toISOString(),
            input: { order: 'S-1' },
          },
        })
      ).body;
      // Five "instances" pass over the due schedules at once: one slot, one execution.
      await Promise.all(Array.from({ length: 5 }, () => fireDueSchedules(engine.runtime)));
      const once = (await executionsOf(engine, flow.id)).filter((e) => e.input.order === 'S-1');
      assert.equal(once.length, 1);
      const listed = (await engine.call('GET', triggers(flow.id), { token })).body.data[0];
      assert.equal(Date.parse(listed.next_run_at), Date.parse(schedule.next_run_at) + 60_000);

      // Nothing is due until the next slot; then exactly one more.
      await Promise.all(Array.from({ length: 3 }, () => fireDueSchedules(engine.runtime)));
      assert.equal((await executionsOf(engine, flow.id)).length, 1);
      engine.advance(61_000);
      await Promise.all(Array.from({ length: 3 }, () => fireDueSchedules(engine.runtime)));
      assert.equal((await executionsOf(engine, flow.id)).length, 2);
      // Missed slots (5 minutes without any instance) are coalesced into one run.
      engine.advance(5 * 60_000);
      await fireDueSchedules(engine.runtime);
      await fireDueSchedules(engine.runtime);
      assert.equal((await executionsOf(engine, flow.id)).length, 3);
    });

    test('cron schedules: bounded expressions, IANA zones, one execution per slot, next slot shown', async () => {
      const { engine, flow, token } = await setup();
      for (const [body, pattern] of [
        [{ cron: '* * * * * *' }, /seconds field is not supported/],
        [{ cron: '@secondly' }, /macros are/],
        [{ cron: 'H * * * *' }, /not a standard cron field/],
        [{ cron: '0 9 * *' }, /needs 5 fields/],
        [{ cron: '61 * * * *' }, /expected range 0-59/],
        [{ cron: '0 0 30 2 *' }, /day of month/],
        [{ cron: `0 0 * * * ${'1'.repeat(120)}` }, /cron/],
        [{ cron: '0 9 * * *', time_zone: 'Mars/Olympus_Mons' }, /not an IANA time zone/],
        [{ cron: '0 9 * * *', time_zone: '+02:00' }, /not an IANA time zone/],
        [{ cron: '0 9 * * *', interval_seconds: 3600 }, /either interval_seconds or cron/],
        [{ interval_seconds: 3600, time_zone: 'UTC' }, /time_zone is for cron/],
      ] as const) {
        const bad = await engine.call('POST', triggers(flow.id), {
          token,
          body: { kind: 'schedule', name: 'Bad', ...body },
        });
        assert.equal(bad.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(bad.body)}`);
        assert.match(bad.body.error.message, pattern);
      }
      const onEvent = await engine.call('POST', triggers(flow.id), {
        token,
        body: { kind: 'event', name: 'Bad', cron: '0 9 * * *' },
      });
      assert.equal(onEvent.status, 400);
      assert.match(onEvent.body.error.message, /cron is for schedule triggers/);

      // A weekday-morning schedule in New York: next_run_at is the next 09:00 there (a Monday–Friday).
      const morning = await engine.call('POST', triggers(flow.id), {
        token,
        body: {
          kind: 'schedule',
          name: 'Mornings',
          cron: '0 9 * * MON-FRI',
          time_zone: 'America/New_York',
          input: { order: 'M-1' },
        },
      });
      assert.equal(morning.status, 201, JSON.stringify(morning.body));
      assert.equal(morning.body.cron, '0 9 * * MON-FRI');
      assert.equal(morning.body.time_zone, 'America/New_York');
      assert.equal(morning.body.interval_seconds, null);
      const local = new Intl.DateTimeFormat('en-US', {
        timeZone: 'America/New_York',
        weekday: 'short',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }).format(new Date(morning.body.next_run_at));
      assert.match(local, /^(Mon|Tue|Wed|Thu|Fri),? 09:00$/);
      const ahead = Date.parse(morning.body.next_run_at) - engine.runtime.clock();
      assert.ok(ahead > 0 && ahead <= 4 * 24 * 3600_000, `next slot ${morning.body.next_run_at}`);
      // Macros normalize; the zone defaults to UTC.
      const hourly = await engine.call('POST', triggers(flow.id), {
        token,
        body: { kind: 'schedule', name: 'Hourly', cron: '@HOURLY', input: { order: 'H-1' }, is_active: false },
      });
      assert.equal(hourly.status, 201);
      assert.deepEqual([hourly.body.cron, hourly.body.time_zone], ['@hourly', 'UTC']);
      assert.equal(new Date(hourly.body.next_run_at).getUTCMinutes(), 0);

      // Every five minutes (UTC): due slots fire once across concurrent instances, then move to the next mark.
      const five = (
        await engine.call('POST', triggers(flow.id), {
          token,
          body: { kind: 'schedule', name: 'Five', cron: '*/5 * * * *', input: { order: 'C-1' } },
        })
      ).body;
      const firstSlot = Date.parse(five.next_run_at);
      assert.equal(firstSlot % 300_000, 0);
      assert.ok(firstSlot > engine.runtime.clock() && firstSlot <= engine.runtime.clock() + 300_000);
      let reader = token;
      const fiveRuns = async () =>
        (await executionsOf(engine, flow.id, reader)).filter((e) => e.input.order === 'C-1').length;
      await Promise.all(Array.from({ length: 3 }, () => fireDueSchedules(engine.runtime)));
      assert.equal(await fiveRuns(), 0, 'not due yet');
      engine.advance(firstSlot - engine.runtime.clock() + 1000);
      await Promise.all(Array.from({ length: 5 }, () => fireDueSchedules(engine.runtime)));
      assert.equal(await fiveRuns(), 1);
      const listed = async () =>
        (await engine.call('GET', `${triggers(flow.id)}?limit=10`, { token: reader })).body.data.find(
          (t: { id: string }) => t.id === five.id,
        );
      assert.equal(Date.parse((await listed()).next_run_at), firstSlot + 300_000);
      // Twelve minutes without any instance: the missed slots are coalesced into one run, the next slot is after now.
      engine.advance(12 * 60_000);
      reader = (await engine.exchange(engine.a.accessKey, engine.a.secretKey)).body.access_token;
      await Promise.all(Array.from({ length: 3 }, () => fireDueSchedules(engine.runtime)));
      assert.equal(await fiveRuns(), 2);
      const next = Date.parse((await listed()).next_run_at);
      assert.ok(next > engine.runtime.clock() && next <= engine.runtime.clock() + 300_000 && next % 300_000 === 0);
    });

    test('schedules fire on time with the scheduler loop running in two instances', async () => {
      const { engine, flow, token } = await setup();
      await engine.call('POST', triggers(flow.id), {
        token,
        body: {
          kind: 'schedule',
          name: 'Soon',
          interval_seconds: 3600,
          start_at: new Date(engine.runtime.clock() + 1500).toISOString(),
          input: { order: 'T-1' },
        },
      });
      const loops = [0, 1].map(() => createTriggerScheduler(engine.runtime, { pollMs: 100 }));
      for (const loop of loops) loop.start();
      try {
        const started = Date.now();
        await waitUntil(async () => (await executionsOf(engine, flow.id)).length > 0, 10_000);
        assert.ok(Date.now() - started < 4000, 'fired within a few hundred ms of its slot');
        await new Promise((resolve) => setTimeout(resolve, 500));
        assert.equal((await executionsOf(engine, flow.id)).length, 1);
        assert.equal(loops[0]!.check(), true);
      } finally {
        for (const loop of loops) await loop.stop();
      }
    });
  });
}
