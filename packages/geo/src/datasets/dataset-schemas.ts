import { Type } from 'typebox';
import { Nullable, Timestamp } from '../http-schemas.ts';

/** The spec's dataset enum (Document 1, "Resources and their fields"). */
export const DATASETS = [
  'metrics',
  'recommendations',
  'actions',
  'alerts',
  'reports',
  'attribution',
  'campaigns',
  'targets',
  'content',
  'artifacts',
  'publications',
  'tracking_events',
  'experiments',
  'dashboards',
  'saved_views',
] as const;
export type DatasetName = (typeof DATASETS)[number];

/** Datasets that are not written through signals, and where their rows come from. */
export const NOT_WRITABLE: Partial<Record<DatasetName, string>> = {
  actions: 'actions are drafted with POST /api/v1/geo/actions and move through the governed workflow',
  tracking_events: 'tracking events arrive through POST /api/v2/geo/events',
  saved_views:
    'saved views are written with POST/PATCH /api/v1/geo/saved-views, which check them against their dataset',
};

export const DatasetEnum = Type.Union(
  DATASETS.map((d) => Type.Literal(d)),
  { description: 'One of the 15 datasets' },
);

export const Evidence = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64, description: 'e.g. `metric`, `url`, `report`, `query`' }),
    ref: Type.String({ minLength: 1, maxLength: 500, description: 'What the evidence is: a record id, URL or query' }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);

export const Confidence = Type.Object(
  {
    value: Type.Number({ minimum: 0, maximum: 1, description: 'Point estimate, 0–1' }),
    interval: Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: '[low, high], low ≤ value ≤ high' }),
  },
  { additionalProperties: false },
);

export const VersionContext = Type.Object({
  definitionVersion: Type.String({
    description: 'Version of the metric/report/target definition the row was computed with',
  }),
  runId: Nullable(Type.String({ description: 'The computation run that produced the row' })),
  importId: Nullable(Type.String({ description: 'The import the row came from' })),
  computedAt: Timestamp,
});

export const DatasetRecordSchema = Type.Object(
  {
    id: Type.String({ description: 'UUIDv7 (time-ordered)' }),
    dataset: Type.String(),
    workspaceId: Type.String(),
    key: Nullable(Type.String({ description: "The producer's own identifier of the row" })),
    version: VersionContext,
    data: Type.Record(Type.String(), Type.Unknown()),
    confidence: Nullable(Confidence),
    evidence: Type.Array(Evidence),
    status: Nullable(Type.String({ description: 'Governed state of actions and content' })),
    mode: Nullable(
      Type.Union([Type.Literal('observed'), Type.Literal('simulated')], { description: 'Experiments only' }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { description: 'A record of a versioned dataset' },
);

export const TrackingEventSchema = Type.Object(
  {
    id: Type.String(),
    dataset: Type.Literal('tracking_events'),
    kind: Type.Union([Type.Literal('pageview'), Type.Literal('event'), Type.Literal('ai_crawler')]),
    name: Nullable(Type.String()),
    path: Nullable(Type.String()),
    referrerHost: Nullable(Type.String()),
    aiEngine: Nullable(
      Type.String({
        description: 'AI engine the visit was referred by (chatgpt, perplexity, gemini, copilot, claude, …)',
      }),
    ),
    crawler: Nullable(Type.String({ description: 'AI crawler name for `ai_crawler` hits (GPTBot, ClaudeBot, …)' })),
    consent: Type.Boolean({
      description: 'Whether analytics consent was given (without it nothing identifying is kept)',
    }),
    visitorId: Nullable(
      Type.String({ description: 'Pseudonymous daily visitor id (keyed hash, salt destroyed after the day)' }),
    ),
    properties: Nullable(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]))),
    occurredAt: Timestamp,
    receivedAt: Timestamp,
  },
  { description: 'A stored tracking event (the `tracking_events` dataset)' },
);

export const SignalRecordInput = Type.Object(
  {
    dataset: Type.String({ description: 'Any dataset except `actions`, `tracking_events` and `saved_views`' }),
    key: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    definitionVersion: Type.String({ minLength: 1, maxLength: 64 }),
    runId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    importId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    computedAt: Type.Optional(Type.String({ format: 'date-time', description: 'Defaults to the time of the request' })),
    data: Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
      description: 'The row itself, at most 16 KiB of JSON',
    }),
    confidence: Type.Optional(Confidence),
    evidence: Type.Optional(Type.Array(Evidence, { maxItems: 20 })),
    mode: Type.Optional(Type.Union([Type.Literal('observed'), Type.Literal('simulated')])),
    status: Type.Optional(
      Type.Union([
        Type.Literal('draft'),
        Type.Literal('approval_review'),
        Type.Literal('approved'),
        Type.Literal('published'),
      ]),
    ),
    subject: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'A pseudonymous subject the row derives from; hashed on arrival, deleted with the subject',
      }),
    ),
  },
  { additionalProperties: false },
);
