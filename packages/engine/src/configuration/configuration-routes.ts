import { type App, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { IdempotencyHeaders } from '../http/schemas.ts';
import { principalOf } from '../identity/runtime-auth.ts';
import { JsonRecord, OneOf, runtimeConfig, runtimeErrors, runtimeSecurity } from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { CONFIG_FORMAT, ConfigBundle } from './configuration-schemas.ts';
import { configurationSchema, deployConfiguration, exportConfiguration } from './configuration-service.ts';

const Sections = ['providers', 'prompts', 'tool_servers'] as const;

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
          'true: items of the realm that a section of the bundle does not name are deleted (`delete` in the diff); a section left out stays untouched; an item still in use (a provider or prompt of an agent, a server attached to an agent or named by a routing rule) is a 409 and nothing is written',
      }),
    ),
    credentials: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^(providers|tool_servers)/.{1,255}$' }),
        Type.String({ minLength: 1, maxLength: 4096 }),
        {
          maxProperties: 200,
          description:
            'Write-only secrets by reference `<section>/<name>` (for example `providers/openai-main`), each for a bundle item whose `credential` is set; sealed on write, never stored in clear or answered',
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
    { description: 'Items deployed inactive because their credential was neither supplied nor already stored' },
  ),
});

const ExportResult = Type.Object({
  bundle: ConfigBundle,
  required_credentials: Type.Array(Type.String(), {
    description: 'References of the secrets a deploy of this bundle needs (`credentials` keys)',
  }),
});

const DEPLOY_DOC = `Sections are applied in order (providers, prompts, tool_servers) in ONE transaction on the engine's write path: any failure (400 invalid item, 409 immutable prompt version, …) leaves the realm exactly as it was. Items are matched by name (prompts by key); a section left out of the bundle is not touched, and items of the realm the bundle does not name are kept unless \`prune\` is true (then they are deleted; one still in use is a 409). Prompt versions are append-only: missing versions are added, the template of a version that has been active cannot change (409 RUNTIME_PROMPT_VERSION_IMMUTABLE). Raw secrets are never part of a bundle: an item whose \`credential\` is set takes its secret from \`credentials["<section>/<name>"]\` or keeps the one the realm stores; when neither exists it is deployed inactive (and without the credential) and listed in \`missing_credentials\` — deploy again with the secret to activate it. Deployed tool-server secrets are untested (run \`POST /api/v1/runtime/mcp/servers/{id}/test\`). Re-deploying the same bundle answers every item \`unchanged\` and writes nothing. Roles: a dry run any role (developer+ when it carries \`credentials\`: comparing secrets must not let a reader test guesses); deploy developer+. After the commit the engine drops its cached model and MCP clients of the changed providers and servers. \`Idempotency-Key\` replays the first answer.`;

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
          'A secret-free, name-referenced bundle: providers (no api keys), prompts with their versions and active version, tool server registrations (no credentials, no discovered tools). No ids, no timestamps; items sorted by name, so two exports of one configuration are identical. Any role.',
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
