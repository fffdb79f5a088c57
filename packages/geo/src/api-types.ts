// The service's API shapes as TypeScript types, derived from the same TypeBox schemas that validate requests and
// serialize responses (and describe them in OpenAPI): the client library is typed from these.
import type { Static } from 'typebox';
import type { GEO_PERMISSIONS } from './auth/permissions.ts';
import type { AnalyticsPage as AnalyticsPageSchema } from './datasets/dataset-routes.ts';
import type {
  DATASETS,
  DatasetRecordSchema,
  SignalRecordInput as SignalRecordSchema,
  TrackingEventSchema,
} from './datasets/dataset-schemas.ts';
import type { ExportSchema } from './exports/export-routes.ts';
import type { EXPORT_FORMATS } from './exports/export-writers.ts';
import type {
  GraphMutationBody,
  GraphSchema,
  ReceiptSchema,
  RelationInput as RelationInputSchema,
  TargetInput as TargetInputSchema,
} from './graph/graph-schemas.ts';
import type { PrivacyRequestSchema } from './privacy/privacy-routes.ts';
import type { SharedDashboard as SharedDashboardSchema } from './shares/share-routes.ts';
import type { SavedViewSchema } from './views/view-routes.ts';

export type Dataset = (typeof DATASETS)[number];
export type Permission = (typeof GEO_PERMISSIONS)[number];
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export type DatasetRecord = Static<typeof DatasetRecordSchema>;
export type TrackingEvent = Static<typeof TrackingEventSchema>;
export type AnalyticsPage = Static<typeof AnalyticsPageSchema>;
export type AnalyticsItem = AnalyticsPage['items'][number];
export type SignalRecordInput = Static<typeof SignalRecordSchema>;
export type TargetGraph = Static<typeof GraphSchema>;
export type GraphMutation = Static<typeof GraphMutationBody>;
export type GraphImport = Extract<GraphMutation, { operation: 'import' }>;
export type GraphMerge = Extract<GraphMutation, { operation: 'merge' }>;
export type TargetInput = Static<typeof TargetInputSchema>;
export type RelationInput = Static<typeof RelationInputSchema>;
export type GraphReceipt = Static<typeof ReceiptSchema>;
export type PrivacyRequest = Static<typeof PrivacyRequestSchema>;
export type Export = Static<typeof ExportSchema>;
export type SharedDashboard = Static<typeof SharedDashboardSchema>;
export type SavedView = Static<typeof SavedViewSchema>;
export interface ErrorBody {
  error: { code: string; message: string; traceId: string; details?: { path?: string; message: string }[] };
}
