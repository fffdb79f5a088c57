import { checkOutboundUrl, isUniqueViolation, toIsoString } from '@keel/core';
import type { GeoContext } from '../context.ts';
import { uuidv7 } from '../ids.ts';
import { chatCompletionsClient, type EngineClient } from './engine-client.ts';
import { MeasureErrors } from './measure-errors.ts';
import { deactivateEngine, type EngineRow, insertEngine, listEngines } from './measure-store.ts';

export interface EngineInput {
  name: string;
  provider: 'chat_completions';
  baseUrl: string;
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
    baseUrl: row.base_url,
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

/**
 * Configures an engine: any chat-completions API. The base URL passes the SSRF policy now and again at every
 * connection; the API key is sealed with the service's secret box and never returned.
 */
export async function createEngine(ctx: GeoContext, workspaceId: string, input: EngineInput) {
  const allowPrivate = ctx.config.core.allowPrivateUrls;
  checkOutboundUrl(input.baseUrl, { allowPrivate });
  const row = {
    id: uuidv7(),
    workspace_id: workspaceId,
    name: input.name.trim(),
    provider: input.provider,
    base_url: input.baseUrl.replace(/\/+$/, ''),
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

/** The HTTP client of a configured engine (its key unsealed only here, in memory). */
export function clientForEngine(ctx: GeoContext, row: EngineRow): EngineClient {
  return chatCompletionsClient({
    baseUrl: row.base_url,
    model: row.model,
    apiKey: row.api_key === null ? null : ctx.secrets.decrypt(row.api_key),
    timeoutMs: Number(row.timeout_ms),
    allowPrivate: ctx.config.core.allowPrivateUrls,
  });
}
