import { type App, checkIdempotencyKey, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { requirePermission, requireWorkspace } from '../auth/geo-auth.ts';
import type { GeoContext } from '../context.ts';
import { DatasetRecordSchema } from '../datasets/dataset-schemas.ts';
import {
  commonErrors,
  ErrorSchema,
  IdempotencyHeaders,
  keySecurity,
  Nullable,
  Timestamp,
  Uuid,
} from '../http-schemas.ts';
import { authenticated, principalOf } from '../routes-auth.ts';
import {
  ACTION_TRANSITIONS,
  type ActionTransition,
  draftAction,
  getAction,
  transitionAction,
} from './action-service.ts';

const tags = ['actions'];
const Transition = Type.Object({
  id: Type.String(),
  from: Type.String(),
  to: Type.String(),
  keyId: Nullable(Type.String()),
  via: Type.String({ description: '`rest` or `mcp`' }),
  note: Nullable(Type.String()),
  at: Timestamp,
});
const ActionSchema = Type.Intersect([DatasetRecordSchema, Type.Object({ transitions: Type.Array(Transition) })]);
const Params = Type.Object({ actionId: Type.String({ maxLength: 64 }) });
const TransitionBody = Type.Object(
  { workspaceId: Uuid('The workspace'), note: Type.Optional(Type.String({ maxLength: 1000 })) },
  { additionalProperties: false },
);

const PATHS: Record<ActionTransition, string> = {
  requestApproval: 'request-approval',
  approve: 'approve',
  reject: 'reject',
  execute: 'execute',
};

export function registerActionRoutes(app: App, ctx: GeoContext): void {
  app.post(
    '/api/v1/geo/actions',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Draft a governed action',
        description:
          'Needs `geo:draft`. Creates an action in state `proposed` (nothing is executed or published). Workflow: `proposed` → (`geo:write`, request-approval or the MCP tool) `approval_review` → (`geo:approve`) `approved` or `rejected` → (`geo:execute`) `executed`; each transition is recorded. `Idempotency-Key` is optional here.',
        headers: IdempotencyHeaders(false),
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            title: Type.String({ minLength: 1, maxLength: 300 }),
            kind: Type.String({
              minLength: 1,
              maxLength: 64,
              description: 'e.g. `publish_content`, `update_schema_markup`',
            }),
            description: Type.Optional(Type.String({ maxLength: 5000 })),
            payload: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown())),
            recommendationId: Type.Optional(
              Uuid('The recommendation this action follows (must exist in the workspace)'),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: ActionSchema, 404: ErrorSchema, 409: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:draft'),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const key = checkIdempotencyKey(request.headers['idempotency-key'], false);
      const workspaceId = await requireWorkspace(ctx, principal, request.body.workspaceId);
      return sendIdempotent(request, reply, await draftAction(ctx, principal, { ...request.body, workspaceId }, key));
    },
  );

  app.get(
    '/api/v1/geo/actions/:actionId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Read an action and its recorded transitions',
        description: 'Needs `geo:read`. 404 when the workspace has no such action.',
        params: Params,
        querystring: Type.Object({ workspaceId: Uuid('The workspace') }),
        response: { 200: ActionSchema, 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await requireWorkspace(ctx, principalOf(request), request.query.workspaceId);
      return getAction(ctx, workspaceId, request.params.actionId);
    },
  );

  for (const [transition, path] of Object.entries(PATHS) as [ActionTransition, string][]) {
    const rule = ACTION_TRANSITIONS[transition];
    app.post(
      `/api/v1/geo/actions/:actionId/${path}`,
      {
        schema: {
          tags,
          security: keySecurity,
          summary: `Move an action from ${rule.from.join('/')} to ${rule.to}`,
          description: `Needs \`${rule.permission}\`. A wrong state is a 409 \`GEO_ACTION_INVALID_STATE\`; the transition is recorded.${transition === 'requestApproval' ? ' Only moves the action into review: it is never executed or published by this call.' : ''}`,
          params: Params,
          body: TransitionBody,
          response: { 200: ActionSchema, 404: ErrorSchema, 409: ErrorSchema, ...commonErrors },
        },
        preParsing: authenticated(ctx),
      },
      async (request) => {
        const principal = principalOf(request);
        requirePermission(principal, rule.permission);
        const workspaceId = await requireWorkspace(ctx, principal, request.body.workspaceId);
        return transitionAction(ctx, principal, {
          workspaceId,
          actionId: request.params.actionId,
          transition,
          note: request.body.note,
          via: 'rest',
        });
      },
    );
  }
}
