import { parseArgs } from 'node:util';
import { AppError, type CommandIo, describeServiceDatabase, loadSecretKey, openCache } from '@keel/core';
import { buildEngineApps, type EngineApps } from '../app.ts';
import { upsertProduct } from '../catalog/product-service.ts';
import { readEngineConfig } from '../config.ts';
import { createExecutionWorker } from '../executions/execution-worker.ts';
import {
  DEMO_PRODUCTS,
  SHOPPING_ASSISTANT,
  SHOPPING_ASSISTANT_DESCRIPTION,
  shoppingAssistantConfig,
  shoppingAssistantFixtures,
} from '../flows/examples/shopping-assistant.ts';
import { loadTokenSigningKey } from '../identity/tokens.ts';
import { realmCatalogPrincipal, realmLink } from '../merchants/realm-link-service.ts';
import { inTransaction } from '../write.ts';
import { startScriptedModel } from './scripted-model.ts';

/** A mistake on the command line: one line, exit code 2. */
class UsageError extends Error {
  override name = 'UsageError';
}

/** The engine refused a step (or the realm is not ready): one line naming the step, never a stack. */
const refused = (message: string) => new AppError('FLOWS_COMMAND_REFUSED', message, 409);

const EXAMPLES = ['shopping-assistant'];
/** The model name that marks the installed provider as the scripted local model (`run` starts it). */
const SCRIPTED_MODEL = 'keel-scripted';
const APPROVAL_ID = /^apr_[0-9a-f]{24}$/;
const FINAL = new Set(['succeeded', 'terminal_failure', 'cancelled', 'compensated', 'retryable_failure']);

interface Reply {
  status: number;
  body: any;
}

/**
 * `keel engine flows install|run shopping-assistant` and `keel engine flows approve EXECUTION_ID`: the engine is opened
 * in this process on the configured database (the embedded SQLite file by default) and driven through its own REST
 * API (injected, no port) with the realm's key pair, so every rule of the API applies; `run` and `approve` also run an
 * execution worker here and print the execution's events as they are stored.
 */
