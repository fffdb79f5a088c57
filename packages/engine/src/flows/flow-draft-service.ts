import { AppError, createError } from '@keel/core';
import { ModelCallError } from '@keel/models';
import { Compile } from 'typebox/compile';
import { loadAgent } from '../agents/agent-service.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { FLOW_CATALOG_TOOLS } from '../mcp/catalog-flow-tools.ts';
import { loadProvider } from '../providers/provider-service.ts';
import { ACTION_TYPES } from '../runtime/actions.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { EXAMPLE_CONFIG, FixtureBodySchema } from './flow-api-schemas.ts';
import { compileFlow, type FlowPlan } from './flow-compiler.ts';
import { FlowRejected } from './flow-errors.ts';
import { type FixtureExpect, type FixtureMocks, runFixture } from './flow-fixtures.ts';

/** Fixtures a draft carries at most. */
export const MAX_DRAFT_FIXTURES = 10;
/** How long the model may take to answer a draft request. */
const DRAFT_TIMEOUT_MS = 60_000;

export const DraftErrors = {
  noProvider: createError('FLOW_DRAFT_NO_PROVIDER', 'No active text provider to generate with: %s', 409),
  invalid: createError('FLOW_DRAFT_INVALID', 'The generated flow was rejected (nothing was stored): %s', 422),
  model: createError('FLOW_DRAFT_MODEL_FAILED', 'The model did not produce a draft: %s', 502),
};

export interface DraftInput {
  goal: string;
  name: string;
  channel?: string | undefined;
  agent_id?: string | undefined;
}

const fixtureValidator = Compile(FixtureBodySchema);

function instructions(toolNames: readonly string[]): string {
  return [
    'You design flows for a commerce agent runtime. Answer with ONE JSON object and nothing else:',
    '{"config": <flow config>, "fixtures": [<fixture>, ...]}.',
    'A flow config has schema_version "2026-08-22", orchestration_mode, routing, permissions.allowed_actions,',
    'optional contract.input (a JSON schema object), and nodes (each {id, type, ...}); output nodes carry an `action`.',
    `Normalized actions: ${ACTION_TYPES.join(', ')}.`,
    `Tools you may use in tool nodes (no others): ${toolNames.join(', ')}.`,
    `A fixture is {name, input, mocks: {tools: {<tool>: <result>}}, expect: {state, action_type, tool_calls}}; at most ${MAX_DRAFT_FIXTURES}.`,
    `Example config: ${JSON.stringify(EXAMPLE_CONFIG)}`,
  ].join('\n');
}

