import type { App } from '@keel/core';
import { type TSchema, Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  IdParams,
  OneOf,
  PageQuery,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Uuid,
} from '../runtime/http-schemas.ts';
import { AUTH_TYPES } from './mcp-connection.ts';
import type { ToolRuntime } from './tool-runtime.ts';
import * as S from './toolserver-schemas.ts';
import {
  contractTest,
  deleteServer,
  discoverServer,
  generateProposals,
  getServer,
  listCredentials,
  listProposals,
  listResources,
  listServers,
  listTools,
  probeServer,
  REVIEW_DECISIONS,
  readResource,
  registerServer,
  reviewProposal,
  reviewTool,
  rollbackCredential,
  testServer,
  toggleServer,
  updateProfile,
  updateToolServer,
} from './toolserver-service.ts';

const tags = ['tool-servers'];
const base = { tags, security: runtimeSecurity };

const ServerBody = Type.Object(
  {
    realm_id: Type.Optional(Uuid()),
    name: Type.String({ minLength: 1, maxLength: 255 }),
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    type: Type.Optional(
      Type.String({
        maxLength: 32,
        default: 'http',
        description: '`http` (streamable HTTP, also `streamable_http`) or `sse`; `stdio` is refused (run a sidecar)',
      }),
    ),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    api_key: Type.Optional(
      Type.Union([
        Type.String({ minLength: 1, maxLength: 8192, description: 'Write only; sealed at rest, never returned' }),
        Type.Null(),
      ]),
    ),
    is_active: Type.Optional(Type.Boolean({ default: true })),
    capabilities: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 })),
    auto_discover: Type.Optional(Type.Boolean({ default: false })),
  },
  {
    examples: [
      {
        name: 'inventory-tools',
        url: 'https://example.com/mcp',
        type: 'http',
        description: 'Stock and supplier lookups',
        api_key: 'example-tool-server-key',
        capabilities: ['inventory'],
        auto_discover: false,
      },
    ],
  },
);

/** The secret-free authentication profile of a tool server (also a field of the portable configuration). */
export const AuthProfileBody = Type.Object({
  type: OneOf(AUTH_TYPES),
  header_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' })),
  token_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  scope: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  credential_ref: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Z0-9_]+$' })),
});

export const EgressBody = Type.Object({
  allowed_hosts: Type.Array(Type.String({ minLength: 1, maxLength: 253, pattern: '^(\\*\\.)?[A-Za-z0-9.-]+$' }), {
    maxItems: 20,
  }),
});

/** Bounds of the other profile fields (shared with the portable configuration). */
export const ProfileFields = {
  region: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()]),
  data_handling: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 10 }),
  estimated_cost: Type.Union([
    Type.Integer({ minimum: 0, description: 'Per call, in picos (10^-12 of the currency)' }),
    Type.Null(),
  ]),
};

const ProfileBody = Type.Object(
  {
    transport: Type.Optional(OneOf(['streamable_http', 'sse', 'stdio'] as const)),
    auth: Type.Optional(AuthProfileBody),
    credential_ref: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Z0-9_]+$' }), Type.Null()]),
    ),
    egress: Type.Optional(EgressBody),
    region: Type.Optional(ProfileFields.region),
    data_handling: Type.Optional(ProfileFields.data_handling),
    estimated_cost: Type.Optional(ProfileFields.estimated_cost),
  },
  {
    examples: [
      {
        transport: 'streamable_http',
        auth: { type: 'bearer' },
        egress: { allowed_hosts: ['example.com'] },
        region: 'eu',
        data_handling: ['standard', 'no_retention'],
        estimated_cost: 2000,
      },
    ],
  },
);

const ReviewBody = Type.Object(
  { decision: OneOf(REVIEW_DECISIONS), note: Type.Optional(Type.String({ maxLength: 1000 })) },
  { examples: [{ decision: 'approve', note: 'Read-only stock lookup, checked by the platform team' }] },
);

const SERVER_DOC = `Registered MCP servers of the realm. Transports: streamable HTTP (\`type: http\`) and SSE (\`type: sse\`) directly; a
stdio server runs behind a managed sidecar that serves it over streamable HTTP (for example \`npx -y supergateway --stdio
"<command>" --outputTransport streamableHttp --port 8931\` next to the engine) and is registered with the sidecar's URL.
URLs pass the SSRF rules at save time and again at every connection (core's safe agent resolves and vets the address
itself: no DNS rebinding); http:// and private addresses need KEEL_ALLOW_PRIVATE_URLS=true. \`api_key\` is stored
AES-256-GCM sealed as credential version 1 and never returned.`;

