import type { App } from '@keel/core';
import { Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  IdParams,
  JsonRecord,
  NullableTimestamp,
  OneOf,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
  Uuid,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { FlowPageQuery } from './flow-api-schemas.ts';
import { DEFAULT_TIME_ZONE, MAX_CRON_LENGTH, MAX_TIME_ZONE_LENGTH } from './flow-cron.ts';
import {
  createTrigger,
  deleteTrigger,
  fireTrigger,
  listTriggers,
  MAX_INTERVAL_SECONDS,
  MAX_TRIGGERS_PER_FLOW,
  MIN_INTERVAL_SECONDS,
} from './flow-trigger-service.ts';

const Name = Type.String({ minLength: 1, maxLength: 120 });
const EventName = Type.String({ minLength: 1, maxLength: 120, pattern: '^[A-Za-z0-9._:-]+$' });
const Input = JsonRecord({
  maxProperties: 50,
  description: "Input of every execution (checked against the flow's input contract when fired)",
});

const Trigger = Type.Object({
  id: Uuid(),
  flow_id: Uuid(),
  kind: OneOf(['event', 'schedule']),
  name: Type.String(),
  event: Type.Union([Type.String(), Type.Null()]),
  interval_seconds: Type.Union([Type.Integer(), Type.Null()]),
  cron: Type.Union([Type.String(), Type.Null()], { description: 'Cron schedules: the 5-field expression' }),
  time_zone: Type.Union([Type.String(), Type.Null()], { description: 'Cron schedules: the IANA time zone' }),
  agent_id: Type.Union([Type.String(), Type.Null()]),
  input: JsonRecord(),
  is_active: Type.Boolean(),
  next_run_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const TriggerBody = Type.Object(
  {
    kind: OneOf(['event', 'schedule']),
    name: Name,
    event: Type.Optional(EventName),
    interval_seconds: Type.Optional(
      Type.Integer({
        minimum: MIN_INTERVAL_SECONDS,
        maximum: MAX_INTERVAL_SECONDS,
        description: 'schedule: seconds between slots',
      }),
    ),
    cron: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_CRON_LENGTH,
        description:
          'schedule (instead of interval_seconds): a standard 5-field cron expression (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly',
      }),
    ),
    time_zone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_TIME_ZONE_LENGTH,
        description: `cron schedules: the IANA time zone the expression is read in (default ${DEFAULT_TIME_ZONE})`,
      }),
    ),
    start_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'schedule: the first slot (interval: default now + interval; cron: the first cron time at or after it, default after now)',
      }),
    ),
    agent_id: Type.Optional(Uuid({ description: 'Agent the executions run as (its settings and provider)' })),
    input: Type.Optional(Input),
    is_active: Type.Optional(Type.Boolean({ default: true })),
  },
  {
    additionalProperties: false,
    examples: [
      { kind: 'event', name: 'Order paid', event: 'order.paid', input: { channel: 'webhook' } },
      { kind: 'schedule', name: 'Nightly digest', interval_seconds: 86400 },
      { kind: 'schedule', name: 'Weekday mornings', cron: '0 9 * * 1-5', time_zone: 'Europe/Paris' },
    ],
  },
);

const FireBody = Type.Object(
  {
    event_id: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7E]+$',
      description:
        'Stable id of the event: a fire with an id already fired runs nothing and answers the first execution',
    }),
    payload: Type.Optional(JsonRecord({ maxProperties: 50, description: "Merged over the trigger's input" })),
  },
  { additionalProperties: false },
);

const FireResult = Type.Object({
  trigger_id: Uuid(),
  event_id: Type.String(),
  duplicate: Type.Boolean({ description: 'true: this event id was fired before; nothing new runs' }),
  execution_id: Uuid(),
  execution: Type.Union([JsonRecord({ description: 'The execution (as GET /runtime/executions/{id})' }), Type.Null()]),
});

const TriggerParams = Type.Object({ id: Uuid(), triggerId: Uuid() });

const TRIGGERS = `Event triggers run the flow when fired with a stable \`event_id\` (at most once per id, concurrent fires included: the first queues an execution of the active version and answers 202, every later fire of the id answers 200 \`duplicate: true\` with that execution). Schedule triggers fire every \`interval_seconds\` (${MIN_INTERVAL_SECONDS}–${MAX_INTERVAL_SECONDS}) from \`start_at\`, or at the times of a standard 5-field \`cron\` expression (at most ${MAX_CRON_LENGTH} characters; names, \`L\`, \`#\` and the @hourly … @yearly macros accepted; a seconds field, hashed \`H\` fields and expressions that never fire are a 400, so a schedule fires at most once a minute) read in the IANA \`time_zone\` (default ${DEFAULT_TIME_ZONE}; daylight-saving changes follow the zone); \`next_run_at\` shows the next slot. Every engine instance runs the schedule loop (about once a second), and each due slot is claimed in the database, so one instance or many queue exactly one execution per slot; slots missed while no instance ran are coalesced into one run; a slot whose flow cannot run (inactive, archived, input rejected by the contract) is skipped and logged. At most ${MAX_TRIGGERS_PER_FLOW} triggers per flow. Creating and deleting needs developer or above; firing needs operator or above (the bearer token authenticates the fire); a flow or trigger of another realm is a 404 like an unknown one.`;

export function registerFlowTriggerRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['flows'], security: runtimeSecurity };
  app.get(
    '/api/v1/runtime/flows/:id/triggers',
    {
      schema: {
        ...base,
        summary: 'List event and schedule triggers',
        description: `Oldest first. ${TRIGGERS}`,
        params: IdParams,
        querystring: Type.Object(FlowPageQuery),
        response: {
          200: Type.Object({ data: Type.Array(Trigger), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listTriggers(rt, principalOf(request), request.params.id, {
        limit: request.query.limit ?? 20,
        cursor: request.query.cursor,
      }),
  );
  app.post(
    '/api/v1/runtime/flows/:id/triggers',
    {
      schema: {
        ...base,
        summary: 'Create an event or schedule trigger',
        description: `\`event\` names the event (event triggers; optional); a schedule takes exactly one of \`interval_seconds\` and \`cron\` (\`time_zone\` only with \`cron\`); all three and \`start_at\` are refused for events. An archived flow takes no triggers (409). ${TRIGGERS}`,
        params: IdParams,
        body: TriggerBody,
        response: { 201: Trigger, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      reply.status(201).send(await createTrigger(rt, principalOf(request), request.params.id, request.body)),
  );
  app.post(
    '/api/v1/runtime/flows/:id/triggers/:triggerId/fire',
    {
      schema: {
        ...base,
        summary: 'Fire an event trigger with a stable event id',
        description: `409 for a schedule trigger, an inactive trigger or a flow that is not active; 400 when the input does not satisfy the flow's contract. ${TRIGGERS}`,
        params: TriggerParams,
        body: FireBody,
        response: { 200: FireResult, 202: FireResult, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      const fired = await fireTrigger(
        rt,
        principalOf(request),
        request.params.id,
        request.params.triggerId,
        request.body,
      );
      return reply.status(fired.statusCode).send(fired.body);
    },
  );
  app.delete(
    '/api/v1/runtime/flows/:id/triggers/:triggerId',
    {
      schema: {
        ...base,
        summary: 'Delete a trigger',
        description: `Its fire records go with it (an event id fired before can fire again on a new trigger). ${TRIGGERS}`,
        params: TriggerParams,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await deleteTrigger(rt, principalOf(request), request.params.id, request.params.triggerId);
      return reply.status(204).send(null);
    },
  );
}
