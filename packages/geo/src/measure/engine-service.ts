import { checkOutboundUrl, isUniqueViolation, toIsoString } from '@keel/core';
import type { GeoContext } from '../context.ts';
import { uuidv7 } from '../ids.ts';
import { chatCompletionsClient, type EngineClient } from './engine-client.ts';
import { managedModelClient } from './managed-model-client.ts';
import { MeasureErrors } from './measure-errors.ts';
import { deactivateEngine, type EngineRow, insertEngine, listEngines } from './measure-store.ts';

export interface EngineInput {
  name: string;
  provider: 'chat_completions' | 'managed_model';
  /** chat_completions: the API's base URL. */
  baseUrl?: string | undefined;
  /** managed_model: the AWS region. */
  region?: string | undefined;
  model: string;
  apiKey?: string | undefined;
  concurrency?: number | undefined;
  requestsPerMinute?: number | undefined;
  /** Decimal strings: price per million tokens in the provider's currency (e.g. "2.50"). */
  inputPricePerMillionTokens?: string | undefined;
  outputPricePerMillionTokens?: string | undefined;
  timeoutMs?: number | undefined;
}

/** Micro-units of a non-negative decimal string ("2.5" → 2500000), exactly, without floating point. */
export function decimalToMicros(value: string, field: string): number {
  const match = /^(\d{1,9})(?:\.(\d{1,6}))?$/.exec(value.trim());
  if (!match) throw MeasureErrors.invalid(`${field}: a decimal such as "2.50" (at most 6 decimals)`);
  return Number(match[1]) * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0'));
}

/** Micro-units as a decimal string (1234 → "0.001234"). */
export function microsToDecimal(micros: number): string {
  const whole = Math.floor(micros / 1_000_000);
  const fraction = String(micros % 1_000_000).padStart(6, '0');
  return `${whole}.${fraction}`;
}

export function mapEngine(row: EngineRow) {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    provider: row.provider,
    baseUrl: row.provider === MANAGED_MODEL ? null : row.base_url,
    region: row.region ?? null,
    model: row.model,
    hasApiKey: row.api_key !== null,
    concurrency: Number(row.concurrency),
    requestsPerMinute: Number(row.requests_per_minute),
    inputPricePerMillionTokens: microsToDecimal(Number(row.input_price_micros)),
    outputPricePerMillionTokens: microsToDecimal(Number(row.output_price_micros)),
    timeoutMs: Number(row.timeout_ms),
    createdAt: toIsoString(row.created_at),
  };
}

const MANAGED_MODEL = 'managed_model';
const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/**
 * Configures an engine: any chat-completions API, or the managed model (Amazon Bedrock). A chat-completions base
 * URL passes the SSRF policy now and again at every connection; its API key is sealed with the service's secret
 * box and never returned. A managed model is addressed by region and model id and uses the service's AWS
 * credentials (no key of its own).
 */
export async function createEngine(ctx: GeoContext, workspaceId: string, input: EngineInput) {
  const allowPrivate = ctx.config.core.allowPrivateUrls;
  let baseUrl = '';
  if (input.provider === MANAGED_MODEL) {
    if (input.region === undefined || !AWS_REGION.test(input.region))
      throw MeasureErrors.invalid('region: a managed model needs its AWS region, such as "us-east-1"');
    if (input.baseUrl !== undefined)
      throw MeasureErrors.invalid('baseUrl: a managed model is addressed by region, not by URL');
    if (input.apiKey !== undefined)
      throw MeasureErrors.invalid("apiKey: a managed model uses the service's AWS credentials, not a key of its own");
  } else {
    if (input.baseUrl === undefined) throw MeasureErrors.invalid('baseUrl: a chat-completions engine needs its URL');
    if (input.region !== undefined) throw MeasureErrors.invalid('region applies to managed models only');
    checkOutboundUrl(input.baseUrl, { allowPrivate });
    baseUrl = input.baseUrl.replace(/\/+$/, '');
  }
  const row = {
    id: uuidv7(),
    workspace_id: workspaceId,
    name: input.name.trim(),
    provider: input.provider,
    base_url: baseUrl,
    region: input.provider === MANAGED_MODEL ? input.region! : null,
    model: input.model,
    api_key: input.apiKey ? ctx.secrets.encrypt(input.apiKey) : null,
    concurrency: input.concurrency ?? 4,
    requests_per_minute: input.requestsPerMinute ?? 60,
    input_price_micros: decimalToMicros(input.inputPricePerMillionTokens ?? '0', 'inputPricePerMillionTokens'),
    output_price_micros: decimalToMicros(input.outputPricePerMillionTokens ?? '0', 'outputPricePerMillionTokens'),
    timeout_ms: input.timeoutMs ?? 60_000,
    active: 1,
    created_at: ctx.now().toISOString(),
  };
  if (row.name.length === 0) throw MeasureErrors.invalid('name: 1 to 100 characters');
  try {
    await insertEngine(ctx.db, row);
  } catch (error) {
    if (isUniqueViolation(error)) throw MeasureErrors.engineExists(JSON.stringify(row.name));
    throw error;
  }
  return mapEngine(row);
}

export async function listWorkspaceEngines(ctx: GeoContext, workspaceId: string) {
  return { items: (await listEngines(ctx.db, workspaceId)).map(mapEngine) };
}

export async function removeEngine(ctx: GeoContext, workspaceId: string, engineId: string): Promise<void> {
  if (!(await deactivateEngine(ctx.db, workspaceId, engineId.toLowerCase())))
    throw MeasureErrors.engineNotFound(engineId);
}

/** The client of a configured engine (a chat-completions key unsealed only here, in memory). */
export function clientForEngine(ctx: GeoContext, row: EngineRow): EngineClient {
  if (row.provider === MANAGED_MODEL)
    return managedModelClient({
      region: row.region ?? '',
      model: row.model,
      timeoutMs: Number(row.timeout_ms),
      endpointOverride: ctx.config.measure.managedModelEndpointOverride,
    });
  return chatCompletionsClient({
    baseUrl: row.base_url,
    model: row.model,
    apiKey: row.api_key === null ? null : ctx.secrets.decrypt(row.api_key),
    timeoutMs: Number(row.timeout_ms),
    allowPrivate: ctx.config.core.allowPrivateUrls,
  });
}
