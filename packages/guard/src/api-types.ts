// Guard's REST shapes as TypeScript types, derived from the same TypeBox schemas that validate requests and
// serialize responses (and describe them in OpenAPI): the client library is typed from these.
import type { Static } from 'typebox';
import type { guardApiSchemas } from './api-schemas.ts';

type Schemas = typeof guardApiSchemas;

export type DetectRequest = Static<Schemas['DetectRequest']>;
export type DetectResponse = Static<Schemas['DetectResponse']>;
export type Detection = Static<Schemas['Detection']>;
export type Pattern = Static<Schemas['Pattern']>;
export type PatternInput = Static<Schemas['PatternInput']>;
export type Validator = Static<Schemas['Validator']>;
export type ValidatorInput = Static<Schemas['ValidatorInput']>;
export type ListItem = Static<Schemas['ListItem']>;
export type ListItemInput = Static<Schemas['ListItemInput']>;
export type ErrorBody = Static<Schemas['ErrorBody']>;
