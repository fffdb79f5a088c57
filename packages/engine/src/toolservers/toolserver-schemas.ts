// Response schemas of the tool-server and tool-routing routes, field by field (the OpenAPI document describes every
// field; fastify serializes with them). Only what is free-form by nature stays an open object: JSON Schemas and
// annotations a server published, negotiated capabilities, tool results and resource contents.
import { type TSchema, Type } from 'typebox';
import { JsonRecord, NullableTimestamp, OneOf, page, Timestamp, Uuid } from '../runtime/http-schemas.ts';
import { FILTER_REASONS, ROUTE_STRATEGIES } from './routing/index.ts';

/**
 * The services build these answers as plain records; the schema documents and serializes every field, and the
 * handler's static type stays a record (as with the open schemas before).
 */
const described = (schema: TSchema) => Type.Unsafe<Record<string, unknown>>(schema);

const Nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description ? { description } : {});
const Str = (description?: string) => Type.String(description ? { description } : {});
const Int = (description?: string) => Type.Integer(description ? { description } : {});
const Code = Str('A stable error code (TOOL_SERVER_UNREACHABLE, TOOL_SERVER_AUTH_FAILED, TOOL_TIMEOUT, …)');
const Failure = Type.Object({ code: Code, message: Str('Secret-free') });

const AuthProfileView = Type.Object(
  {
    type: OneOf(['none', 'api_key', 'bearer', 'oauth_client_credentials', 'mtls', 'credential_ref'] as const),
    header_name: Type.Optional(Str('api_key / credential_ref: the header carrying the secret')),
    token_url: Type.Optional(Str('oauth_client_credentials')),
    client_id: Type.Optional(Str('oauth_client_credentials')),
    scope: Type.Optional(Str('oauth_client_credentials')),
    credential_ref: Type.Optional(Str('credential_ref: the name read from KEEL_TOOL_CREDENTIAL_<name>')),
  },
  { description: 'The secret-free authentication profile (the secret is the active credential version)' },
);

const Profile = Type.Object({
  transport: OneOf(['streamable_http', 'sse'] as const),
  auth: AuthProfileView,
  egress: Type.Object({
    allowed_hosts: Type.Array(Str(), { description: 'Exact names or `*.suffix`; empty = any public host' }),
  }),
  region: Nullable(Str()),
  data_handling: Type.Array(Str()),
  estimated_cost: Nullable(Type.Number(), 'Picos per call (routing cost score)'),
});

const ServerFields = {
  id: Uuid(),
  realm_id: Uuid(),
  name: Str(),
  url: Str(),
  type: OneOf(['http', 'sse'] as const),
  description: Nullable(Str()),
  is_active: Type.Boolean(),
  capabilities: Type.Array(Str()),
  api_key_set: Type.Boolean({ description: 'A credential is active (never shown)' }),
  active_credential_version: Nullable(Int()),
  profile: Profile,
  health: Type.Object({
    last_probe_at: NullableTimestamp,
    last_probe_ok: Nullable(Type.Boolean()),
    last_probe_latency_ms: Nullable(Int()),
    last_error_code: Nullable(Str()),
    auth_failures: Int('Authentication failures recorded by tests, probes and calls'),
    last_auth_failure_at: NullableTimestamp,
  }),
  negotiated: Nullable(
    JsonRecord({ description: '`{protocol_version, server_info, capabilities}` of the last successful probe' }),
  ),
  discovered_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
};
export const ServerView = described(Type.Object(ServerFields));
export const ServerPage = described(page(ServerView));

const DiscoverySummary = Type.Object({
  added: Int(),
  changed: Int(),
  unchanged: Int(),
  removed: Int(),
  enabled: Int('Tools callable after this discovery'),
  awaiting_review: Int(),
  failing: Int('Tools whose contract fails'),
});
const ContractReport = Type.Object({
  name: Str(),
  status: OneOf(['passing', 'failing'] as const),
  problems: Type.Array(Str()),
  change: OneOf(['added', 'changed', 'unchanged', 'removed'] as const),
});
export const DiscoveryView = described(
  Type.Object({
    ok: Type.Literal(true),
    server_id: Uuid(),
    discovered_at: Timestamp,
    tools: DiscoverySummary,
    resources: Int(),
    resource_templates: Int(),
    contracts: Type.Array(ContractReport),
  }),
);
export const RegisteredView = described(
  Type.Object({
    ...ServerFields,
    discovery: Nullable(
      Type.Union([DiscoveryView, Type.Object({ ok: Type.Literal(false), code: Code, message: Str() })]),
      'The auto_discover outcome (null without auto_discover)',
    ),
  }),
);
export const ContractTestView = described(
  Type.Object({
    server_id: Uuid(),
    checked_at: Timestamp,
    passed: Type.Boolean(),
    total: Int(),
    failing: Int(),
    results: Type.Array(ContractReport),
  }),
);