export function registerToolServerRoutes(app: App, tools: ToolRuntime): void {
  app.get(
    '/api/v1/runtime/mcp/servers',
    {
      schema: {
        ...base,
        summary: 'List tool servers',
        querystring: Type.Object({ ...PageQuery, is_active: Type.Optional(Type.Boolean()) }),
        response: { 200: S.ServerPage, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listServers(tools, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    '/api/v1/runtime/mcp/servers',
    {
      schema: {
        ...base,
        summary: 'Register a tool server',
        description: `${SERVER_DOC} With \`auto_discover\` the engine calls \`tools/list\` (and the resource lists) through the official MCP SDK
client right after saving and answers with the registration plus \`discovery\` (its summary, or the failure: the
registration stays). Names are unique per realm (409).`,
        body: ServerBody,
        response: { 201: S.RegisteredView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => reply.status(201).send(await registerServer(tools, principalOf(request), request.body)),
  );
  app.get(
    '/api/v1/runtime/mcp/servers/:id',
    {
      schema: {
        ...base,
        summary: 'Read a tool server',
        params: IdParams,
        response: { 200: S.ServerView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getServer(tools, principalOf(request), request.params.id),
  );
  app.put(
    '/api/v1/runtime/mcp/servers/:id',
    {
      schema: {
        ...base,
        summary: 'Update URL, credential and metadata',
        description: `Replaces name, url, type, description, capabilities and is_active. A new \`api_key\` is a credential rotation: the engine
connects with it and runs a live MCP \`initialize\` first; only when that passes does the new version become active, in one
transaction, and the previous version is kept as \`previous\` for a 15-minute overlap window (rollback through
\`…/credentials/{version}/rollback\`). A failing check answers 409 TOOL_SERVER_CREDENTIAL_TEST_FAILED and changes nothing.
Omitted \`api_key\` keeps the credential; \`null\` removes it.`,
        params: IdParams,
        body: ServerBody,
        response: { 200: S.ServerView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => updateToolServer(tools, principalOf(request), request.params.id, request.body),
  );
  app.delete(
    '/api/v1/runtime/mcp/servers/:id',
    {
      schema: {
        ...base,
        summary: 'Delete an unused registration',
        description: '409 RUNTIME_IN_USE while an agent attaches it or a routing rule names it.',
        params: IdParams,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await deleteServer(tools, principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
  app.patch(
    '/api/v1/runtime/mcp/servers/:id/toggle',
    {
      schema: {
        ...base,
        summary: 'Enable or disable',
        description: 'Sets `is_active`; `{}` flips it. A disabled server is never routed to or called.',
        params: IdParams,
        body: Type.Object({ is_active: Type.Optional(Type.Boolean()) }, { examples: [{ is_active: false }] }),
        response: { 200: S.ServerView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => toggleServer(tools, principalOf(request), request.params.id, request.body.is_active),
  );
  const action = (
    path: string,
    summary: string,
    description: string,
    response: TSchema,
    run: (principal: ReturnType<typeof principalOf>, id: string) => Promise<unknown>,
  ) =>
    app.post(
      path,
      {
        schema: {
          ...base,
          summary,
          description,
          params: IdParams,
          response: { 200: response, ...runtimeErrors },
        },
        config: runtimeConfig,
      },
      async (request) => run(principalOf(request), request.params.id) as never,
    );
  action(
    '/api/v1/runtime/mcp/servers/:id/test',
    'Test connectivity and authentication',
    'Connects with the active credential and runs `initialize` and `ping`. 200 either way: `ok`, `authenticated`, `latency_ms`, `error {code, message}` (secret-free). The result is recorded on the credential version (`tested_at`, `test_ok`).',
    S.TestView,
    (principal, id) => testServer(tools, principal, id),
  );
  action(
    '/api/v1/runtime/mcp/servers/:id/probe',
    'Probe: negotiate capabilities, record health',
    "Negotiates the protocol version and capabilities, and records health, latency and authentication failures on the server and in the routing statistics (decayed, shared between instances). Answers the probe and the server's current health view.",
    S.ProbeView,
    (principal, id) => probeServer(tools, principal, id),
  );
  action(
    '/api/v1/runtime/mcp/servers/:id/discover',
    'Refresh the tool registry',
    'Calls `tools/list`, `resources/list` and `resources/templates/list` (at most 500 tools and 1,000 resources of each kind). New tools are stored disabled; a read-only tool (annotations `readOnlyHint: true`, no financial, external-message or sensitive wording) is enabled once its contract passes; write, destructive, financial, external-message and sensitive tools wait for `PUT /api/v1/runtime/mcp/tools/{toolId}/review`. A tool whose contract (description, schemas, annotations) changed is disabled again until reviewed. Tools no longer listed are marked removed. 502 TOOL_SERVER_FAILED when the server cannot be reached.',
    S.DiscoveryView,
    (principal, id) => discoverServer(tools, principal, id),
  );
  action(
    '/api/v1/runtime/mcp/servers/:id/contract-test',
    'Refresh and validate discovered contracts',
    'A discovery that answers, per tool, whether its contract passes: name shape, description length, an object input schema that compiles, at most 64 KiB and 12 levels deep, no remote `$ref`, no pattern longer than 200 characters or with nested quantifiers.',
    S.ContractTestView,
    (principal, id) => contractTest(tools, principal, id),
  );
  app.put(
    '/api/v1/runtime/mcp/servers/:id/profile',
    {
      schema: {
        ...base,
        summary: 'Transport, authentication profile, credential reference, egress policy',
        description: `Authentication types: \`none\`, \`api_key\` (the secret in header \`header_name\`, default X-API-Key), \`bearer\`
(Authorization: Bearer), \`oauth_client_credentials\` (\`token_url\`, \`client_id\`, \`scope\`; the client secret is the credential),
\`mtls\` (the credential is JSON \`{"cert","key","ca"?}\` in PEM: the client certificate and key, and optionally the CA(s)
trusted for the server's certificate instead of the system roots; the server's certificate is always verified; a credential
that is not such a pair fails with \`TOOL_SERVER_AUTH_FAILED\` showing none of it), \`credential_ref\` (a customer-managed credential: the engine reads
\`KEEL_TOOL_CREDENTIAL_<credential_ref>\` from its environment at connect time and sends it as a bearer token, or in
\`header_name\`). Secrets are set through the server's \`api_key\` (a rotation), never here. \`egress.allowed_hosts\` (exact
names or \`*.suffix\`) bounds every request of the server (URL, token URL); empty = any public host. \`region\`,
\`data_handling\` and \`estimated_cost\` feed routing filters and scores.`,
        params: IdParams,
        body: ProfileBody,
        response: { 200: S.ServerView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => updateProfile(tools, principalOf(request), request.params.id, request.body as never),
  );
  app.get(
    '/api/v1/runtime/mcp/servers/:id/credentials',
    {
      schema: {
        ...base,
        summary: 'Credential versions',
        description:
          'Secret-free metadata of every credential version: status (`active`, `previous` inside its overlap window, `inactive`), creation, activation, connection-test timestamps and outcome.',
        params: IdParams,
        response: { 200: S.CredentialsView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listCredentials(tools, principalOf(request), request.params.id),
  );
  app.post(
    '/api/v1/runtime/mcp/servers/:id/credentials/:version/rollback',
    {
      schema: {
        ...base,
        summary: 'Roll back to a prior credential version',
        description:
          'Re-tests the version live (`initialize`); when it passes it becomes active atomically and the current one becomes `previous`. 409 TOOL_SERVER_CREDENTIAL_TEST_FAILED (nothing changes) otherwise; 404 for an unknown version.',
        params: Type.Object({ id: Uuid(), version: Type.Integer({ minimum: 1, maximum: 1_000_000 }) }),
        response: { 200: S.CredentialsView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => rollbackCredential(tools, principalOf(request), request.params.id, request.params.version),
  );
  app.get(
    '/api/v1/runtime/mcp/servers/:id/tools',
    {
      schema: {
        ...base,
        summary: 'Discovered tools',
        description:
          'By name. Each tool carries its contract (status, hash, problems), impact classes, `review_status` (disabled, approved, rejected, quarantined) and `enabled`.',
        params: IdParams,
        querystring: Type.Object({
          ...PageQuery,
          cursor: Type.Optional(Type.String({ maxLength: 512 })),
          review_status: Type.Optional(OneOf(['disabled', 'approved', 'rejected', 'quarantined'] as const)),
        }),
        response: { 200: S.ToolPage, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listTools(tools, principalOf(request), request.params.id, { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.put(
    '/api/v1/runtime/mcp/tools/:toolId/review',
    {
      schema: {
        ...base,
        summary: 'Approve, reject or quarantine a tool',
        description:
          '`approve` needs a passing contract (409 TOOL_CONTRACT_FAILING) and enables the tool; `reject` and `quarantine` disable it. A quarantined or rejected tool stays so through rediscoveries until approved.',
        params: Type.Object({ toolId: Uuid() }),
        body: ReviewBody,
        response: { 200: S.ToolView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => reviewTool(tools, principalOf(request), request.params.toolId, request.body),
  );
  for (const [path, kind, summary] of [
    ['resources', 'resource', 'Resources'],
    ['resource-templates', 'template', 'Resource templates'],
  ] as const)
    app.get(
      `/api/v1/runtime/mcp/servers/:id/${path}`,
      {
        schema: {
          ...base,
          summary,
          description: `What the last discovery stored, by name (keyset cursor).`,
          params: IdParams,
          querystring: Type.Object({ ...PageQuery, cursor: Type.Optional(Type.String({ maxLength: 512 })) }),
          response: { 200: S.ResourcePage, ...runtimeErrors },
        },
        config: runtimeConfig,
      },
      async (request) =>
        listResources(tools, principalOf(request), request.params.id, kind, {
          ...request.query,
          limit: request.query.limit ?? 20,
        }),
    );
  app.post(
    '/api/v1/runtime/mcp/servers/:id/resources/read',
    {
      schema: {
        ...base,
        summary: 'Read an approved resource',
        description:
          'Only a URI the server listed at the last discovery, or one matching a listed template, is read (404 otherwise, and nothing is sent). Contents are at most 1 MiB (502 TOOL_RESULT_TOO_LARGE).',
        params: IdParams,
        body: Type.Object(
          { uri: Type.String({ minLength: 1, maxLength: 2048 }) },
          { examples: [{ uri: 'inventory://warehouses/main' }] },
        ),
        response: { 200: S.ResourceReadView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => readResource(tools, principalOf(request), request.params.id, request.body.uri),
  );
  app.get(
    '/api/v1/runtime/mcp/tool-proposals',
    {
      schema: {
        ...base,
        summary: 'List tool proposals',
        querystring: Type.Object({
          ...PageQuery,
          status: Type.Optional(OneOf(['proposed', 'approved', 'rejected'] as const)),
          server_id: Type.Optional(Uuid()),
        }),
        response: { 200: S.ProposalPage, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listProposals(tools, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    '/api/v1/runtime/mcp/tool-proposals/generate',
    {
      schema: {
        ...base,
        summary: 'Generate bounded tool proposals',
        description:
          'One read proposal per discovered resource or template of the server that no tool or earlier proposal covers (template variables become required string arguments): at most 20 per call (`max_proposals`, default 10) and 200 awaiting review per realm (409 RUNTIME_LIMIT_REACHED). Nothing is enabled.',
        body: Type.Object(
          { server_id: Uuid(), max_proposals: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })) },
          { examples: [{ server_id: '0194f3a2-7c1d-7abc-8def-0123456789ab', max_proposals: 5 }] },
        ),
        response: { 200: S.GeneratedView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => generateProposals(tools, principalOf(request), request.body),
  );
  app.post(
    '/api/v1/runtime/mcp/tool-proposals/:proposalId/review',
    {
      schema: {
        ...base,
        summary: 'Approve or reject a proposal',
        description:
          'A proposal is decided once (409 afterwards). Approval records the decision; it never enables a tool.',
        params: Type.Object({ proposalId: Uuid() }),
        body: Type.Object(
          { decision: OneOf(['approve', 'reject'] as const), note: Type.Optional(Type.String({ maxLength: 1000 })) },
          { examples: [{ decision: 'reject', note: 'Covered by an existing tool' }] },
        ),
        response: { 200: S.ProposalView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => reviewProposal(tools, principalOf(request), request.params.proposalId, request.body),
  );
}
