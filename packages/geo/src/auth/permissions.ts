/** The spec's permissions (Document 1, "Authentication" 3). */
export const GEO_PERMISSIONS = [
  'geo:read',
  'geo:signals:write',
  'geo:draft',
  'geo:approve',
  'geo:execute',
  'geo:write',
] as const;
export type GeoPermission = (typeof GEO_PERMISSIONS)[number];

export type KeyScope =
  | { type: 'tenant' }
  | { type: 'workspace'; workspaceIds: string[] }
  | { type: 'workspaces'; workspaceIds: string[] };

/** Who is calling: an API key of one tenant with its permissions and workspace scope. */
export interface GeoPrincipal {
  keyId: string;
  tenantId: string;
  permissions: ReadonlySet<string>;
  scope: KeyScope;
}

export function holds(principal: GeoPrincipal, permission: string): boolean {
  return principal.permissions.has(permission);
}

export function holdsAll(principal: GeoPrincipal): boolean {
  return GEO_PERMISSIONS.every((p) => principal.permissions.has(p));
}
