import type { App } from '@keel/core';
import { Type } from 'typebox';
import type { GuardContext } from '../context.ts';
import { adminSecurity, commonErrors, ErrorSchema, IdParams } from '../http-schemas.ts';
import { PatternInputSchema, PatternSchema } from './pattern-schemas.ts';
import { createPattern, getPatterns, removePattern } from './pattern-service.ts';

const tags = ['patterns'];

export function registerPatternRoutes(app: App, ctx: GuardContext): void {
  app.post(
    '/patterns',
    {
      schema: {
        tags,
        security: adminSecurity,
        summary: 'Create a pattern',
        description: 'Regex is Go (RE2) syntax. An invalid regex is a 400; a Name that exists is a 409.',
        body: PatternInputSchema,
        response: { 201: PatternSchema, 404: ErrorSchema, 409: ErrorSchema, ...commonErrors },
      },
      config: { permission: 'patterns:admin' },
    },
    async (request, reply) => reply.status(201).send(await createPattern(ctx, request.body)),
  );

  app.get(
    '/patterns',
    {
      schema: {
        tags,
        security: adminSecurity,
        summary: 'List every pattern',
        response: { 200: Type.Array(PatternSchema), ...commonErrors },
      },
      config: { permission: 'patterns:admin' },
    },
    async () => getPatterns(ctx),
  );

  app.delete(
    '/patterns/:id',
    {
      schema: {
        tags,
        security: adminSecurity,
        summary: 'Delete a pattern',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), 404: ErrorSchema, ...commonErrors },
      },
      config: { permission: 'patterns:admin' },
    },
    async (request, reply) => {
      await removePattern(ctx, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
