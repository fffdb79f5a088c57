import { Type } from 'typebox';

const Score = Type.String({
  pattern: '^(0\\.\\d{2}|1\\.00)$',
  description: 'Two decimals, 0.00 to 1.00',
  examples: ['0.62'],
});

export const DetectRequestSchema = Type.Object(
  {
    text: Type.String({ description: 'Text to analyze' }),
    rid: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^[\\x20-\\x7E]+$',
        description:
          'Request id for audit correlation (printable ASCII, up to 200 characters). Logged as NO-RID when omitted.',
      }),
    ),
    expected_format: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'Name of a stored validator or of a built-in format validator (json, json_object, json_array, email, uuid, date, date-time, url, ipv4, ipv6, number, integer, boolean) the text must satisfy.',
      }),
    ),
    guardrails: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 32,
        description: 'Validators to run by name: stored validators, or built-in validator names.',
      }),
    ),
  },
  { additionalProperties: true },
);

export const ConfidenceExplanationSchema = Type.Object({
  source: Type.Union([Type.Literal('HYBRID'), Type.Literal('LOCAL'), Type.Literal('BLOCKLIST')], {
    description:
      'HYBRID: regex score combined with the upstream model. LOCAL: with the local deterministic scorer. BLOCKLIST: a blocklisted value.',
  }),
  regex_score: Score,
  ai_score: Score,
  category: Type.String({ examples: ['PII', 'SECRET', 'INJECTION', 'BLOCKLIST'] }),
  pattern_active: Type.Boolean(),
  final_score: Score,
});

export const DetectionSchema = Type.Object({
  type: Type.String({ examples: ['EMAIL', 'CREDIT_CARD', 'PHONE_NUMBER'] }),
  value: Type.String({ description: 'The matched text' }),
  placeholder: Type.String({ examples: ['[EMAIL]'] }),
  start: Type.Integer({ description: 'Offset of the first character, in UTF-16 code units (JavaScript string index)' }),
  end: Type.Integer({ description: 'Offset after the last character (exclusive), in UTF-16 code units' }),
  confidence_score: Score,
  confidence_explanation: ConfidenceExplanationSchema,
});

export const ValidatorResultSchema = Type.Object({
  name: Type.String(),
  type: Type.Union([Type.Literal('AI_PROMPT'), Type.Literal('VALIDATOR')]),
  passed: Type.Boolean(),
  confidence_score: Type.Union([Score, Type.Null()], {
    description:
      'Two decimals; null when nothing measured the verdict (an AI validator whose model gave no confidence, or that could not run)',
  }),
  decision_rule: Type.Union(
    [
      Type.Literal('DETERMINISTIC'),
      Type.Literal('MODEL_CONFIDENCE'),
      Type.Literal('VERDICT_ONLY'),
      Type.Literal('FAIL_CLOSED'),
    ],
    {
      description:
        'How a failure is decided. DETERMINISTIC: a rule-based check (confidence 1.00), a failure blocks. MODEL_CONFIDENCE: the model stated its confidence, a failure blocks at or above CONFIDENCE_BLOCK_THRESHOLD. VERDICT_ONLY: the model gave no confidence, confidence_score is null and a failure blocks on the verdict alone. FAIL_CLOSED: the AI validator could not run; it fails and blocks.',
    },
  ),
  reason: Type.Optional(Type.String({ description: 'Why the validator failed (never the offending value)' })),
});

export const DetectResponseSchema = Type.Object({
  redacted_text: Type.Optional(Type.String({ description: 'Omitted when nothing was redacted' })),
  detections: Type.Array(DetectionSchema),
  validator_results: Type.Array(ValidatorResultSchema),
  breakdown: Type.Record(Type.String(), Type.Integer(), { description: 'Reported detections per type' }),
  blocked: Type.Boolean({ description: 'true means hard block' }),
  contains_pii: Type.Boolean(),
  overall_confidence: Score,
  message: Type.String(),
});