export const TestView = described(
  Type.Object({
    ok: Type.Boolean(),
    server_id: Uuid(),
    latency_ms: Int(),
    tested_at: Timestamp,
    authenticated: Type.Boolean({ description: 'False when the server refused the credential' }),
    error: Type.Optional(Failure),
  }),
);

export const ProbeView = described(
  Type.Object({
    ok: Type.Boolean(),
    server_id: Uuid(),
    latency_ms: Int(),
    probed_at: Timestamp,
    negotiated: Nullable(JsonRecord({ description: '`{protocol_version, server_info, capabilities}`' })),
    error: Nullable(Failure),
    health: Type.Object({
      status: OneOf(['healthy', 'degraded', 'unhealthy', 'unknown'] as const),
      error_rate: Type.Number({ description: 'Decayed failures / samples (0 with none)' }),
      latency_ms: Type.Optional(Type.Number({ description: 'Decayed mean latency of successes; absent with none' })),
      samples: Type.Number({ description: 'Decayed observation weight' }),
    }),
  }),
);

const CredentialView = Type.Object({
  version: Int(),
  status: OneOf(['active', 'previous', 'inactive'] as const),
  secret_set: Type.Boolean(),
  created_at: Timestamp,
  tested_at: NullableTimestamp,
  test_ok: Nullable(Type.Boolean()),
  test_error_code: Nullable(Str()),
  activated_at: NullableTimestamp,
  overlap_until: NullableTimestamp,
});
export const CredentialsView = described(
  Type.Object({
    server_id: Uuid(),
    active_version: Nullable(Int()),
    overlap_window_seconds: Int(),
    data: Type.Array(CredentialView),
  }),
);

export const ToolView = described(
  Type.Object({
    id: Uuid(),
    server_id: Uuid(),
    name: Str(),
    title: Nullable(Str()),
    description: Nullable(Str()),
    input_schema: JsonRecord({
      description: 'The JSON Schema the server published (arguments are checked against it)',
    }),
    output_schema: Nullable(JsonRecord()),
    annotations: Nullable(JsonRecord({ description: 'MCP tool annotations as published' })),
    impact: Type.Array(OneOf(['read', 'write', 'destructive', 'financial', 'external_message', 'sensitive'] as const)),
    read_only: Type.Boolean(),
    contract: Type.Object({
      status: OneOf(['passing', 'failing'] as const),
      hash: Str('Hash of description, schemas and annotations'),
      problems: Type.Array(Str()),
      checked_at: Timestamp,
    }),
    review_status: OneOf(['disabled', 'approved', 'rejected', 'quarantined'] as const),
    review_required: Type.Boolean(),
    enabled: Type.Boolean({ description: 'Callable: listed, contract passing and approved' }),
    review_note: Nullable(Str()),
    reviewed_by: Nullable(Str()),
    reviewed_at: NullableTimestamp,
    discovered_at: Timestamp,
    updated_at: Timestamp,
  }),
);
export const ToolPage = described(page(ToolView));

export const ResourcePage = described(
  page(
    Type.Object({
      id: Uuid(),
      kind: OneOf(['resource', 'template'] as const),
      uri: Type.Optional(Str('Resources')),
      uri_template: Type.Optional(Str('Resource templates (RFC 6570)')),
      name: Str(),
      description: Nullable(Str()),
      mime_type: Nullable(Str()),
      discovered_at: Timestamp,
    }),
  ),
);
export const ResourceReadView = described(
  Type.Object({
    server_id: Uuid(),
    uri: Str(),
    contents: Type.Array(JsonRecord({ description: 'MCP resource contents (`uri`, `mimeType`, `text` or `blob`)' })),
  }),
);

export const ProposalView = described(
  Type.Object({
    id: Uuid(),
    server_id: Uuid(),
    name: Str(),
    description: Str(),
    input_schema: JsonRecord(),
    source: JsonRecord({ description: '`{kind, uri}` or `{kind, uri_template}` it was generated from' }),
    status: OneOf(['proposed', 'approved', 'rejected'] as const),
    enabled: Type.Boolean({ description: 'Always false: a proposal never enables anything' }),
    review_note: Nullable(Str()),
    reviewed_by: Nullable(Str()),
    reviewed_at: NullableTimestamp,
    created_at: Timestamp,
  }),
);
export const ProposalPage = described(page(ProposalView));
export const GeneratedView = described(
  Type.Object({ server_id: Uuid(), generated: Int(), data: Type.Array(ProposalView) }),
);

// Routing and execution --------------------------------------------------------------------------------------------

const ToolResult = Type.Object({
  content: Type.Array(JsonRecord({ description: 'MCP content blocks as the server answered them' })),
  structured_content: Type.Optional(JsonRecord()),
  is_error: Type.Optional(Type.Boolean({ description: 'The tool answered an error result' })),
});
const Attempt = Type.Object({
  server_id: Uuid(),
  attempt: Int(),
  ok: Type.Boolean(),
  code: Type.Optional(Str()),
  duration_ms: Type.Number(),
  backoff_ms: Type.Optional(Type.Number()),
});
const CallFailure = Type.Object({ code: Code, message: Str(), retryable: Type.Boolean() });

