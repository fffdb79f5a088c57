import { type App, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { IdempotencyHeaders } from '../http/schemas.ts';
import { principalOf } from '../identity/runtime-auth.ts';
import { JsonRecord, OneOf, runtimeConfig, runtimeErrors, runtimeSecurity } from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { CONFIG_FORMAT, ConfigBundle } from './configuration-schemas.ts';
import { SECTION_NAMES as Sections } from './configuration-sections.ts';
import { configurationSchema, deployConfiguration, exportConfiguration } from './configuration-service.ts';

const DeployBody = Type.Object(
  {
    bundle: ConfigBundle,
    dry_run: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'true: answer the diff and write nothing (any role may, developer+ with credentials)',
      }),
    ),
    prune: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'true: items of the realm that a list section of the bundle does not name are deleted (`delete` in the diff); a section left out stays untouched; an item still in use (a provider or prompt of an agent, a server attached to an agent or named by a routing rule, an active flow, a flow with unfinished executions or that an agent or the routing policy names) is a 409 and nothing is written. The one-object sections (tool_routing, flow_routing, governance) are always replaced whole.',
      }),
    ),
    credentials: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^(providers/.{1,255}|tool_servers/.{1,255}|runtime_webhooks/.{1,2048})$' }),
        Type.String({ minLength: 1, maxLength: 4096 }),
        {
          maxProperties: 200,
          description:
            'Write-only secrets by reference `<section>/<name>` (for example `providers/openai-main`; runtime webhooks by URL: `runtime_webhooks/https://…`, a `whsec_…` signing secret), each for a bundle item whose `credential` is set; sealed on write, never stored in clear or answered',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const DeployResult = Type.Object({
  format: Type.Literal(CONFIG_FORMAT),
  dry_run: Type.Boolean(),
  applied: Type.Boolean({ description: 'Something was written (false for a dry run and for a no-op deploy)' }),
  summary: Type.Object({
    create: Type.Integer(),
    update: Type.Integer(),
    unchanged: Type.Integer(),
    delete: Type.Integer(),
  }),
  changes: Type.Array(
    Type.Object({
      section: OneOf(Sections),
      name: Type.String(),
      action: OneOf(['create', 'update', 'unchanged', 'delete']),
      fields: Type.Array(Type.String(), { description: 'Top-level item fields that change' }),
    }),
  ),
  missing_credentials: Type.Array(
    Type.Object({
      ref: Type.String({ description: 'The key to send in `credentials`' }),
      section: OneOf(Sections),
      name: Type.String(),
      credential: Type.String(),
    }),
    {
      description:
        'Items deployed inactive because their credential was neither supplied nor already stored (providers, tool servers, runtime webhooks); and integration clients created without a secret anyone received (`client_secret`: rotate the client to obtain one)',
    },
  ),
  requires_admin: Type.Array(OneOf(Sections), {
    description:
      'Sections with changes that need realm:manage (owner or admin): agents, governance, integration_clients. A dry run by a developer lists them; the deploy itself is then a 403 RUNTIME_FORBIDDEN and writes nothing.',
  }),
});

const ExportResult = Type.Object({
  bundle: ConfigBundle,
  required_credentials: Type.Array(Type.String(), {
    description: 'References of the secrets a deploy of this bundle needs (`credentials` keys)',
  }),
});

const DEPLOY_DOC = `Sections are applied in order (providers, prompts, tool_servers, agents, flows, flow_triggers, tool_routing, flow_routing, governance, runtime_webhooks, integration_clients) in ONE transaction on the engine's write path: any failure (400 invalid item or dangling name, 403, 409 immutable prompt version, a flow failing its fixtures, …) leaves the realm exactly as it was. Items are matched by name (prompts by key, runtime webhooks by URL) and reference each other by name only (an agent's provider, prompt \`{key, version}\`, default flow and tool servers; a subflow node's \`flow\` with its pinned \`version\`, a specialist node's \`agent\`; a routing rule's servers; the routing policy's fallback flow): a name resolves in the token's realm only, to an item the realm has or the bundle creates, else 400. Agents are written before the flows that name them as specialists; an agent's default flow that the deploy creates is set once the flows are written (same transaction). A section left out of the bundle is not touched, and items of the realm the bundle does not name are kept unless \`prune\` is true (then they are deleted; one still in use is a 409). Prompt versions are append-only: missing versions are added, the template of a version that has been active cannot change (409 RUNTIME_PROMPT_VERSION_IMMUTABLE). Flows: a changed \`published_config\` is published through the normal rules (compiles, contract compatible with the flow's published version, every fixture of the item passes: 409 FLOW_INCOMPATIBLE / FLOW_NO_FIXTURES / FLOW_NOT_TESTED) as the flow's next version, activated when \`is_active\`; a different \`config\` becomes a draft after it; a flow the deploy creates numbers its published version as \`published_version\` says (so other flows' subflow pins stay true); a flow is written after the flows it runs as subflows, and a pinned subflow version that is not a published version of that flow in the realm once the bundle is written is a 400 naming the item; a node naming its flow or agent by id (\`flow_id\`, \`agent_id\`) is not portable (400). Governance: a changed policy becomes the realm's next version, created as a draft and activated. Raw secrets are never part of a bundle: an item whose \`credential\` is set takes its secret from \`credentials["<section>/<name>"]\` or keeps the one the realm stores; when neither exists it is deployed inactive (and without the credential) and listed in \`missing_credentials\` — deploy again with the secret to activate it. A new integration client gets a key pair whose secret nobody receives (listed as \`client_secret\`: rotate it). Deployed tool-server secrets are untested (run \`POST /api/v1/runtime/mcp/servers/{id}/test\`). Re-deploying the same bundle answers every item \`unchanged\` and writes nothing. Roles: a dry run any role (developer+ when it carries \`credentials\`: comparing secrets must not let a reader test guesses); deploy developer+, and a change to agents, governance or integration_clients needs owner or admin (the roles their own routes need): a dry run lists such sections in \`requires_admin\`, the deploy is a 403 RUNTIME_FORBIDDEN and writes nothing. After the commit the engine drops its cached model and MCP clients of the changed providers and servers, the realm's rule set, governance and webhook caches. \`Idempotency-Key\` replays the first answer.`;

export function registerConfigurationRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['configuration'], security: runtimeSecurity };
  app.get(
    '/api/v1/runtime/configuration/schema',
    {
      schema: {
        ...base,
        summary: 'Portable configuration schema',
        description: `The JSON Schema (2020-12) of the bundle format \`${CONFIG_FORMAT}\`; a new incompatible format gets a new version suffix.`,
        response: { 200: JsonRecord(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => configurationSchema(principalOf(request)),
  );
  app.get(
    '/api/v1/runtime/configuration/export',
    {
      schema: {
        ...base,
        summary: 'Export the realm configuration',
        description:
          'A secret-free, name-referenced bundle: providers (no api keys), prompts with their versions and active version, tool server registrations (no credentials, no discovered tools), flows (the version they run, the newest config, fixtures, routing profile; archived flows are left out), agents (identity and configuration, references by name), flow triggers (event and schedule triggers by flow and name; no state, no secret), tool routing rules, the flow routing policy, governance (active policy content, quota), runtime webhooks (no signing secret) and integration clients (name, description, role; no client id or secret). Subflow nodes name their flow by name (with the pinned version), specialist nodes their agent by username. No ids, no timestamps (flow version numbers only as `published_version` and subflow pins); items sorted by name, so two exports of one configuration are identical. Any role. 409 when a node names a flow or agent the realm no longer has, or two webhooks share a URL.',
        response: { 200: ExportResult, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => exportConfiguration(rt, principalOf(request)),
  );
  app.post(
    '/api/v1/runtime/configuration/deploy',
    {
      schema: {
        ...base,
        summary: 'Dry-run or deploy a bundle',
        description: DEPLOY_DOC,
        headers: IdempotencyHeaders,
        body: DeployBody,
        response: { 200: DeployResult, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await deployConfiguration(rt, principalOf(request), request.body, request.headers['idempotency-key']),
      ),
  );
}
