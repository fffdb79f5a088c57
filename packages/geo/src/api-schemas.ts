// The schemas of geo's public API shapes, by name: the SDK's published types are generated from these, and a
// build check proves they equal the types of `api-types.ts`.
import { GEO_PERMISSIONS } from './auth/permissions.ts';
import { AnalyticsPage } from './datasets/dataset-routes.ts';
import { DATASETS, DatasetRecordSchema, SignalRecordInput, TrackingEventSchema } from './datasets/dataset-schemas.ts';
import { ExportSchema } from './exports/export-routes.ts';
import { EXPORT_FORMATS } from './exports/export-writers.ts';
import { GraphMutationBody, GraphSchema, ReceiptSchema, RelationInput, TargetInput } from './graph/graph-schemas.ts';
import { ErrorSchema } from './http-schemas.ts';
import { PrivacyRequestSchema } from './privacy/privacy-routes.ts';
import { SharedDashboard } from './shares/share-routes.ts';
import { SavedViewSchema } from './views/view-routes.ts';

/** Every named API shape of geo (the `GeoApi` types): a TypeBox schema, or a list of allowed strings. */
export const geoApiSchemas = {
  Dataset: DATASETS,
  Permission: GEO_PERMISSIONS,
  ExportFormat: EXPORT_FORMATS,
  DatasetRecord: DatasetRecordSchema,
  TrackingEvent: TrackingEventSchema,
  AnalyticsPage,
  AnalyticsItem: AnalyticsPage.properties.items.items,
  SignalRecordInput,
  TargetGraph: GraphSchema,
  GraphMutation: GraphMutationBody,
  GraphImport: GraphMutationBody.anyOf[0],
  GraphMerge: GraphMutationBody.anyOf[1],
  TargetInput,
  RelationInput,
  GraphReceipt: ReceiptSchema,
  PrivacyRequest: PrivacyRequestSchema,
  Export: ExportSchema,
  SharedDashboard,
  SavedView: SavedViewSchema,
  ErrorBody: ErrorSchema,
} as const;
