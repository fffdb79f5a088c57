import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { Decision } from '../detect/types.ts';

/**
 * How a validator's failure is decided (shown as `decision_rule` in `validator_results`):
 * - `DETERMINISTIC`: a rule-based check, sure of its verdict (confidence 1); a failure blocks.
 * - `MODEL_CONFIDENCE`: an AI validator whose model stated its confidence; a failure blocks when that
 *   confidence is at least the block threshold.
 * - `VERDICT_ONLY`: an AI validator whose model gave no usable confidence; confidence is null (none is
 *   invented) and the verdict alone decides: a failure blocks.
 * - `FAIL_CLOSED`: an AI validator that could not run (no upstream, upstream failed); confidence is null and
 *   it fails and blocks.
 */
export type DecisionRule = 'DETERMINISTIC' | 'MODEL_CONFIDENCE' | 'VERDICT_ONLY' | 'FAIL_CLOSED';

export interface GuardrailOutcome {
  passed: boolean;
  /** How sure the validator is of its verdict, 0..1; null when nothing measured it (see `rule`). */
  confidence: number | null;
  rule: DecisionRule;
  /** Why it failed, in words safe to show (never the offending value). */
  reason?: string;
}

export interface GuardrailInput {
  text: string;
  /** The text with every reported detection replaced: what AI validators are shown. */
  redactedText: string;
  decision: Decision;
}

type BuiltinCheck = (input: GuardrailInput) => GuardrailOutcome;

const formatAjv = new Ajv({ strict: false });
addFormats.default(formatAjv);

const sure = (passed: boolean, reason: string): GuardrailOutcome =>
  passed ? { passed, confidence: 1, rule: 'DETERMINISTIC' } : { passed, confidence: 1, rule: 'DETERMINISTIC', reason };

function noCategory(category: string, label: string): BuiltinCheck {
  return ({ decision }) =>
    sure(!decision.detections.some((d) => d.confidence_explanation.category === category), `${label} detected`);
}

function formatCheck(format: string): BuiltinCheck {
  const validate = formatAjv.compile({ type: 'string', format });
  return ({ text }) => sure(validate(text.trim()), `text is not a valid ${format}`);
}

function parsesAsJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"']+/i;

/**
 * The validators guard ships. A guardrail name or `expected_format` may name one directly; a stored validator
 * of type BUILTIN names one in its `rule`.
 */
export const BUILTIN_VALIDATORS: Readonly<Record<string, BuiltinCheck>> = {
  no_pii: noCategory('PII', 'personal data'),
  no_secrets: noCategory('SECRET', 'a secret'),
  no_prompt_injection: noCategory('INJECTION', 'a prompt-injection phrase'),
  no_blocklisted: noCategory('BLOCKLIST', 'a blocklisted value'),
  no_urls: ({ text }) => sure(!URL_PATTERN.test(text), 'a URL is present'),
  not_empty: ({ text }) => sure(text.trim().length > 0, 'text is empty'),
  json: ({ text }) => sure(parsesAsJson(text) !== undefined || text.trim() === 'null', 'text is not valid JSON'),
  json_object: ({ text }) => {
    const value = parsesAsJson(text);
    return sure(typeof value === 'object' && value !== null && !Array.isArray(value), 'text is not a JSON object');
  },
  json_array: ({ text }) => sure(Array.isArray(parsesAsJson(text)), 'text is not a JSON array'),
  number: ({ text }) => sure(/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text.trim()), 'text is not a number'),
  integer: ({ text }) => sure(/^-?(0|[1-9]\d*)$/.test(text.trim()), 'text is not an integer'),
  boolean: ({ text }) => sure(/^(true|false)$/i.test(text.trim()), 'text is not true or false'),
  email: formatCheck('email'),
  uuid: formatCheck('uuid'),
  date: formatCheck('date'),
  'date-time': formatCheck('date-time'),
  url: formatCheck('uri'),
  ipv4: formatCheck('ipv4'),
  ipv6: formatCheck('ipv6'),
};

export function isBuiltinValidator(name: string): boolean {
  return Object.hasOwn(BUILTIN_VALIDATORS, name);
}
