import { Type } from 'typebox';

const Threshold = Type.Number({ minimum: 0, maximum: 1 });

export const PatternInputSchema = Type.Object({
  Name: Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: '^[A-Za-z0-9_][A-Za-z0-9_.:-]*$',
    description: 'Unique logical identifier; also the detection type and the placeholder text ([NAME])',
    examples: ['EMPLOYEE_ID'],
  }),
  Regex: Type.String({
    minLength: 1,
    maxLength: 4000,
    description:
      'Go (RE2) regular expression, matched in linear time in worker threads under DETECT_TIMEOUT_MS. Refused (400 GUARD_INVALID_REGEX, naming the limit) above 4096 characters, a compiled program above 2000 instructions, or an unbounded repetition (*, +, {n,}) repeated more than 10 times by the counted repetitions around it (`(.*a){20}`).',
    examples: ['\\bEMP-\\d{6}\\b'],
  }),
  Description: Type.Optional(Type.String({ maxLength: 2000 })),
  Category: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 32,
      pattern: '^[A-Za-z_]+$',
      description: 'Default PII; others such as SECRET, INJECTION, TOPIC',
    }),
  ),
  IsActive: Type.Optional(Type.Boolean({ description: 'Default true; inactive patterns are not evaluated' })),
  BlockThreshold: Type.Optional(Type.Union([Threshold, Type.Null()])),
  AllowThreshold: Type.Optional(Type.Union([Threshold, Type.Null()])),
});

export const PatternSchema = Type.Object({
  ID: Type.Integer(),
  Name: Type.String(),
  Regex: Type.String(),
  Description: Type.String(),
  Category: Type.String(),
  IsActive: Type.Boolean(),
  BlockThreshold: Type.Union([Type.Number(), Type.Null()]),
  AllowThreshold: Type.Union([Type.Number(), Type.Null()]),
  CreatedAt: Type.String({ format: 'date-time' }),
  UpdatedAt: Type.String({ format: 'date-time' }),
});
