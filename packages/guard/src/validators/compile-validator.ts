import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import type { AiValidatorClient } from '../ai/ai-validator.ts';
import {
  BUILTIN_VALIDATORS,
  type GuardrailInput,
  type GuardrailOutcome,
  isBuiltinValidator,
} from './builtin-validators.ts';
import type { ValidatorRow } from './validator-store.ts';

export const VALIDATOR_TYPES = ['BUILTIN', 'REGEX', 'SCHEMA', 'AI_PROMPT'] as const;
export type ValidatorType = (typeof VALIDATOR_TYPES)[number];

/** REGEX validators pass when the text matches (`MATCH`, the default) or when it does not (`NO_MATCH`). */
export const REGEX_EXPECTATIONS = ['MATCH', 'NO_MATCH'] as const;

export interface CompiledValidator {
  name: string;
  /** How the result is labelled in `validator_results`: AI validators are `AI_PROMPT`, the rest `VALIDATOR`. */
  resultType: 'AI_PROMPT' | 'VALIDATOR';
  run(input: GuardrailInput, ai: AiValidatorClient | undefined): Promise<GuardrailOutcome>;
}

const schemaAjv = new Ajv({ strict: false, allErrors: false });
addFormats.default(schemaAjv);

/** Throws an Error whose message says why the definition cannot run; used on create and on import. */
export function checkValidatorDefinition(type: string, rule: string, expectedResponse: string): void {
  switch (type) {
    case 'BUILTIN':
      if (!isBuiltinValidator(rule)) {
        throw new Error(`rule must name a built-in validator (${Object.keys(BUILTIN_VALIDATORS).join(', ')})`);
      }
      return;
    case 'REGEX':
      RE2JS.compile(rule);
      if (expectedResponse && !(REGEX_EXPECTATIONS as readonly string[]).includes(expectedResponse.toUpperCase())) {
        throw new Error('expected_response of a REGEX validator must be MATCH or NO_MATCH');
      }
      return;
    case 'SCHEMA': {
      let schema: unknown;
      try {
        schema = JSON.parse(rule);
      } catch {
        throw new Error('rule must be a JSON Schema document (it is not valid JSON)');
      }
      if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
        throw new Error('rule must be a JSON Schema object');
      }
      try {
        schemaAjv.compile(schema);
      } catch (error) {
        throw new Error(`rule is not a valid JSON Schema: ${(error as Error).message}`);
      }
      return;
    }
    case 'AI_PROMPT':
      if (!rule.trim()) throw new Error('rule must hold the prompt');
      return;
    default:
      throw new Error(`type must be one of ${VALIDATOR_TYPES.join(', ')}`);
  }
}

/** Turns a stored validator into something that runs; the definition was checked when it was stored. */
export function compileValidator(
  row: Pick<ValidatorRow, 'name' | 'type' | 'rule' | 'expected_response'>,
): CompiledValidator {
  const { name, rule } = row;
  const expected = row.expected_response.trim();
  switch (row.type) {
    case 'BUILTIN': {
      const check = BUILTIN_VALIDATORS[rule]!;
      return { name, resultType: 'VALIDATOR', run: async (input) => check(input) };
    }
    case 'REGEX': {
      const pattern = RE2JS.compile(rule);
      const wantMatch = expected.toUpperCase() !== 'NO_MATCH';
      return {
        name,
        resultType: 'VALIDATOR',
        run: async ({ text }) => {
          const passed = pattern.test(text) === wantMatch;
          return passed
            ? { passed, confidence: 1 }
            : { passed, confidence: 1, reason: wantMatch ? 'text does not match' : 'text matches a forbidden pattern' };
        },
      };
    }
    case 'SCHEMA': {
      const validate = schemaAjv.compile(JSON.parse(rule) as object);
      return {
        name,
        resultType: 'VALIDATOR',
        run: async ({ text }) => {
          let value: unknown;
          try {
            value = JSON.parse(text);
          } catch {
            return { passed: false, confidence: 1, reason: 'text is not valid JSON' };
          }
          return validate(value)
            ? { passed: true, confidence: 1 }
            : { passed: false, confidence: 1, reason: 'text does not satisfy the schema' };
        },
      };
    }
    default:
      return {
        name,
        resultType: 'AI_PROMPT',
        run: async ({ redactedText }, ai) => {
          if (!ai) return { passed: false, confidence: 1, reason: 'no AI upstream is configured' };
          return ai.judge(rule, redactedText, expected || 'YES');
        },
      };
  }
}

/** A built-in validator used by name without a stored row. */
export function compileBuiltin(name: string): CompiledValidator {
  const check = BUILTIN_VALIDATORS[name]!;
  return { name, resultType: 'VALIDATOR', run: async (input) => check(input) };
}