export async function runFlowsCommand(action: string | undefined, argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      'access-key': { type: 'string' },
      'secret-key': { type: 'string' },
      'provider-url': { type: 'string' },
      model: { type: 'string' },
      'api-key-env': { type: 'string' },
      'demo-products': { type: 'boolean', default: false },
      message: { type: 'string' },
      quantity: { type: 'string' },
      approve: { type: 'boolean', default: false },
      deny: { type: 'boolean', default: false },
      timeout: { type: 'string' },
      approval: { type: 'string' },
      reason: { type: 'string' },
    },
  });
  if (action !== 'install' && action !== 'run' && action !== 'approve')
    throw new UsageError(
      'use: keel engine flows install|run shopping-assistant, or keel engine flows approve EXECUTION_ID',
    );
  const accessKey = values['access-key'] ?? io.env.ENGINE_ACCESS_KEY;
  const secretKey = values['secret-key'] ?? io.env.ENGINE_SECRET_KEY;
  const keyPairMissing = () =>
    new UsageError(
      'the realm key pair is required: --access-key and --secret-key (or ENGINE_ACCESS_KEY, ENGINE_SECRET_KEY), e.g. from keel engine bootstrap --json',
    );
  const timeoutMs = values.timeout === undefined ? 120_000 : Number(values.timeout) * 1000;
  if (!(timeoutMs > 0)) throw new UsageError('--timeout is in seconds, more than 0');
  if (action === 'approve') {
    const executionId = positionals[0];
    if (!executionId || positionals.length > 1)
      throw new UsageError('name one execution: keel engine flows approve EXECUTION_ID');
    if (values.approve) throw new UsageError('approve takes --deny to deny; it approves without it');
    if (values.approval !== undefined && !APPROVAL_ID.test(values.approval))
      throw new UsageError('--approval is an approval id (apr_…), as `flows run` prints it');
    if (values.reason !== undefined && values.reason.length > 1000)
      throw new UsageError('--reason is at most 1000 characters');
    if (!accessKey || !secretKey) throw keyPairMissing();
    const engine = await openEngine(io, true);
    try {
      const api = await session(engine.apps, accessKey, secretKey);
      return await approve(engine.apps, api, io, {
        executionId,
        approvalId: values.approval,
        decision: values.deny ? 'deny' : 'approve',
        reason: values.reason,
        json: values.json ?? false,
        timeoutMs,
      });
    } finally {
      await engine.close();
    }
  }
  const example = positionals[0];
  if (!example || !EXAMPLES.includes(example))
    throw new UsageError(`name the example flow set: ${EXAMPLES.join(', ')}`);
  if (!accessKey || !secretKey) throw keyPairMissing();
  if (values.approve && values.deny) throw new UsageError('--approve and --deny exclude each other');
  const providerUrl = values['provider-url'];
  const scriptedInstall = action === 'install' && providerUrl === undefined;
  const engine = await openEngine(io, action === 'run' || scriptedInstall);
  try {
    const api = await session(engine.apps, accessKey, secretKey);
    if (action === 'install') {
      const installed = await install(engine.apps, api, {
        providerUrl,
        model: values.model,
        apiKey: values['api-key-env'] ? io.env[values['api-key-env']] : undefined,
        apiKeyEnv: values['api-key-env'],
        demoProducts: values['demo-products'] ?? false,
      });
      io.stdout.write(
        values.json
          ? `${JSON.stringify(installed)}\n`
          : [
              `installed ${example} in realm ${installed.realm_id} (catalog of merchant ${installed.merchant_id})`,
              `  flow     ${installed.flow_id} v${installed.flow_version} (active, ${installed.fixtures} fixtures passed)`,
              `  agent    ${installed.agent_id}`,
              `  model    ${installed.model === SCRIPTED_MODEL ? 'the scripted local model (started by `flows run`)' : `${installed.model} at ${installed.provider_url}`}`,
              ...(installed.demo_products > 0 ? [`  products ${installed.demo_products} demo products upserted`] : []),
              '',
              `try: keel engine flows run ${example} --message "I need a tent for two"`,
            ].join('\n') + '\n',
      );
      return 0;
    }
    const message = values.message;
    if (!message) throw new UsageError('--message is required');
    const quantity = values.quantity === undefined ? undefined : Number(values.quantity);
    if (quantity !== undefined && !(Number.isInteger(quantity) && quantity >= 1 && quantity <= 10_000))
      throw new UsageError('--quantity must be an integer from 1 to 10000');
    return await run(engine.apps, api, io, {
      message,
      quantity,
      decision: values.approve ? 'approve' : values.deny ? 'deny' : undefined,
      json: values.json ?? false,
      timeoutMs,
    });
  } finally {
    await engine.close();
  }
}

async function openEngine(io: CommandIo, allowLoopbackModel: boolean) {
  // The scripted model listens on 127.0.0.1: this process (only) may reach it.
  const env = { LOG_LEVEL: 'error', ...io.env, ...(allowLoopbackModel ? { KEEL_ALLOW_PRIVATE_URLS: 'true' } : {}) };
  const config = readEngineConfig(env);
  io.stderr.write(`keel: engine store: ${describeServiceDatabase(config.core, 'engine')}\n`);
  const { openEngineDatabase } = await import('../db/open.ts');
  const database = await openEngineDatabase(config);
  const cache = openCache({ redisUrl: config.core.redisUrl, service: 'engine' });
  const { keyHex } = loadSecretKey({ secretKey: config.core.secretKey, dataDir: config.core.dataDir });
  const tokenKey = loadTokenSigningKey({ configured: config.runtime.tokenSigningKey, dataDir: config.core.dataDir });
  const apps = await buildEngineApps({
    config,
    db: database.db,
    cache: cache.cache,
    secretKeyHex: keyHex,
    tokenSigningKeyHex: tokenKey.keyHex,
  });
  await apps.rest.ready();
  return {
    apps,
    close: async () => {
      await apps.close();
      await cache.close();
      await database.close();
    },
  };
}

