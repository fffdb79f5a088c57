import { Type } from 'typebox';
import { BUILTIN_VALIDATORS } from './builtin-validators.ts';

export const ValidatorInputSchema = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: '^[A-Za-z0-9_][A-Za-z0-9_.:-]*$',
    examples: ['order_json'],
  }),
  type: Type.Union([Type.Literal('BUILTIN'), Type.Literal('REGEX'), Type.Literal('SCHEMA'), Type.Literal('AI_PROMPT')]),
  rule: Type.String({
    minLength: 1,
    maxLength: 20_000,
    description: `BUILTIN: the name of a built-in validator (${Object.keys(BUILTIN_VALIDATORS).join(', ')}). REGEX: a Go (RE2) regex, with the same bounds as a pattern's Regex. SCHEMA: a JSON Schema document (the text must be JSON that satisfies it); its pattern and patternProperties use RE2 (Go) syntax with the same bounds, and the schema is at most 32 levels deep and 2000 values. AI_PROMPT: the instruction given to the upstream model.`,
  }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  expected_response: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        'AI_PROMPT: the answer that counts as pass (default YES), compared ignoring case. REGEX: MATCH, YES, TRUE or 1 (the default is MATCH: pass when the rule matches the text) or NO_MATCH, NO, FALSE or 0 (pass when it does not), ignoring case; stored as given. Ignored otherwise.',
    }),
  ),
});

export const ValidatorSchema = Type.Object({
  ID: Type.Integer(),
  name: Type.String(),
  type: Type.String(),
  rule: Type.String(),
  description: Type.String(),
  expected_response: Type.String(),
  CreatedAt: Type.String({ format: 'date-time' }),
  UpdatedAt: Type.String({ format: 'date-time' }),
});
