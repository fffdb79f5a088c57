import { createError } from '@keel/core';

/** Geo's error codes; services throw these, each transport maps them once (REST body, MCP tool result). */
export const GeoErrors = {
  unauthorized: createError(
    'GEO_UNAUTHORIZED',
    'A valid API key is required (Authorization: Bearer <key> or x-api-key)',
    401,
  ),
  invalidSiteToken: createError('GEO_INVALID_SITE_TOKEN', 'A valid site token is required', 401),
  keyExpired: createError('GEO_KEY_EXPIRED', 'The API key has expired', 403),
  forbidden: createError('GEO_PERMISSION_DENIED', 'The API key lacks the permission %s', 403),
  workspaceDenied: createError('GEO_WORKSPACE_DENIED', 'The API key has no access to this workspace', 403),
  tenantScopeRequired: createError(
    'GEO_TENANT_SCOPE_REQUIRED',
    'Managing keys needs a tenant-scoped key holding every permission',
    403,
  ),
  keyEscalation: createError('GEO_KEY_ESCALATION', 'A new key cannot hold %s: the calling key does not', 403),
  keyNotFound: createError('GEO_KEY_NOT_FOUND', 'API key %s not found', 404),
  invalidScope: createError('GEO_INVALID_KEY_SCOPE', '%s', 400),
  invalidCursor: createError('GEO_INVALID_CURSOR', 'The cursor is not one this endpoint issued', 400),
  invalidRecord: createError('GEO_INVALID_RECORD', 'records[%d]: %s', 400),
  readOnlyDataset: createError('GEO_DATASET_NOT_WRITABLE', 'Dataset %s is not written through signals (%s)', 400),
  actionNotFound: createError('GEO_ACTION_NOT_FOUND', 'Action %s not found', 404),
  actionState: createError('GEO_ACTION_INVALID_STATE', 'The action is %s; this transition needs %s', 409),
  reportNotFound: createError('GEO_REPORT_NOT_FOUND', 'Report %s not found', 404),
  dashboardNotFound: createError('GEO_DASHBOARD_NOT_FOUND', 'Dashboard %s not found', 404),
  shareNotFound: createError('GEO_SHARE_NOT_FOUND', 'This share link is not valid', 404),
  shareExpiry: createError('GEO_SHARE_EXPIRY', 'expiresInHours must be from 1 to %d', 400),
  graphInvalid: createError('GEO_GRAPH_INVALID', '%s', 422),
  graphCycle: createError('GEO_GRAPH_CYCLE', 'The graph has a cycle: %s', 422),
  graphTooLarge: createError('GEO_GRAPH_TOO_LARGE', '%s', 422),
  exportForbidden: createError('GEO_EXPORT_FORBIDDEN', 'The export is expired or not accessible with this key', 403),
  exportInvalid: createError('GEO_EXPORT_INVALID', '%s', 400),
  privacyInvalid: createError('GEO_PRIVACY_INVALID', '%s', 400),
  eventsTooMany: createError('GEO_EVENTS_BATCH_TOO_LARGE', 'A batch holds at most %d events (got %d)', 400),
} as const;
