import { type App, sendIdempotent } from '@keel/core';
import { type Static, type TObject, Type } from 'typebox';
import { IdempotencyHeaders } from '../http/schemas.ts';
import { principalOf } from '../identity/runtime-auth.ts';
import { ACTION_TYPES } from '../runtime/actions.ts';
import {
  component,
  IdParams,
  JsonRecord,
  NullableTimestamp,
  OneOf,
  PageQuery,
  page,
  ref,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
  Uuid,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { ALLOWLIST_SCOPES, type AllowlistScope } from './governance-enforcement.ts';
import {
  createDataset,
  type DatasetInput,
  getEvaluationRun,
  MAX_CASES,
  MAX_RUN_MS,
  type RunInput,
  runEvaluation,
} from './governance-evaluation.ts';
import {
  activatePolicy,
  createPolicy,
  createRecord,
  decideAllowlist,
  getSnapshot,
  listSupportAccess,
  type PolicyInput,
  putQuota,
  type RecordKind,
  requestAllowlist,
  SNAPSHOT_LIMIT,
} from './governance-service.ts';

const Name = Type.String({ minLength: 1, maxLength: 120 });
const Label = Type.String({ minLength: 1, maxLength: 200 });
const Text = Type.String({ minLength: 1, maxLength: 2000 });
const RealmField = { realm_id: Type.Optional(Uuid({ description: "Must be the token's realm when sent" })) };
const NameList = (description: string) =>
  Type.Union(
    [Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 200, uniqueItems: true }), Type.Null()],
    { description },
  );
const Decimal = Type.String({ pattern: '^[0-9]{1,12}(\\.[0-9]{1,6})?$', description: 'Exact decimal, up to 6 places' });

export const Rules = Type.Object(
  {
    allowed_actions: Type.Optional(
      Type.Union([Type.Array(OneOf(ACTION_TYPES), { maxItems: ACTION_TYPES.length, uniqueItems: true }), Type.Null()], {
        description:
          'Normalized actions a turn may answer with; another one becomes an `ERROR` action (code POLICY_ACTION_BLOCKED, status failed). Null or omitted: all.',
      }),
    ),
    allowed_tools: Type.Optional(
      NameList(
        'Tool names that may be called (REST tool execution and flow tool steps), plus approved `tool` allowlist requests; another tool is a 403 GOVERNANCE_POLICY_DENIED (a failed step in a flow). Null or omitted: every enabled tool.',
      ),
    ),
    allowed_provider_types: Type.Optional(
      NameList(
        'Provider types that may serve turns, plus approved `provider_type` allowlist requests; another type is a 403 GOVERNANCE_POLICY_DENIED. Null or omitted: all.',
      ),
    ),
    data_handling: Type.Optional(
      OneOf(['standard', 'no_retention'], {
        default: 'standard',
        description:
          '`no_retention`: turns of every agent store no message text and only providers with `settings.zero_data_retention` serve (409 RUNTIME_AGENT_NOT_READY otherwise).',
      }),
    ),
  },
  { additionalProperties: false },
);

