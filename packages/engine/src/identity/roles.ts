import { RuntimeErrors } from '../runtime/runtime-errors.ts';

/** Realm member roles, strongest first. */
export const ROLES = ['owner', 'admin', 'developer', 'operator', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const USER_TYPES = ['user', 'service', 'agent'] as const;
export type UserType = (typeof USER_TYPES)[number];

/** What a role may do. Each runtime route names the one permission it needs. */
export type Permission =
  /** Members, identities, realm theme. */
  | 'realm:manage'
  /** Providers, prompts, agent configuration (writes). */
  | 'config:write'
  /** Reading configuration, session lists and status. */
  | 'config:read'
  /** Sessions, chat, execute, state, user context, knowledge writes. */
  | 'runtime:run';

const GRANTS: Record<Permission, readonly Role[]> = {
  'realm:manage': ['owner', 'admin'],
  'config:write': ['owner', 'admin', 'developer'],
  'config:read': ['owner', 'admin', 'developer', 'operator', 'viewer'],
  'runtime:run': ['owner', 'admin', 'developer', 'operator'],
};

/** Who is calling a runtime route: from the bearer token, with the role read from the realm membership. */
export interface RuntimePrincipal {
  identityId: string;
  userType: UserType;
  realmId: string | null;
  /** The role in `realmId`; null when the token has no realm. */
  role: Role | null;
  keyId: string;
  tokenExpiresAt: number;
}

export function rank(role: Role): number {
  return ROLES.indexOf(role);
}

/** True when `role` grants `permission`. */
export function allows(role: Role | null, permission: Permission): boolean {
  return role !== null && GRANTS[permission].includes(role);
}

/** The principal's realm, when its role grants the permission; RUNTIME_NO_REALM / RUNTIME_FORBIDDEN otherwise. */
export function requirePermission(principal: RuntimePrincipal, permission: Permission): string {
  if (principal.realmId === null) throw RuntimeErrors.noRealm();
  if (!allows(principal.role, permission)) throw RuntimeErrors.forbidden(principal.role ?? 'none', permission);
  return principal.realmId;
}

/** A role may hand out roles up to its own (an admin cannot make owners). */
export function requireGrantable(principal: RuntimePrincipal, role: Role): void {
  if (principal.role === null || rank(role) < rank(principal.role))
    throw RuntimeErrors.forbidden(principal.role ?? 'none', `granting the role ${role}`);
}

/** `realm_id` in a body, when sent, must be the token's realm (ids never cross realms). */
export function checkRealmField(principal: RuntimePrincipal, realmId: string | undefined | null): void {
  if (realmId !== undefined && realmId !== null && realmId.toLowerCase() !== principal.realmId)
    throw RuntimeErrors.realmMismatch();
}