/** The realm's REST API with a token of its key pair (injected into the REST app, no port). */
async function session(apps: EngineApps, accessKey: string, secretKey: string) {
  const call = async (method: string, url: string, body?: unknown, token?: string): Promise<Reply> => {
    const response = await apps.rest.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
  };
  const exchanged = await call('POST', '/api/v1/auth/token', { access_key: accessKey, secret_key: secretKey });
  if (exchanged.status !== 200) throw refused('the key pair was refused (POST /api/v1/auth/token)');
  const token = exchanged.body.access_token as string;
  const realmId = exchanged.body.realm_id as string | null;
  if (!realmId) throw refused('the key pair belongs to no realm');
  return {
    realmId,
    call: (method: string, url: string, body?: unknown) => call(method, url, body, token),
    async must(method: string, url: string, body: unknown, ok: number[], what: string) {
      const reply = await call(method, url, body, token);
      if (!ok.includes(reply.status)) {
        const error = reply.body?.error;
        throw refused(`${what} failed (${reply.status} ${error?.code ?? ''}): ${error?.message ?? ''}`);
      }
      return reply.body;
    },
  };
}
type Api = Awaited<ReturnType<typeof session>>;

async function findByName(api: Api, url: string, field: string, value: string): Promise<any> {
  const page = await api.must('GET', `${url}?limit=100`, undefined, [200], `GET ${url}`);
  return (page.data as Record<string, unknown>[]).find((item) => item[field] === value);
}

async function install(
  apps: EngineApps,
  api: Api,
  options: {
    providerUrl: string | undefined;
    model: string | undefined;
    apiKey: string | undefined;
    apiKeyEnv: string | undefined;
    demoProducts: boolean;
  },
) {
  const link = await realmLink(apps.ctx.db, api.realmId);
  if (!link)
    throw refused(
      `realm ${api.realmId} is not linked to a catalog merchant: keel engine realms link --realm ${api.realmId} --merchant MERCHANT_ID`,
    );
  if (options.apiKeyEnv && !options.apiKey)
    throw refused(`the variable ${options.apiKeyEnv} (--api-key-env) is not set`);
  let demo = 0;
  if (options.demoProducts) {
    const principal = await realmCatalogPrincipal(apps.ctx.db, api.realmId);
    const storeId = principal ? [...principal.stores.keys()][0] : undefined;
    if (!principal || !storeId) throw refused(`merchant ${link.merchantId} is inactive or has no store`);
    for (const product of DEMO_PRODUCTS)
      await inTransaction(apps.ctx, (trx, sink) =>
        upsertProduct(trx, sink, principal, { ...product, storeId }, 'service'),
      );
    demo = DEMO_PRODUCTS.length;
  }
  const scripted = options.providerUrl === undefined;
  const model = scripted ? SCRIPTED_MODEL : (options.model ?? 'gpt-4o-mini');
  // The scripted model's address is set by `run` (it listens on a port of its own each time).
  const providerUrl = options.providerUrl ?? 'http://127.0.0.1:9/v1';
  const providerBody = {
    type: 'openai_compatible',
    name: SHOPPING_ASSISTANT.providerName,
    base_url: providerUrl,
    text_model: model,
    ...(options.apiKey ? { api_key: options.apiKey } : {}),
  };
  const existingProvider = await findByName(api, '/api/v1/runtime/providers', 'name', SHOPPING_ASSISTANT.providerName);
  const provider = existingProvider
    ? await api.must('PUT', `/api/v1/runtime/providers/${existingProvider.id}`, providerBody, [200], 'provider update')
    : await api.must('POST', '/api/v1/runtime/providers', providerBody, [201], 'provider creation');
  const prompt = await api.must(
    'POST',
    '/api/v1/runtime/prompts',
    {
      name: 'Shopping assistant',
      key: SHOPPING_ASSISTANT.promptKey,
      content: SHOPPING_ASSISTANT.prompt,
      is_active: true,
    },
    [201],
    'prompt creation',
  );
  const agentId = await ensureAgent(api);
  await api.must(
    'PUT',
    `/api/v1/runtime/agents/${agentId}/config`,
    { ai_provider_id: provider.id, system_prompt_id: prompt.id },
    [200],
    'agent configuration',
  );
  const existingFlow = await findByName(api, '/api/v1/runtime/flows', 'name', SHOPPING_ASSISTANT.flowName);
  let flowId: string;
  if (existingFlow) {
    flowId = existingFlow.id;
    await api.must(
      'PUT',
      `/api/v1/runtime/flows/${flowId}`,
      {
        name: SHOPPING_ASSISTANT.flowName,
        description: SHOPPING_ASSISTANT_DESCRIPTION,
        config: shoppingAssistantConfig,
      },
      [200],
      'flow update',
    );
  } else {
    const created = await api.must(
      'POST',
      '/api/v1/runtime/flows',
      {
        name: SHOPPING_ASSISTANT.flowName,
        description: SHOPPING_ASSISTANT_DESCRIPTION,
        config: shoppingAssistantConfig,
      },
      [201],
      'flow creation',
    );
    flowId = created.id;
    for (const fixture of shoppingAssistantFixtures)
      await api.must('POST', `/api/v1/runtime/flows/${flowId}/fixtures`, fixture, [201], 'fixture creation');
  }
  const tested = await api.must('POST', `/api/v1/runtime/flows/${flowId}/test`, {}, [200], 'flow test');
  if (!tested.passed) throw refused(`the flow's fixtures failed: ${JSON.stringify(tested.results)}`);
  const activated = await api.must('POST', `/api/v1/runtime/flows/${flowId}/activate`, {}, [200], 'flow activation');
  return {
    realm_id: api.realmId,
    merchant_id: link.merchantId,
    flow_id: flowId,
    flow_version: activated.active_version as number,
    fixtures: shoppingAssistantFixtures.length,
    agent_id: agentId,
    provider_id: provider.id as string,
    model,
    provider_url: scripted ? null : providerUrl,
    demo_products: demo,
  };
}