/** The JSON object of a model answer (a bare object, or one inside a fenced block). */
function parseAnswer(content: string): { config?: unknown; fixtures?: unknown } {
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end <= start) throw DraftErrors.invalid('the model answer holds no JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.slice(start, end + 1));
  } catch {
    throw DraftErrors.invalid('the model answer is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw DraftErrors.invalid('the model answer is not a JSON object');
  return parsed as { config?: unknown; fixtures?: unknown };
}

function toolBindings(plan: FlowPlan, known: ReadonlySet<string>) {
  const bindings: { node_id: string; tool: string; effect: string | null; source: 'catalog' }[] = [];
  const unknown: string[] = [];
  for (const nodeId of plan.order) {
    const node = plan.nodes[nodeId] as { type: string; tool?: string; effect?: string };
    if (node.tool === undefined) continue;
    if (!known.has(node.tool)) unknown.push(`${nodeId}: ${node.tool}`);
    else bindings.push({ node_id: nodeId, tool: node.tool, effect: node.effect ?? null, source: 'catalog' });
  }
  return { bindings, unknown };
}

/**
 * Generates a draft flow from a goal with the agent's provider (else the realm's default): the model's config must
 * compile, bind only known tools and come with fixtures that replay green; otherwise 422 and nothing is kept. The
 * answer is always `pending_approval`: generation stores, publishes and activates nothing — a developer creates the
 * flow from it (`POST /flows`), adds the fixtures, tests and activates it.
 */
export async function draftFlow(rt: RuntimeContext, principal: RuntimePrincipal, input: DraftInput) {
  const realmId = requirePermission(principal, 'config:write');
  let providerId: string | null = null;
  if (input.agent_id !== undefined) {
    const agent = await loadAgent(rt, realmId, input.agent_id);
    if (!agent) throw RuntimeErrors.notFound('Agent', input.agent_id);
    providerId = agent.aiProviderId;
  }
  const provider = await loadProvider(rt, realmId, providerId);
  if (!provider)
    throw DraftErrors.noProvider(providerId ? 'the agent has no provider' : 'the realm has no default provider');
  if (!provider.isActive || !provider.supportsText || !provider.textModel)
    throw DraftErrors.noProvider(`provider ${provider.name} is inactive or has no text model`);
  // Only the catalog tools a flow can call (no product writes, no order completion).
  const tools = FLOW_CATALOG_TOOLS;
  let content: string;
  let model: string;
  try {
    const answer = await rt.models.complete(
      provider,
      [
        { role: 'system', content: instructions(tools) },
        {
          role: 'user',
          content: `Flow name: ${input.name}\nChannel: ${input.channel ?? 'any'}\nGoal: ${input.goal}`,
        },
      ],
      { timeoutMs: DRAFT_TIMEOUT_MS, signal: new AbortController().signal },
    );
    content = answer.content;
    model = answer.model;
  } catch (error) {
    if (error instanceof ModelCallError) throw DraftErrors.model(error.message);
    throw error;
  }
  const answer = parseAnswer(content);
  let plan: FlowPlan;
  try {
    plan = compileFlow(answer.config);
  } catch (error) {
    if (!(error instanceof FlowRejected)) throw error;
    const first = error.problems[0]!;
    throw new AppError(
      DraftErrors.invalid.code,
      DraftErrors.invalid.template.replace('%s', `the config does not compile: ${first.code}: ${first.message}`),
      DraftErrors.invalid.statusCode,
      { details: error.details },
    );
  }
  const { bindings, unknown } = toolBindings(plan, new Set(tools));
  if (unknown.length > 0) throw DraftErrors.invalid(`tool nodes name unknown tools (${unknown.join(', ')})`);
  const fixtures = Array.isArray(answer.fixtures) ? answer.fixtures : [];
  if (fixtures.length === 0) throw DraftErrors.invalid('the draft has no fixtures');
  if (fixtures.length > MAX_DRAFT_FIXTURES)
    throw DraftErrors.invalid(`the draft has more than ${MAX_DRAFT_FIXTURES} fixtures`);
  const results = [];
  for (const [index, fixture] of fixtures.entries()) {
    if (!fixtureValidator.Check(fixture)) throw DraftErrors.invalid(`fixture ${index} is not a valid fixture`);
    const f = fixture as { name: string; input?: unknown; mocks?: FixtureMocks; expect: FixtureExpect };
    results.push(
      await runFixture(
        plan,
        { id: `draft-${index}`, name: f.name, input: f.input ?? {}, mocks: f.mocks ?? {}, expect: f.expect },
        new Map(),
      ),
    );
  }
  const failing = results.filter((result) => !result.passed);
  if (failing.length > 0)
    throw DraftErrors.invalid(
      `fixture ${failing[0]!.name} does not pass on the generated config (${failing[0]!.mismatches.join('; ')})`,
    );
  return {
    name: input.name,
    goal: input.goal,
    channel: input.channel ?? null,
    status: 'pending_approval' as const,
    config: plan.config as Record<string, unknown>,
    config_hash: plan.hash,
    tool_bindings: bindings,
    fixtures: fixtures as Record<string, unknown>[],
    fixture_results: results.map((result) => ({ name: result.name, passed: result.passed })),
    generated_by: { provider_id: provider.id, provider_name: provider.name, model },
  };
}
