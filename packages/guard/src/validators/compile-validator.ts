import type { AiValidatorClient } from '../ai/ai-validator.ts';
import { compileUserRegex } from '../detect/user-patterns.ts';
import { compileSchemaRule } from '../sandbox/schema-rule.ts';
import type { UserWork } from '../sandbox/user-work.ts';
import {
  BUILTIN_VALIDATORS,
  type GuardrailInput,
  type GuardrailOutcome,
  isBuiltinValidator,
} from './builtin-validators.ts';
import type { ValidatorRow } from './validator-store.ts';

export const VALIDATOR_TYPES = ['BUILTIN', 'REGEX', 'SCHEMA', 'AI_PROMPT'] as const;
export type ValidatorType = (typeof VALIDATOR_TYPES)[number];

/** `expected_response` values of a REGEX validator that pass when the rule matches the text (the default). */
export const REGEX_PASS_ON_MATCH = ['MATCH', 'YES', 'TRUE', '1'] as const;
/** `expected_response` values of a REGEX validator that pass when the rule does not match the text. */
export const REGEX_PASS_ON_NO_MATCH = ['NO_MATCH', 'NO', 'FALSE', '0'] as const;

/** What a REGEX validator's `expected_response` asks for (ignoring case and surrounding space; empty = MATCH). */
export function regexWantsMatch(expectedResponse: string): boolean | undefined {
  const value = expectedResponse.trim().toUpperCase();
  if (value === '' || (REGEX_PASS_ON_MATCH as readonly string[]).includes(value)) return true;
  if ((REGEX_PASS_ON_NO_MATCH as readonly string[]).includes(value)) return false;
  return undefined;
}

export interface CompiledValidator {
  name: string;
  /** How the result is labelled in `validator_results`: AI validators are `AI_PROMPT`, the rest `VALIDATOR`. */
  resultType: 'AI_PROMPT' | 'VALIDATOR';
  run(input: GuardrailInput, env: ValidatorEnv): Promise<GuardrailOutcome>;
}

/** What a validator may use while it runs. */
export interface ValidatorEnv {
  ai: AiValidatorClient | undefined;
  /** REGEX and SCHEMA rules run there, off the event loop. */
  userWork: UserWork;
  /** Epoch ms by which the validator must finish (DetectionTimeout after it). */
  deadline: number;
}

/** Throws an Error whose message says why the definition cannot run; used on create and on import. */
export function checkValidatorDefinition(type: string, rule: string, expectedResponse: string): void {
  switch (type) {
    case 'BUILTIN':
      if (!isBuiltinValidator(rule)) {
        throw new Error(`rule must name a built-in validator (${Object.keys(BUILTIN_VALIDATORS).join(', ')})`);
      }
      return;
    case 'REGEX':
      compileUserRegex(rule);
      if (regexWantsMatch(expectedResponse) === undefined) {
        throw new Error(
          `expected_response of a REGEX validator must be one of ${REGEX_PASS_ON_MATCH.join(', ')} (pass when the rule matches) or ${REGEX_PASS_ON_NO_MATCH.join(', ')} (pass when it does not)`,
        );
      }
      return;
    case 'SCHEMA':
      compileSchemaRule(rule);
      return;
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
      compileUserRegex(rule);
      const wantMatch = regexWantsMatch(expected) !== false;
      return {
        name,
        resultType: 'VALIDATOR',
        run: async ({ text }, env) => {
          const passed = (await env.userWork.testRegex(rule, text, env.deadline)) === wantMatch;
          return passed
            ? { passed, confidence: 1, rule: 'DETERMINISTIC' }
            : {
                passed,
                confidence: 1,
                rule: 'DETERMINISTIC',
                reason: wantMatch ? 'text does not match' : 'text matches a forbidden pattern',
              };
        },
      };
    }
    case 'SCHEMA': {
      compileSchemaRule(rule);
      return {
        name,
        resultType: 'VALIDATOR',
        run: async ({ text }, env) => {
          const outcome = await env.userWork.validateSchema(rule, text, env.deadline);
          return outcome.passed
            ? { passed: true, confidence: 1, rule: 'DETERMINISTIC' }
            : {
                passed: false,
                confidence: 1,
                rule: 'DETERMINISTIC',
                reason: outcome.reason ?? 'text does not satisfy the schema',
              };
        },
      };
    }
    default:
      return {
        name,
        resultType: 'AI_PROMPT',
        run: async ({ redactedText }, { ai }) => {
          if (!ai)
            return { passed: false, confidence: null, rule: 'FAIL_CLOSED', reason: 'no AI upstream is configured' };
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