/** The assistant's agent identity: created once, found again by its username on a re-install. */
async function ensureAgent(api: Api): Promise<string> {
  const created = await api.call('POST', `/api/v1/realms/${api.realmId}/agents`, {
    username: SHOPPING_ASSISTANT.agentUsername,
  });
  if (created.status === 201) return created.body.identity.id;
  if (created.status !== 409)
    throw refused(`agent creation failed (${created.status} ${created.body?.error?.code ?? ''})`);
  let cursor: string | undefined;
  do {
    const page = await api.must(
      'GET',
      `/api/v1/realms/${api.realmId}/members?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      undefined,
      [200],
      'member list',
    );
    const found = (page.data as { identity?: { id: string; username: string }; username?: string; id?: string }[]).find(
      (m) => (m.identity?.username ?? m.username) === SHOPPING_ASSISTANT.agentUsername,
    );
    if (found) return (found.identity?.id ?? found.id)!;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  throw refused(`the name ${SHOPPING_ASSISTANT.agentUsername} is taken by an identity outside this realm`);
}

type Decision = 'approve' | 'deny';
type Say = (line: string, value: unknown) => void;

async function run(
  apps: EngineApps,
  api: Api,
  io: CommandIo,
  options: {
    message: string;
    quantity: number | undefined;
    decision: Decision | undefined;
    json: boolean;
    timeoutMs: number;
  },
): Promise<number> {
  const flow = await findByName(api, '/api/v1/runtime/flows', 'name', SHOPPING_ASSISTANT.flowName);
  if (!flow) throw refused('the flow is not installed: keel engine flows install shopping-assistant');
  const agentId = await ensureAgent(api);
  return withWorker(apps, api, agentId, async (worker, scripted) => {
    const created = await api.must(
      'POST',
      '/api/v1/runtime/executions',
      {
        flow_id: flow.id,
        agent_id: agentId,
        input: { message: options.message, ...(options.quantity !== undefined ? { quantity: options.quantity } : {}) },
      },
      [202],
      'execution',
    );
    const id = created.id as string;
    const say = sayer(io, options.json);
    say(`execution ${id} (flow ${flow.name} v${flow.active_version}${scripted ? ', scripted local model' : ''})`, {
      execution_id: id,
    });
    let decided = false;
    return follow(api, worker, say, id, options.timeoutMs, 0, async (approvalId) => {
      if (!options.decision || decided) {
        waiting(say, id, approvalId);
        return false;
      }
      decided = true;
      await decide(api, say, id, approvalId, options.decision, undefined);
      return true;
    });
  });
}

/**
 * `keel engine flows approve EXECUTION_ID [--approval ID] [--deny] [--reason TEXT]`: decides the approval the
 * execution waits for (the only pending one when `--approval` is omitted), then runs a worker here and prints the
 * rest of the execution as `run` does.
 */
async function approve(
  apps: EngineApps,
  api: Api,
  io: CommandIo,
  options: {
    executionId: string;
    approvalId: string | undefined;
    decision: Decision;
    reason: string | undefined;
    json: boolean;
    timeoutMs: number;
  },
): Promise<number> {
  const path = `/api/v1/runtime/executions/${encodeURIComponent(options.executionId)}`;
  const execution = await api.must('GET', path, undefined, [200], `execution ${options.executionId}`);
  const pending =
    execution.state === 'waiting_for_approval' && typeof execution.wait?.approval_id === 'string'
      ? [execution.wait.approval_id as string]
      : [];
  if (pending.length === 0) throw refused(`execution ${execution.id} waits for no approval (state ${execution.state})`);
  if (options.approvalId === undefined && pending.length > 1)
    throw refused(
      `execution ${execution.id} waits for ${pending.length} approvals (${pending.join(', ')}): name one with --approval`,
    );
  const approvalId = options.approvalId ?? pending[0]!;
  if (!pending.includes(approvalId))
    throw refused(
      `execution ${execution.id} does not wait for approval ${approvalId} (pending: ${pending.join(', ')})`,
    );
  const say = sayer(io, options.json);
  return withWorker(apps, api, execution.agent_id, async (worker) => {
    // Only what happens from the decision on is printed (`flows run` printed the steps before it).
    const after = await latestEventId(api, execution.id);
    await decide(api, say, execution.id, approvalId, options.decision, options.reason);
    return follow(api, worker, say, execution.id, options.timeoutMs, after, async (next) => {
      waiting(say, execution.id, next);
      return false;
    });
  });
}

/** An execution waits for an approval: the command that decides it. */
function waiting(say: Say, id: string, approvalId: string): void {
  say(
    `waiting for approval ${approvalId}: keel engine flows approve ${id} [--deny] [--reason TEXT] (or run again with --approve or --deny)`,
    { waiting_for_approval: approvalId, execution_id: id },
  );
}

/** A page of the execution's events after the event id `after`. */
function eventsAfter(api: Api, id: string, after: number) {
  return api.must(
    'GET',
    `/api/v1/runtime/executions/${id}/events?after=${after}&limit=100`,
    undefined,
    [200],
    'events',
  );
}

/** The id of the execution's latest stored event (0 when none). */
async function latestEventId(api: Api, id: string): Promise<number> {
  let after = 0;
  for (;;) {
    const page = await eventsAfter(api, id, after);
    if (page.data.length === 0) return after;
    after = page.data.at(-1).id;
  }
}

function sayer(io: CommandIo, json: boolean): Say {
  return (line, value) => io.stdout.write(json ? `${JSON.stringify(value)}\n` : `${line}\n`);
}

async function decide(
  api: Api,
  say: Say,
  executionId: string,
  approvalId: string,
  decision: Decision,
  reason: string | undefined,
) {
  await api.must(
    'POST',
    `/api/v1/runtime/executions/${executionId}/approvals/${approvalId}/${decision}`,
    reason === undefined ? {} : { reason },
    [200],
    decision,
  );
  say(`${decision === 'approve' ? 'approved' : 'denied'} ${approvalId}`, { decision, approval_id: approvalId });
}

/**
 * Runs `fn` with an execution worker in this process (and the scripted local model when the agent's provider is
 * it: its address is set on the provider for this run).
 */
async function withWorker(
  apps: EngineApps,
  api: Api,
  agentId: string | null,
  fn: (worker: ReturnType<typeof createExecutionWorker>, scripted: boolean) => Promise<number>,
): Promise<number> {
  const config = agentId
    ? await api.must('GET', `/api/v1/runtime/agents/${agentId}/config`, undefined, [200], 'agent configuration')
    : undefined;
  const provider = config?.ai_provider_id
    ? await api.must('GET', `/api/v1/runtime/providers/${config.ai_provider_id}`, undefined, [200], 'provider')
    : undefined;
  const scripted = provider?.text_model === SCRIPTED_MODEL ? await startScriptedModel() : undefined;
  const worker = createExecutionWorker(apps.runtime, {
    ...apps.runtime.config.executions,
    concurrency: 4,
    pollMs: 100,
  });
  try {
    if (scripted) {
      const { id: _id, api_key_set: _set, created_at: _c, updated_at: _u, ...rest } = provider;
      await api.must(
        'PUT',
        `/api/v1/runtime/providers/${provider.id}`,
        { ...pick(rest, ['type', 'name', 'text_model', 'is_default']), base_url: scripted.url },
        [200],
        'scripted model address',
      );
    }
    apps.runtime.extensions.executions = worker;
    worker.start();
    return await fn(worker, scripted !== undefined);
  } finally {
    await worker.stop();
    await scripted?.close();
  }
}

/**
 * Prints the execution's events after `from` as they are stored until it settles (exit 0 when it succeeded) or waits for an
 * approval: `onApproval` decides it (true: keep following) or not (false: exit 0, still waiting).
 */
async function follow(
  api: Api,
  worker: ReturnType<typeof createExecutionWorker>,
  say: Say,
  id: string,
  timeoutMs: number,
  from: number,
  onApproval: (approvalId: string) => Promise<boolean>,
): Promise<number> {
  let after = from;
  worker.wake();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = await eventsAfter(api, id, after);
    for (const event of page.data as { id: number; type: string; data: any }[]) {
      after = event.id;
      say(describeEvent(event), event);
    }
    const execution = await api.must('GET', `/api/v1/runtime/executions/${id}`, undefined, [200], 'execution');
    if (FINAL.has(execution.state) && !execution.compensation_pending && page.data.length === 0) {
      const action = execution.action;
      say(
        action
          ? `\n${action.type}: ${action.content ?? ''}\n${JSON.stringify(action.data ?? {})}`
          : `\n${execution.state}`,
        { state: execution.state, action: action ?? null, error: execution.error ?? null },
      );
      return execution.state === 'succeeded' ? 0 : 1;
    }
    if (execution.state === 'waiting_for_approval' && page.data.length === 0) {
      if (!(await onApproval(execution.wait?.approval_id as string))) return 0;
      worker.wake();
    }
    if (Date.now() > deadline) throw refused(`the execution ${id} did not settle in time (state ${execution.state})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function pick(value: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(
    keys.filter((key) => value[key] !== undefined && value[key] !== null).map((key) => [key, value[key]]),
  );
}

function describeEvent(event: { type: string; data: any }): string {
  const data = event.data ?? {};
  if (event.type.startsWith('step.'))
    return `  ${event.type.padEnd(12)} ${String(data.node_id).padEnd(14)} ${data.node_type ?? ''}${data.attempts > 1 ? ` (attempt ${data.attempts})` : ''}`;
  return `${event.type}${data.action?.type ? ` → ${data.action.type}` : ''}${data.error?.code ? ` (${data.error.code})` : ''}`;
}
