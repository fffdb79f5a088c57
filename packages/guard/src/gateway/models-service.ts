import type { GuardContext } from '../context.ts';
import { errorObject, GatewayErrors } from './gateway-errors.ts';

/** What GET /v1/models answers: a status and a JSON body. */
export interface ModelsAnswer {
  status: number;
  body: string;
}

/**
 * The upstream's model list, fetched with the gateway's own upstream key (`AI_API_KEY`) from `AI_MODEL_URL`
 * + `/models` and passed through unchanged (an upstream error keeps its status and OpenAI-style body). With
 * `AI_PROVIDER=MANAGED_MODEL` the list is the one configured model.
 */
export async function listUpstreamModels(ctx: GuardContext): Promise<ModelsAnswer> {
  const { ai, gateway } = ctx.config;
  if (ai.provider === 'MANAGED_MODEL') {
    const id = ai.managedModel.modelId ?? ai.model;
    return {
      status: 200,
      body: JSON.stringify({ object: 'list', data: [{ id, object: 'model', created: 0, owned_by: 'managed-model' }] }),
    };
  }
  if (!ai.modelUrl) throw GatewayErrors.notConfigured();
  const timeout = AbortSignal.timeout(gateway.timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${ai.modelUrl.replace(/\/+$/, '')}/models`, {
      headers: { accept: 'application/json', ...(ai.apiKey ? { authorization: `Bearer ${ai.apiKey}` } : {}) },
      redirect: 'manual',
      signal: timeout,
    });
    text = await response.text();
  } catch (error) {
    if (timeout.aborted) throw GatewayErrors.timeout(gateway.timeoutMs);
    throw GatewayErrors.upstreamUnreachable((error as Error).name);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (response.status >= 200 && response.status < 300) {
    if (!Array.isArray((parsed as { data?: unknown } | undefined)?.data)) {
      return {
        status: 502,
        body: JSON.stringify({
          error: errorObject('upstream_invalid_response', 'The upstream answered with a body that is not a model list'),
        }),
      };
    }
    return { status: 200, body: text };
  }
  const status = response.status >= 400 && response.status <= 599 ? response.status : 502;
  const error = (parsed as { error?: { message?: unknown } } | undefined)?.error;
  return typeof error?.message === 'string'
    ? { status, body: text }
    : {
        status,
        body: JSON.stringify({ error: errorObject('upstream_error', `The upstream answered HTTP ${response.status}`) }),
      };
}
