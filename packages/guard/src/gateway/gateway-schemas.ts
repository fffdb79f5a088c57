import { Type } from 'typebox';
import { DetectResponseSchema } from '../detect-api/detect-schemas.ts';

const ContentPart = Type.Object(
  { type: Type.String({ description: '`text` parts are checked; other parts (images, audio, files) pass unchanged' }) },
  { additionalProperties: true },
);

const Message = Type.Object(
  {
    role: Type.Union(
      ['system', 'developer', 'user', 'assistant', 'tool', 'function'].map((role) => Type.Literal(role)),
      { description: 'Only `user` messages are checked and redacted; the others pass unchanged' },
    ),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(ContentPart), Type.Null()])),
  },
  { additionalProperties: true },
);

/** The chat-completions request: `model`, `messages` and `stream` are read; every other field passes through. */
export const ChatCompletionsRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256, description: 'Forwarded unchanged' }),
    messages: Type.Array(Message, { minItems: 1, maxItems: 10_000 }),
    stream: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);

export const GwMetaSchema = Type.Object(
  {
    rid: Type.String(),
    guardrails: Type.Array(Type.String()),
    input: Type.Array(DetectResponseSchema, { description: 'One per user message' }),
    output: Type.Array(DetectResponseSchema, { description: 'One per assistant choice (non-streaming)' }),
  },
  {
    description:
      'Detections never repeat a detected value: `value` carries the placeholder that replaced it in the forwarded text.',
  },
);

/** The gateway error object of the spec plus `gw_meta`. */
export const GatewayErrorSchema = Type.Object({
  error: Type.Object({
    message: Type.String(),
    type: Type.Literal('invalid_request_error'),
    param: Type.Null(),
    code: Type.String({
      examples: ['gw_content_blocked', 'streaming_not_supported', 'invalid_header', 'invalid_api_key'],
    }),
  }),
  gw_meta: GwMetaSchema,
});

/** An upstream error passed through: its own OpenAI-style body, with `gw_meta` added. */
export const UpstreamErrorSchema = Type.Object(
  {
    error: Type.Object(
      { message: Type.String(), type: Type.Optional(Type.Union([Type.String(), Type.Null()])) },
      { additionalProperties: true },
    ),
    gw_meta: Type.Optional(GwMetaSchema),
  },
  { additionalProperties: true },
);

export const ChatCompletionSchema = Type.Object(
  {
    id: Type.Optional(Type.String()),
    object: Type.Optional(Type.String({ examples: ['chat.completion'] })),
    choices: Type.Array(Type.Object({}, { additionalProperties: true })),
    gw_meta: GwMetaSchema,
  },
  {
    additionalProperties: true,
    description:
      'Non-streaming: the upstream chat completion, field for field, with assistant content redacted and `gw_meta` added. Streaming (`stream: true`): `text/event-stream` chunks (`chat.completion.chunk`) ending with `data: [DONE]`.',
  },
);

/** GET /v1/models: the upstream's list, passed through (fields beyond these are kept). */
export const ModelListSchema = Type.Object(
  {
    object: Type.String({ examples: ['list'] }),
    data: Type.Array(
      Type.Object(
        {
          id: Type.String({ examples: ['gpt-4o-mini'] }),
          object: Type.String({ examples: ['model'] }),
          created: Type.Optional(Type.Integer()),
          owned_by: Type.Optional(Type.String()),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);
