import type { App } from '@keel/core';
import { Type } from 'typebox';
import type { GuardContext } from '../context.ts';
import { adminSecurity, commonErrors, ErrorSchema, IdParams } from '../http-schemas.ts';
import { ValidatorInputSchema, ValidatorSchema } from './validator-schemas.ts';
import { createValidator, getValidators, removeValidator } from './validator-service.ts';

const tags = ['validators'];
const config = { permission: 'validators:admin' } as const;

export function registerValidatorRoutes(app: App, ctx: GuardContext): void {
  app.post(
    '/validators',
    {
      schema: {
        tags,
        security: adminSecurity,
        summary: 'Create a validator',
        description:
          'The rule is checked before it is stored (regex compiled, schema compiled, built-in name known): 400 otherwise. A name that exists is a 409.',
        body: ValidatorInputSchema,
        response: { 201: ValidatorSchema, 409: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request, reply) => reply.status(201).send(await createValidator(ctx, request.body)),
  );

  app.get(
    '/validators',
    {
      schema: {
        tags,
        security: adminSecurity,
        summary: 'List stored validators',
        response: { 200: Type.Array(ValidatorSchema), ...commonErrors },
      },
      config,
    },
    async () => getValidators(ctx),
  );

  app.delete(
    '/validators/:id',
    {
      schema: {
        tags,
        security: adminSecurity,
        summary: 'Delete a validator',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request, reply) => {
      await removeValidator(ctx, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
