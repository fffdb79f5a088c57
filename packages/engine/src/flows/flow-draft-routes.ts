import type { App } from '@keel/core';
import { Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import { JsonRecord, runtimeConfig, runtimeErrors, runtimeSecurity, Uuid } from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { draftFlow, MAX_DRAFT_FIXTURES } from './flow-draft-service.ts';

const DraftBody = Type.Object(
  {
    goal: Type.String({ minLength: 1, maxLength: 4000, description: 'What the flow should achieve, in words' }),
    channel: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    agent_id: Type.Optional(Uuid({ description: "Generate with this agent's provider (default: the realm default)" })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { examples: [{ goal: 'Help shoppers find a product by name and show it', channel: 'web', name: 'Product finder' }] },
);

const DraftResult = Type.Object({
  name: Type.String(),
  goal: Type.String(),
  channel: Type.Union([Type.String(), Type.Null()]),
  status: Type.Literal('pending_approval'),
  config: JsonRecord(),
  config_hash: Type.String(),
  tool_bindings: Type.Array(
    Type.Object({
      node_id: Type.String(),
      tool: Type.String(),
      effect: Type.Union([Type.String(), Type.Null()]),
      source: Type.Literal('catalog'),
    }),
  ),
  fixtures: Type.Array(JsonRecord()),
  fixture_results: Type.Array(Type.Object({ name: Type.String(), passed: Type.Boolean() })),
  generated_by: Type.Object({ provider_id: Uuid(), provider_name: Type.String(), model: Type.String() }),
});

export function registerFlowDraftRoutes(app: App, rt: RuntimeContext): void {
  app.post(
    '/api/v1/runtime/flows/draft',
    {
      schema: {
        tags: ['flows'],
        security: runtimeSecurity,
        summary: 'Generate a draft flow from a goal',
        description: `Asks the agent's provider (\`agent_id\`; else the realm's default provider; 409 FLOW_DRAFT_NO_PROVIDER without an active text provider) for a config and fixtures. The answer is kept only when the config compiles, every tool node binds a catalog tool, and 1–${MAX_DRAFT_FIXTURES} fixtures replay green on it; otherwise 422 FLOW_DRAFT_INVALID says why (a model failure is a 502 FLOW_DRAFT_MODEL_FAILED). Always \`status: pending_approval\`: generation stores, publishes and activates nothing — a developer approves by creating the flow from \`config\` (\`POST /flows\`), adding the \`fixtures\`, testing and activating it. Needs developer or above.`,
        body: DraftBody,
        response: { 200: DraftResult, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => draftFlow(rt, principalOf(request), request.body),
  );
}
