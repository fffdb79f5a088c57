import { Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../http-schemas.ts';

export const MAX_TARGETS = 10_000;
export const MAX_RELATIONS = 50_000;

const Key = Type.String({ minLength: 1, maxLength: 200, description: "The target's stable key (unique in its graph)" });

export const TargetInput = Type.Object(
  {
    key: Key,
    name: Type.String({ minLength: 1, maxLength: 500 }),
    kind: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'e.g. `brand`, `product`, `page`, `topic`; default `entity`',
      }),
    ),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    aliases: Type.Optional(Type.Array(Key, { maxItems: 50 })),
    attributes: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const RelationInput = Type.Object(
  {
    from: Key,
    to: Key,
    kind: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'e.g. `parent_of`, `covers`; default `related_to`' }),
    ),
  },
  { additionalProperties: false },
);

export const GraphMutationBody = Type.Union([
  Type.Object(
    {
      operation: Type.Literal('import'),
      workspaceId: Uuid('The workspace'),
      projectId: Type.Optional(Uuid("The project; absent = the workspace's default graph")),
      targets: Type.Array(TargetInput, { maxItems: MAX_TARGETS }),
      relations: Type.Array(RelationInput, { maxItems: MAX_RELATIONS }),
    },
    {
      additionalProperties: false,
      description: 'Upserts targets by key and adds relations (the graph must stay acyclic)',
    },
  ),
  Type.Object(
    {
      operation: Type.Literal('merge'),
      workspaceId: Uuid('The workspace'),
      projectId: Type.Optional(Uuid('The project')),
      canonicalKey: Key,
      duplicateKeys: Type.Array(Key, { minItems: 1, maxItems: 100, uniqueItems: true }),
    },
    {
      additionalProperties: false,
      description: 'Folds duplicates into the canonical target: relations re-pointed, keys kept as aliases',
    },
  ),
]);

export const TargetSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  name: Type.String(),
  kind: Type.String(),
  url: Nullable(Type.String()),
  aliases: Type.Array(Type.String()),
  attributes: Type.Record(Type.String(), Type.Unknown()),
  version: Type.Integer({ description: 'Increments on every change to the target' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const RelationSchema = Type.Object({
  id: Type.String(),
  from: Type.String({ description: 'Key of the source target' }),
  to: Type.String({ description: 'Key of the destination target' }),
  fromId: Type.String(),
  toId: Type.String(),
  kind: Type.String(),
  createdAt: Timestamp,
});

export const ReceiptSchema = Type.Object({
  mutationId: Type.String(),
  operation: Type.Union([Type.Literal('import'), Type.Literal('merge')]),
  workspaceId: Type.String(),
  projectId: Nullable(Type.String()),
  targetsCreated: Type.Integer(),
  targetsUpdated: Type.Integer(),
  relationsCreated: Type.Integer(),
  relationsRepointed: Type.Integer(),
  merged: Type.Array(Type.String({ description: 'Keys folded into the canonical target' })),
  canonicalKey: Nullable(Type.String()),
  graphVersion: Type.Integer({ description: 'Number of mutations applied to this graph so far' }),
  createdAt: Timestamp,
});

export const HistoryEntry = Type.Object({
  mutationId: Type.String(),
  operation: Type.String(),
  keyId: Nullable(Type.String()),
  summary: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
});

export const GraphSchema = Type.Object({
  workspaceId: Type.String(),
  projectId: Nullable(Type.String()),
  version: Type.Integer({ description: 'Number of mutations applied' }),
  targets: Type.Array(TargetSchema),
  relations: Type.Array(RelationSchema),
  history: Type.Optional(
    Type.Array(HistoryEntry, { description: 'Immutable mutation history, oldest first (includeHistory=true)' }),
  ),
});