const PolicySchema = component(
  'RtGovernancePolicy',
  Type.Object({
    id: Type.String(),
    realm_id: Type.String(),
    version: Type.Integer(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    rules: Type.Object({
      allowed_actions: Type.Union([Type.Array(Type.String()), Type.Null()]),
      allowed_tools: Type.Union([Type.Array(Type.String()), Type.Null()]),
      allowed_provider_types: Type.Union([Type.Array(Type.String()), Type.Null()]),
      data_handling: Type.String(),
    }),
    status: Type.String({ description: 'draft, active or superseded' }),
    created_by: Type.String(),
    created_at: Timestamp,
    activated_by: Type.Union([Type.String(), Type.Null()]),
    activated_at: NullableTimestamp,
  }),
);

const AllowlistSchema = component(
  'RtGovernanceAllowlistRequest',
  Type.Object({
    id: Type.String(),
    realm_id: Type.String(),
    scope: Type.String(),
    value: Type.String(),
    reason: Type.String(),
    status: Type.String({ description: 'pending, approved or rejected' }),
    requested_by: Type.String(),
    created_at: Timestamp,
    decided_by: Type.Union([Type.String(), Type.Null()]),
    decided_at: NullableTimestamp,
    decision_note: Type.Union([Type.String(), Type.Null()]),
  }),
);

/** The writable limits of the realm quota policy (PUT /quotas and the configuration bundle). */
export const QuotaFields = {
  window_seconds: Type.Integer({ minimum: 1, maximum: 2_592_000 }),
  max_requests: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000 }), Type.Null()])),
  max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 }), Type.Null()])),
  max_cost: Type.Optional(Type.Union([Decimal, Type.Null()])),
  max_tool_calls: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000 }), Type.Null()])),
  notify_at_percent: Type.Optional(
    Type.Union([Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), { maxItems: 5 }), Type.Null()]),
  ),
};

const QuotaSchema = Type.Object({
  realm_id: Type.String(),
  window_seconds: Type.Integer(),
  max_requests: Type.Union([Type.Integer(), Type.Null()]),
  max_tokens: Type.Union([Type.Integer(), Type.Null()]),
  max_cost: Type.Union([Type.String(), Type.Null()]),
  max_tool_calls: Type.Union([Type.Integer(), Type.Null()]),
  notify_at_percent: Type.Array(Type.Integer(), {
    description: 'Percentages of each limit at which `usage.threshold_reached` is sent (ascending; empty: none)',
  }),
  updated_by: Type.String(),
  updated_at: Timestamp,
});

const RecordSchema = Type.Object(
  { id: Type.String(), realm_id: Type.String(), created_by: Type.String(), created_at: Timestamp },
  { additionalProperties: true },
);

const EvaluationCase = Type.Object(
  {
    input: Type.String({ minLength: 1, maxLength: 4000, description: 'The user message of the case' }),
    expected_action: Type.Optional(OneOf(ACTION_TYPES)),
    expected_contains: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 10 })),
    must_not_contain: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 10 })),
    tool_call: Type.Optional(
      Type.Object(
        {
          tool_name: Type.String({ minLength: 1, maxLength: 255 }),
          arguments: Type.Optional(JsonRecord({ maxProperties: 50 })),
        },
        { additionalProperties: false, description: 'Checked against the policy only: never executed' },
      ),
    ),
  },
  { additionalProperties: false },
);

const DatasetSchema = Type.Object({
  id: Type.String(),
  realm_id: Type.String(),
  name: Type.String(),
  kind: Type.String(),
  case_count: Type.Integer(),
  cases: Type.Array(JsonRecord()),
  approval: Type.Union([JsonRecord(), Type.Null()]),
  created_by: Type.String(),
  created_at: Timestamp,
});

const RunSchema = component(
  'RtGovernanceEvaluationRun',
  Type.Object({
    id: Type.String(),
    realm_id: Type.String(),
    dataset_id: Type.String(),
    mode: Type.String(),
    agent_id: Type.String(),
    policy_id: Type.Union([Type.String(), Type.Null()]),
    status: Type.String(),
    summary: JsonRecord(),
    results: Type.Array(JsonRecord(), { description: 'One outcome per case, in dataset order' }),
    created_by: Type.String(),
    created_at: Timestamp,
    completed_at: NullableTimestamp,
  }),
);

const ROLES =
  'Roles: the snapshot, policies, decisions, quotas, deployment profiles, support access and lawful requests need admin or owner; allowlist requests, synthetic datasets and evaluation runs developer or stronger (an approved_redacted dataset admin or owner). Every write records an audit entry.';