export const ExecutionView = described(
  Type.Object({
    mcp_server_id: Uuid({ description: 'The server that answered' }),
    tool_name: Str(),
    result: ToolResult,
    trace_id: Str('The x-request-id: GET /routing/trace/{traceId}'),
    attempts: Type.Array(Attempt),
  }),
);

export const ParallelView = described(
  Type.Object({
    trace_id: Str(),
    succeeded: Int(),
    failed: Int(),
    results: Type.Array(
      Type.Object({
        ok: Type.Boolean(),
        tool_name: Str(),
        mcp_server_id: Nullable(Uuid(), 'null when refused before any call'),
        result: Type.Optional(ToolResult),
        error: Type.Optional(CallFailure),
      }),
      { description: 'In the order of `calls`' },
    ),
  }),
);

export const AggregateView = described(
  Type.Object({
    tool_name: Str(),
    trace_id: Str(),
    results: Type.Array(Type.Object({ mcp_server_id: Uuid(), result: ToolResult })),
    failures: Type.Array(Type.Object({ mcp_server_id: Uuid(), ...CallFailure.properties }), {
      description: 'At most 16',
    }),
    succeeded: Int(),
    failed: Int(),
    failures_omitted: Int('Failures beyond the 16 listed'),
  }),
);

const Weights = Type.Object({
  health: Type.Number(),
  latency: Type.Number(),
  error_rate: Type.Number(),
  cost: Type.Number(),
});
export const DecisionView = described(
  Type.Object({
    trace_id: Str(),
    ok: Type.Boolean(),
    tool_name: Str(),
    strategy: OneOf(ROUTE_STRATEGIES),
    rule_id: Nullable(Str(), 'The rule applied (null: the default)'),
    chosen: Nullable(Uuid(), 'The server called first (null when failed closed)'),
    fallbacks: Type.Array(Uuid()),
    parallel: Type.Array(Uuid()),
    reason_code: Type.Optional(
      OneOf(['ROUTE_TOOL_UNAVAILABLE', 'ROUTE_NO_ELIGIBLE_SERVER', 'ROUTE_INPUT_TOO_LARGE'] as const),
    ),
    candidates: Type.Array(
      Type.Object({
        server_id: Uuid(),
        eligible: Type.Boolean(),
        reasons: Type.Array(OneOf(FILTER_REASONS)),
        health: OneOf(['healthy', 'degraded', 'unhealthy', 'unknown'] as const),
        score: Type.Optional(Type.Number({ description: 'Weighted score in [0, 1]' })),
        components: Type.Optional(Weights),
      }),
    ),
    timeout_ms: Type.Optional(Int()),
    max_retries: Type.Optional(Int()),
  }),
);

export const TraceView = described(
  Type.Object({
    trace_id: Str(),
    decisions: Type.Array(
      JsonRecord({
        description:
          '`{kind (execute, flow, preview, proxy), session_id, decision (as tools/route answers it), outcome, attempts, …}` — ids, codes and numbers only',
      }),
    ),
  }),
);

export const ReloadView = described(Type.Object({ rules: Int(), enabled: Int(), reloaded_at: Timestamp }));

const RuleFields = {
  id: Uuid(),
  tool_name: Str('A tool name or `*`'),
  strategy: OneOf(ROUTE_STRATEGIES),
  servers: Type.Optional(Type.Array(Uuid())),
  priority: Type.Optional(Int()),
  enabled: Type.Optional(Type.Boolean()),
  region: Type.Optional(Str()),
  data_handling: Type.Optional(Str()),
  max_cost: Type.Optional(Int()),
  require_healthy: Type.Optional(Type.Boolean()),
  weights: Type.Optional(
    Type.Object({
      health: Type.Optional(Type.Number()),
      latency: Type.Optional(Type.Number()),
      error_rate: Type.Optional(Type.Number()),
      cost: Type.Optional(Type.Number()),
    }),
  ),
  latency_target_ms: Type.Optional(Int()),
  cost_target: Type.Optional(Int()),
  max_parallel: Type.Optional(Int()),
  timeout_ms: Type.Optional(Int()),
  max_retries: Type.Optional(Int()),
  created_at: Timestamp,
  updated_at: Timestamp,
};
export const RuleView = described(Type.Object(RuleFields));
export const RuleList = described(Type.Object({ data: Type.Array(RuleView) }));

export const SessionContextView = described(
  Type.Object({
    session_id: Uuid(),
    context: JsonRecord({ description: 'The stored object (≤ 16 KiB)' }),
    version: Int('Bumped per write; 0 until written'),
    updated_at: NullableTimestamp,
  }),
);
