// The schemas of guard's public REST shapes, by name: the SDK's published types are generated from these, and
// `api-types.ts` derives the same names as TypeScript types, so the client and the service cannot disagree.
import { DetectionSchema, DetectRequestSchema, DetectResponseSchema } from './detect-api/detect-schemas.ts';
import { ErrorSchema } from './http-schemas.ts';
import { ListItemInputSchema, ListItemSchema } from './lists/list-routes.ts';
import { PatternInputSchema, PatternSchema } from './patterns/pattern-schemas.ts';
import { ValidatorInputSchema, ValidatorSchema } from './validators/validator-schemas.ts';

/** Every named REST shape of guard (the `GuardApi` types). */
export const guardApiSchemas = {
  DetectRequest: DetectRequestSchema,
  DetectResponse: DetectResponseSchema,
  Detection: DetectionSchema,
  Pattern: PatternSchema,
  PatternInput: PatternInputSchema,
  Validator: ValidatorSchema,
  ValidatorInput: ValidatorInputSchema,
  ListItem: ListItemSchema,
  ListItemInput: ListItemInputSchema,
  ErrorBody: ErrorSchema,
} as const;