export function registerGovernanceRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['governance'], security: runtimeSecurity };
  const PolicyRef = ref<Static<typeof PolicySchema>>('RtGovernancePolicy');
  const AllowlistRef = ref<Static<typeof AllowlistSchema>>('RtGovernanceAllowlistRequest');
  const RunRef = ref<Static<typeof RunSchema>>('RtGovernanceEvaluationRun');
  const key = (request: { headers: Record<string, unknown> }) => request.headers['idempotency-key'];

  app.get(
    '/api/v1/governance',
    {
      schema: {
        ...base,
        summary: 'Governance snapshot',
        description: `Admin or owner. The realm's policies (with \`active_policy\`), allowlist requests, quota policy with the current window's usage, evaluation datasets (without cases) and runs (without per-case results), deployment profiles, support access (with \`status\`), lawful-request metadata and the audit trail: each list newest first, at most ${SNAPSHOT_LIMIT} entries (\`limit\`). ${ROLES}`,
        response: {
          200: Type.Object({
            realm_id: Type.String(),
            limit: Type.Integer(),
            active_policy: Type.Union([PolicyRef, Type.Null()]),
            policies: Type.Array(PolicyRef),
            allowlist: Type.Array(AllowlistRef),
            quota: Type.Union([
              Type.Object({
                ...QuotaSchema.properties,
                usage: Type.Object({
                  requests: Type.Integer(),
                  tokens: Type.Integer(),
                  cost: Type.String(),
                  tool_calls: Type.Integer(),
                  window_resets_at: Timestamp,
                }),
              }),
              Type.Null(),
            ]),
            datasets: Type.Array(JsonRecord()),
            evaluation_runs: Type.Array(JsonRecord()),
            deployments: Type.Array(RecordSchema),
            support_access: Type.Array(RecordSchema),
            lawful_requests: Type.Array(RecordSchema),
            audit: Type.Array(
              Type.Object({
                id: Type.String(),
                actor_id: Type.String(),
                action: Type.String(),
                target_type: Type.String(),
                target_id: Type.String(),
                details: JsonRecord(),
                created_at: Timestamp,
              }),
            ),
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) => getSnapshot(rt, principalOf(request)),
  );

  app.post(
    '/api/v1/governance/policies',
    {
      schema: {
        ...base,
        summary: 'Create a draft policy version',
        description: `Admin or owner. 201 with version n+1 of the realm's policy, status \`draft\` (rules never change afterwards: create a new version). Omitted rules allow everything. Send \`Idempotency-Key\` to make retries safe. ${ROLES}`,
        headers: IdempotencyHeaders,
        body: Type.Object(
          {
            ...RealmField,
            name: Name,
            description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
            rules: Type.Optional(Rules),
          },
          { additionalProperties: false },
        ),
        response: { 201: PolicyRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await createPolicy(rt, principalOf(request), request.body as PolicyInput, key(request)),
      ),
  );

  app.post(
    '/api/v1/governance/policies/:id/activate',
    {
      schema: {
        ...base,
        summary: 'Activate a policy version atomically',
        description:
          'Admin or owner. In one transaction the active version becomes `superseded` and this one `active` (a unique index keeps one active version per realm under races); a superseded version may be activated again (rollback). Every run and execution created afterwards pins this version (`pinned.policy`); executions created before keep theirs. 409 GOVERNANCE_POLICY_STATE when it is already active. Instances apply it within 5 s (at once on this one and, with Redis, on all).',
        headers: IdempotencyHeaders,
        params: IdParams,
        response: { 200: PolicyRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(request, reply, await activatePolicy(rt, principalOf(request), request.params.id, key(request))),
  );

  app.post(
    '/api/v1/governance/allowlist',
    {
      schema: {
        ...base,
        summary: 'Request an allowlist entry (maker)',
        description: `Developer or stronger. 201 with a \`pending\` request to add \`value\` to a policy allowlist: scope \`tool\` (a tool name, added to \`allowed_tools\`) or \`provider_type\` (added to \`allowed_provider_types\`). It applies only after another admin or owner approves it. ${ROLES}`,
        headers: IdempotencyHeaders,
        body: Type.Object(
          {
            ...RealmField,
            scope: OneOf(Object.keys(ALLOWLIST_SCOPES) as AllowlistScope[]),
            value: Type.String({ minLength: 1, maxLength: 255 }),
            reason: Text,
          },
          { additionalProperties: false },
        ),
        response: { 201: AllowlistRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(request, reply, await requestAllowlist(rt, principalOf(request), request.body, key(request))),
  );

  app.post(
    '/api/v1/governance/allowlist/:id/decision',
    {
      schema: {
        ...base,
        summary: 'Approve or reject an allowlist request (checker)',
        description:
          'Admin or owner, and never the maker: 403 GOVERNANCE_MAKER_CANNOT_DECIDE. A decided request is final: 409 GOVERNANCE_ALREADY_DECIDED. An approval applies to calls within 5 s on every instance.',
        headers: IdempotencyHeaders,
        params: IdParams,
        body: Type.Object(
          {
            decision: OneOf(['approve', 'reject']),
            note: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
          },
          { additionalProperties: false },
        ),
        response: { 200: AllowlistRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await decideAllowlist(rt, principalOf(request), request.params.id, request.body, key(request)),
      ),
  );

  app.put(
    '/api/v1/governance/quotas',
    {
      schema: {
        ...base,
        summary: 'Create or replace the realm quota policy',
        description:
          "Admin or owner. Fixed windows of `window_seconds` (aligned to the epoch). Counted: `max_requests` — chat and execute turns, queued and synchronous executions, evaluation runs (one each); `max_tool_calls` — every tool call (REST tool execution, flow tool steps); `max_tokens` and `max_cost` — input plus output tokens and cost of finished turns and of durable flow model steps (a run or a model step starts while any is left; cost in the providers' currency, compared exactly to 6 places). Over a limit: 429 GOVERNANCE_QUOTA_EXCEEDED with `Retry-After` (seconds to the window's end); in a durable flow execution the refused step calls nothing and the execution becomes `retryable_failure` with that code and `error.retry_at`. With REDIS_URL every instance shares the counters; without it (or while Redis is unreachable) each instance counts alone. Null or omitted limits are unlimited; at least one is required. `notify_at_percent` (up to 5 percentages, 1–100): when usage of a limited metric in a window crosses that share of its limit, the realm's runtime webhooks that select `usage.threshold_reached` receive it once per threshold, metric and window (`data`: metric, threshold_percent, limit, used, window_seconds, window_started_at, window_resets_at). PUT replaces the whole policy; instances apply it within 5 s.",
        body: Type.Object({ ...RealmField, ...QuotaFields }, { additionalProperties: false }),
        response: { 200: QuotaSchema, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => putQuota(rt, principalOf(request), request.body),
  );

  app.post(
    '/api/v1/governance/evaluation-datasets',
    {
      schema: {
        ...base,
        summary: 'Create an evaluation dataset',
        description: `Developer or stronger for \`synthetic\`; admin or owner for \`approved_redacted\` (production-derived data, redacted, with \`approval.reference\`; the caller is recorded as approver). 1 to ${MAX_CASES} cases. Every string of every case is checked with guard's detection engine in process: personal data is a 400 GOVERNANCE_RAW_PII naming the type and path (never the value) and nothing is stored. Send \`Idempotency-Key\` to make retries safe.`,
        headers: IdempotencyHeaders,
        body: Type.Object(
          {
            ...RealmField,
            name: Name,
            kind: OneOf(['synthetic', 'approved_redacted']),
            cases: Type.Array(EvaluationCase, { minItems: 1, maxItems: MAX_CASES }),
            approval: Type.Optional(
              Type.Object(
                { reference: Label, note: Type.Optional(Type.String({ maxLength: 2000 })) },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: DatasetSchema, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await createDataset(rt, principalOf(request), request.body as DatasetInput, key(request)),
      ),
  );

  app.post(
    '/api/v1/governance/evaluation-runs',
    {
      schema: {
        ...base,
        summary: 'Run and record a side-effect-free evaluation',
        description: `Developer or stronger. Answers every case of the dataset with the agent (its provider, active prompt and knowledge, the same path as a chat turn; 4 cases at a time, each within the agent's latency budget; a case not started within ${MAX_RUN_MS / 1000} s of the run is an \`error\` EVALUATION_DEADLINE) and stores the run with per-case outcomes (\`passed\`, \`failed\` with the reasons, \`error\` with the code). Side-effect free: no session, transcript, execution record or anonymous event is written and no tool is ever called (a case's \`tool_call\` is only checked against the policy, \`executed: false\`). Modes: \`offline\` judges under the active policy; \`shadow\` under the candidate version \`policy_id\` and reports, per case, whether the active and candidate decisions differ; \`adversarial\` also fails an answer that holds or asks for sensitive data. Counts as one request of the quota, and its tokens and cost. 201 with the run; each POST records a new run (no Idempotency-Key: the cases would be answered again).`,
        body: Type.Object(
          {
            ...RealmField,
            dataset_id: Uuid(),
            agent_id: Uuid(),
            mode: OneOf(['offline', 'shadow', 'adversarial']),
            policy_id: Type.Optional(Uuid({ description: 'Shadow runs: the candidate policy version' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: RunRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await runEvaluation(rt, principalOf(request), request.body as RunInput, undefined, request.id),
      ),
  );

  app.get(
    '/api/v1/governance/evaluation-runs/:id',
    {
      schema: {
        ...base,
        summary: 'Read an evaluation run with its per-case outcomes',
        description: 'Developer or stronger.',
        params: IdParams,
        response: { 200: RunRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getEvaluationRun(rt, principalOf(request), request.params.id),
  );

  /** A record route (deployment profile, support access, lawful request): validated body → `shape` → stored. */
  const recordRoute = <B extends TObject>(
    url: string,
    kind: RecordKind,
    doc: { summary: string; description: string },
    body: B,
    shape: (fields: Record<string, unknown>) => {
      data: Record<string, unknown>;
      expiresAt?: string;
      audit: Record<string, unknown>;
    },
  ) =>
    app.post(
      url,
      {
        schema: {
          ...base,
          ...doc,
          headers: IdempotencyHeaders,
          body,
          response: { 201: RecordSchema, ...runtimeErrors },
        },
        config: runtimeConfig,
      },
      async (request, reply) => {
        const { realm_id: _realm, ...fields } = request.body as Record<string, unknown>;
        return sendIdempotent(
          request,
          reply,
          await createRecord(rt, principalOf(request), kind, request.body as Record<string, unknown>, key(request), {
            ...shape(fields),
            operation: `POST ${url}`,
          }),
        );
      },
    );

  recordRoute(
    '/api/v1/governance/deployment-profiles',
    'deployment_profile',
    {
      summary: 'Record a deployment profile',
      description:
        'Admin or owner. Who owns a deployment and which data-handling controls apply to it; metadata only (strings with personal data are a 400 GOVERNANCE_RAW_PII). Send `Idempotency-Key` to make retries safe.',
    },
    Type.Object(
      {
        ...RealmField,
        name: Name,
        environment: OneOf(['production', 'staging', 'development', 'test']),
        owner: Label,
        region: Type.String({ minLength: 1, maxLength: 64 }),
        data_residency: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        data_handling: OneOf(['standard', 'no_retention']),
        retention_days: Type.Integer({ minimum: 0, maximum: 3650 }),
        controls: Type.Optional(
          Type.Array(Type.String({ minLength: 1, maxLength: 120 }), { maxItems: 50, uniqueItems: true }),
        ),
      },
      { additionalProperties: false },
    ),
    (fields) => ({
      data: { controls: [], data_residency: null, ...fields },
      audit: { name: fields.name, environment: fields.environment },
    }),
  );

  recordRoute(
    '/api/v1/governance/support-access',
    'support_access',
    {
      summary: 'Record customer-approved, time-bound support access',
      description:
        'Admin or owner: the realm (the customer) approves access by a named support engineer, for a reason and a scope, for `duration_minutes` (5 to 10,080; default 60) from now. The grant expires by itself: `status` is `active` until `expires_at`, then `expired` (computed at read time, nothing to revoke). Audited at creation; listed by `GET /api/v1/governance/support-access` and in the snapshot. Metadata only (no personal data: a 400 GOVERNANCE_RAW_PII). Send `Idempotency-Key` to make retries safe.',
    },
    Type.Object(
      {
        ...RealmField,
        support_engineer: Label,
        reason: Text,
        scope: Type.Array(
          OneOf(['configuration', 'executions', 'sessions_metadata', 'logs', 'tool_servers', 'governance']),
          { minItems: 1, maxItems: 6, uniqueItems: true },
        ),
        customer_approval: Type.Object(
          { approved_by: Label, reference: Type.Optional(Label) },
          { additionalProperties: false },
        ),
        duration_minutes: Type.Optional(Type.Integer({ minimum: 5, maximum: 10_080, default: 60 })),
      },
      { additionalProperties: false },
    ),
    ({ duration_minutes, ...fields }) => {
      const startsAt = rt.clock();
      const expiresAt = new Date(startsAt + ((duration_minutes as number | undefined) ?? 60) * 60_000).toISOString();
      return {
        data: { ...fields, starts_at: new Date(startsAt).toISOString(), expires_at: expiresAt },
        expiresAt,
        audit: { support_engineer: fields.support_engineer, scope: fields.scope, expires_at: expiresAt },
      };
    },
  );
  app.get(
    '/api/v1/governance/support-access',
    {
      schema: {
        ...base,
        summary: 'List support access grants',
        description: 'Admin or owner. Newest first; `status` filters on active (not yet expired) or expired.',
        querystring: Type.Object({ ...PageQuery, status: Type.Optional(OneOf(['active', 'expired'])) }),
        response: { 200: page(RecordSchema), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listSupportAccess(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );

  recordRoute(
    '/api/v1/governance/lawful-requests',
    'lawful_request',
    {
      summary: 'Record lawful-request metadata',
      description:
        'Admin or owner. Metadata of a request by an authority (who, where, what kind, which reference, dates, status, affected data categories) — never the content asked for or disclosed, and no personal data (a 400 GOVERNANCE_RAW_PII). Send `Idempotency-Key` to make retries safe.',
    },
    Type.Object(
      {
        ...RealmField,
        authority: Label,
        jurisdiction: Type.String({ pattern: '^[A-Z]{2}(-[A-Z0-9]{1,3})?$', description: 'ISO 3166 code' }),
        request_type: OneOf(['subpoena', 'court_order', 'warrant', 'preservation', 'emergency', 'other']),
        reference: Label,
        received_at: Type.String({ format: 'date-time' }),
        due_at: Type.Optional(Type.String({ format: 'date-time' })),
        status: OneOf(['received', 'under_review', 'disclosed', 'partially_disclosed', 'rejected', 'challenged']),
        data_categories: Type.Optional(
          Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 20, uniqueItems: true }),
        ),
      },
      { additionalProperties: false },
    ),
    (fields) => ({
      data: {
        due_at: null,
        data_categories: [],
        ...fields,
        received_at: new Date(String(fields.received_at)).toISOString(),
        ...(fields.due_at ? { due_at: new Date(String(fields.due_at)).toISOString() } : {}),
      },
      audit: { request_type: fields.request_type, jurisdiction: fields.jurisdiction, status: fields.status },
    }),
  );
}
