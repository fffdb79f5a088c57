import type { App } from '@keel/core';
import { Type } from 'typebox';
import type { Permission } from '../config.ts';
import type { GuardContext } from '../context.ts';
import { adminSecurity, commonErrors, ErrorSchema, IdParams } from '../http-schemas.ts';
import { addListItem, getListItems, type ListName, removeListItem } from './list-service.ts';

export const ListItemInputSchema = Type.Object({
  value: Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S', description: 'Matched case-insensitively' }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
});

export const ListItemSchema = Type.Object({
  ID: Type.Integer(),
  value: Type.String(),
  description: Type.String(),
  CreatedAt: Type.String({ format: 'date-time' }),
});

const ABOUT: Record<ListName, { permission: Permission; what: string }> = {
  allowlist: { permission: 'allowlist:admin', what: 'Trusted values, ignored during detection.' },
  blacklist: { permission: 'blacklist:admin', what: 'Forbidden values: any occurrence is a hard block.' },
};

/** GET, POST and DELETE for one of the two value lists. */
export function registerListRoutes(app: App, ctx: GuardContext, list: ListName): void {
  const { permission, what } = ABOUT[list];
  const tags = [list];

  app.post(
    `/${list}`,
    {
      schema: {
        tags,
        security: adminSecurity,
        summary: `Add a value to the ${list}`,
        description: `${what} Answers 201 with the created item; a value already on the list (ignoring case) is a 409.`,
        body: ListItemInputSchema,
        response: { 201: ListItemSchema, 409: ErrorSchema, ...commonErrors },
      },
      config: { permission },
    },
    async (request, reply) => reply.status(201).send(await addListItem(ctx, list, request.body)),
  );

  app.get(
    `/${list}`,
    {
      schema: {
        tags,
        security: adminSecurity,
        summary: `List the ${list}`,
        response: { 200: Type.Array(ListItemSchema), ...commonErrors },
      },
      config: { permission },
    },
    async () => getListItems(ctx, list),
  );

  app.delete(
    `/${list}/:id`,
    {
      schema: {
        tags,
        security: adminSecurity,
        summary: `Remove a value from the ${list}`,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), 404: ErrorSchema, ...commonErrors },
      },
      config: { permission },
    },
    async (request, reply) => {
      await removeListItem(ctx, list, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
