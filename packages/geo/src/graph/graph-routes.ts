import { type App, checkIdempotencyKey, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { requireWorkspace } from '../auth/geo-auth.ts';
import type { GeoContext } from '../context.ts';
import { commonErrors, ErrorSchema, IdempotencyHeaders, keySecurity, Uuid } from '../http-schemas.ts';
import { authenticated, principalOf } from '../routes-auth.ts';
import { GraphMutationBody, GraphSchema, MAX_RELATIONS, MAX_TARGETS, ReceiptSchema } from './graph-schemas.ts';
import { type GraphMutation, mutateGraph, readGraph } from './graph-service.ts';

const tags = ['target-graph'];

export function registerGraphRoutes(app: App, ctx: GeoContext): void {
  app.get(
    '/api/v1/geo/target-graph',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Read the target graph',
        description: `Needs \`geo:read\`. Canonical targets (merged duplicates appear only as aliases) and relations by key. A graph holds at most ${MAX_TARGETS} targets and ${MAX_RELATIONS} relations, so the answer is bounded. \`includeHistory=true\` adds the immutable mutation history (oldest first, at most 1000 entries).`,
        querystring: Type.Object({
          workspaceId: Uuid('The workspace'),
          projectId: Type.Optional(Uuid("The project; absent = the workspace's default graph")),
          includeHistory: Type.Optional(Type.Boolean({ default: false })),
        }),
        response: { 200: GraphSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await requireWorkspace(ctx, principalOf(request), request.query.workspaceId);
      return readGraph(ctx, { ...request.query, includeHistory: request.query.includeHistory ?? false, workspaceId });
    },
  );

  app.post(
    '/api/v1/geo/target-graph',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Import a graph or merge canonical targets',
        description: `Needs \`geo:write\` and an \`Idempotency-Key\`: the same key and body replays the first receipt (\`Idempotent-Replayed: true\`); the same key with another body is a 409; two concurrent first uses apply one mutation (the other gets the replay or a 409 with \`Retry-After\`). \`operation: "import"\` upserts targets by key (up to ${MAX_TARGETS}) and adds relations by key (up to ${MAX_RELATIONS}). \`operation: "merge"\` folds \`duplicateKeys\` into \`canonicalKey\`: their relations are re-pointed, self-loops and duplicate edges dropped, their keys and aliases kept as aliases of the canonical target. The resulting graph must be acyclic: an invalid graph (unknown key, repeated key, alias clash) or a cyclic one is a 422 whose message and details name the problem (a cycle as \`a → b → a\`), and nothing is written. Every mutation is an immutable history entry.`,
        headers: IdempotencyHeaders(true),
        body: GraphMutationBody,
        response: { 200: ReceiptSchema, 409: ErrorSchema, 422: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const key = checkIdempotencyKey(request.headers['idempotency-key'], true)!;
      const body = request.body as GraphMutation;
      const workspaceId = await requireWorkspace(ctx, principal, body.workspaceId);
      return sendIdempotent(
        request,
        reply,
        await mutateGraph(ctx, principal, { ...body, workspaceId }, key, request.body),
      );
    },
  );
}
