export type * as GeoApi from './api-types.ts';
export { buildGeoApp, GEO_VERSION, type GeoAppOptions, geoSecretBox, prepareGeoDatabase } from './app.ts';
export { GEO_PERMISSIONS, type GeoPermission } from './auth/permissions.ts';
export { type GeoConfig, readGeoConfig } from './config.ts';
export type { GeoContext } from './context.ts';
export { DATASETS, type DatasetName } from './datasets/dataset-schemas.ts';
export type { GeoDb } from './db/schema.ts';
export { geoService } from './service.ts';
export { type BootstrapResult, bootstrapTenant } from './tenancy/tenancy-service.ts';
