import type { IncomingHttpHeaders } from 'node:http';
import { GatewayErrors } from './gateway-errors.ts';

export type GuardrailsMode = 'final-only' | 'stream-sync' | 'stream-async';
export type OnFail = 'filter' | 'halt';

/** What the X-GW-* request headers ask for. */
export interface GatewayOptions {
  rid: string;
  guardrails: string[];
  mode: GuardrailsMode;
  onFail: OnFail;
  restore: boolean;
}

const RID = /^[A-Za-z0-9._:-]{1,128}$/;
const GUARDRAIL = /^[\x21-\x2B\x2D-\x7E](?:[\x20-\x2B\x2D-\x7E]{0,98}[\x21-\x2B\x2D-\x7E])?$/;
const MODES: readonly GuardrailsMode[] = ['final-only', 'stream-sync', 'stream-async'];
const ON_FAIL: readonly OnFail[] = ['filter', 'halt'];

let lastRidMs = 0;

/** `LLM-GW-<epoch ms>`, strictly increasing within the process so two calls never share one. */
export function generateRid(now = Date.now()): string {
  lastRidMs = Math.max(now, lastRidMs + 1);
  return `LLM-GW-${lastRidMs}`;
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw GatewayErrors.invalidHeader(headerName(name), 'send it once');
  return value.trim();
}

function headerName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase()).replace('X-Gw', 'X-GW');
}

/** The rid a response should carry even when the headers are invalid (error responses need one too). */
export function ridOrGenerated(headers: IncomingHttpHeaders): string {
  const value = headers['x-gw-rid'];
  return typeof value === 'string' && RID.test(value.trim()) ? value.trim() : generateRid();
}

/** Reads and checks the X-GW-* headers; an invalid value is a 400 `invalid_header` in the gateway shape. */
export function parseGatewayHeaders(headers: IncomingHttpHeaders): GatewayOptions {
  const ridHeader = single(headers, 'x-gw-rid');
  if (ridHeader !== undefined && !RID.test(ridHeader)) {
    throw GatewayErrors.invalidHeader('X-GW-RID', 'use 1 to 128 characters of A-Z, a-z, 0-9, ".", "_", ":" or "-"');
  }
  const guardrails: string[] = [];
  const list = single(headers, 'x-gw-guardrails');
  if (list !== undefined && list !== '') {
    for (const raw of list.split(',')) {
      const name = raw.trim();
      if (!GUARDRAIL.test(name)) {
        throw GatewayErrors.invalidHeader(
          'X-GW-Guardrails',
          'a comma-separated list of validator names (1 to 100 printable characters each)',
        );
      }
      if (!guardrails.includes(name)) guardrails.push(name);
    }
    if (guardrails.length > 32) throw GatewayErrors.invalidHeader('X-GW-Guardrails', 'name at most 32 validators');
  }
  const mode = single(headers, 'x-gw-guardrails-mode')?.toLowerCase() ?? 'final-only';
  if (!(MODES as readonly string[]).includes(mode)) {
    throw GatewayErrors.invalidHeader('X-GW-Guardrails-Mode', `one of ${MODES.join(', ')}`);
  }
  const onFail = single(headers, 'x-gw-guardrails-onfail')?.toLowerCase() ?? 'filter';
  if (!(ON_FAIL as readonly string[]).includes(onFail)) {
    throw GatewayErrors.invalidHeader('X-GW-Guardrails-OnFail', `one of ${ON_FAIL.join(', ')}`);
  }
  const restore = single(headers, 'x-gw-restore')?.toLowerCase() ?? 'false';
  if (restore !== 'true' && restore !== 'false') throw GatewayErrors.invalidHeader('X-GW-Restore', 'true or false');
  return {
    rid: ridHeader ?? generateRid(),
    guardrails,
    mode: mode as GuardrailsMode,
    onFail: onFail as OnFail,
    restore: restore === 'true',
  };
}
