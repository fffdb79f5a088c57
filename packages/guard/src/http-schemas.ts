import { commonErrorResponses, errorBodySchema } from '@keel/core';
import { Type } from 'typebox';

/** The REST error body every guard endpoint except the gateway uses. */
export const ErrorSchema = errorBodySchema();

/** Error responses shared by every authenticated route. */
export const commonErrors = commonErrorResponses(ErrorSchema);

export const IdParams = Type.Object({
  id: Type.String({ description: 'Positive integer id', examples: ['1'] }),
});

type SecurityRequirement = Record<string, string[]>;
/** Admin routes: a bearer token with the route's permission, or the legacy X-ADMIN-KEY. */
export const adminSecurity: SecurityRequirement[] = [{ bearerAuth: [] }, { adminKey: [] }];
export const bearerSecurity: SecurityRequirement[] = [{ bearerAuth: [] }];
