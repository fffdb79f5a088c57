import type { App } from '@keel/core';
import { Type } from 'typebox';
import type { GuardContext } from '../context.ts';
import { adminSecurity, commonErrors } from '../http-schemas.ts';
import { PatternInputSchema } from '../patterns/pattern-schemas.ts';
import { ValidatorInputSchema } from '../validators/validator-schemas.ts';
import { importTemplate } from './template-service.ts';

const TemplateSchema = Type.Object({
  template: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    patterns: Type.Optional(Type.Array(PatternInputSchema, { maxItems: 1000 })),
    validators: Type.Optional(Type.Array(ValidatorInputSchema, { maxItems: 1000 })),
  }),
});

export function registerTemplateRoutes(app: App, ctx: GuardContext): void {
  app.post(
    '/templates/import',
    {
      schema: {
        tags: ['templates'],
        security: adminSecurity,
        summary: 'Import a template of patterns and validators',
        description:
          'Upserts by name (Pattern `Name`, validator `name`) in one transaction. Every definition is checked first; on any failure nothing is written.',
        body: TemplateSchema,
        response: { 200: Type.Object({ message: Type.String(), name: Type.String() }), ...commonErrors },
      },
      config: { permission: 'templates:admin' },
    },
    async (request) => importTemplate(ctx, request.body),
  );
}
