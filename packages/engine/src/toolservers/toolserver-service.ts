import {
  checkOutboundUrl,
  checkOutboundUrlResolves,
  decodeCursor,
  encodeCursor,
  fromJsonColumn,
  isUniqueViolation,
  toBoolean,
  toIsoString,
} from '@keel/core';
import type { Client } from '@modelcontextprotocol/client';
import { checkRealmField, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { nowIso } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import {
  AUTH_TYPES,
  type AuthProfile,
  type AuthType,
  CREDENTIAL_REF_PREFIX,
  type ServerEndpoint,
} from './mcp-connection.ts';
import { type RoutingRule, safeFailureMessage, ToolCallError } from './routing/index.ts';
import {
  checkContract,
  classifyImpact,
  contractHash,
  type DiscoveredContract,
  type Impact,
  needsReview,
} from './tool-contract.ts';
import type { ToolRuntime } from './tool-runtime.ts';
import { ToolErrors } from './toolserver-errors.ts';
import {
  type CredentialRow,
  countPendingProposals,
  decideProposal,
  deleteServerRow,
  demoteCredentials,
  findCredential,
  findProposal,
  findServer,
  findServersByIds,
  findToolRow,
  insertCredential,
  insertProposal,
  insertServer,
  insertTool,
  listAgentServerLists,
  listCredentialRows,
  listProposalNames,
  listProposalRows,
  listResourcePage,
  listRuleRows,
  listServerResources,
  listServerRows,
  listServersDueForProbe,
  listServerTools,
  listToolPage,
  nextCredentialVersion,
  type ProposalRow,
  type ResourceRow,
  recordAuthFailure,
  replaceResources,
  type ServerRow,
  type ToolRow,
  updateCredential,
  updateServer,
  updateTool,
} from './toolserver-store.ts';

/** How long a replaced credential version stays usable for rollback without re-entering it (the overlap window). */
export const CREDENTIAL_OVERLAP_MS = 15 * 60 * 1000;
/** Bounds of discovery and proposals. */
export const REGISTRY_LIMITS = Object.freeze({
  toolsPerServer: 500,
  resourcesPerServer: 1000,
  proposalsPerGenerate: 20,
  pendingProposalsPerRealm: 200,
  listPages: 20,
});

export const SERVER_TYPES = ['http', 'sse'] as const;

// Views ------------------------------------------------------------------------------------------------------------

function json<T>(value: unknown, fallback: T): T {
  return (fromJsonColumn<T>(value) ?? fallback) as T;
}

function iso(value: string | Date | null): string | null {
  return value === null ? null : toIsoString(value);
}

export function toServerView(row: ServerRow) {
  return {
    id: row.id,
    realm_id: row.realm_id,
    name: row.name,
    url: row.url,
    type: row.type,
    description: row.description,
    is_active: toBoolean(row.is_active),
    capabilities: json<string[]>(row.capabilities, []),
    api_key_set: row.active_credential_version !== null,
    active_credential_version: row.active_credential_version,
    profile: profileView(row),
    health: {
      last_probe_at: iso(row.last_probe_at),
      last_probe_ok: row.last_probe_ok === null ? null : toBoolean(row.last_probe_ok),
      last_probe_latency_ms: row.last_probe_latency_ms,
      last_error_code: row.last_error_code,
      auth_failures: Number(row.auth_failures),
      last_auth_failure_at: iso(row.last_auth_failure_at),
    },
    negotiated: json<Record<string, unknown> | null>(row.negotiated, null),
    discovered_at: iso(row.discovered_at),
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
  };
}

export function profileView(row: ServerRow) {
  const auth = json<AuthProfile>(row.auth_profile, { type: 'none' });
  return {
    transport: row.type === 'sse' ? 'sse' : 'streamable_http',
    auth,
    egress: json<{ allowed_hosts: string[] }>(row.egress_policy, { allowed_hosts: [] }),
    region: row.region,
    data_handling: json<string[]>(row.data_handling, []),
    estimated_cost: row.estimated_cost === null ? null : Number(row.estimated_cost),
  };
}

function toCredentialView(row: CredentialRow) {
  return {
    version: row.version,
    status: row.status,
    secret_set: row.secret_sealed !== null,
    created_at: toIsoString(row.created_at),
    tested_at: iso(row.tested_at),
    test_ok: row.test_ok === null ? null : toBoolean(row.test_ok),
    test_error_code: row.test_error_code,
    activated_at: iso(row.activated_at),
    overlap_until: iso(row.overlap_until),
  };
}

export function toToolView(row: ToolRow) {
  return {
    id: row.id,
    server_id: row.server_id,
    name: row.name,
    title: row.title,
    description: row.description,
    input_schema: json<Record<string, unknown>>(row.input_schema, {}),
    output_schema: json<Record<string, unknown> | null>(row.output_schema, null),
    annotations: json<Record<string, unknown> | null>(row.annotations, null),
    impact: json<Impact[]>(row.impact, []),
    read_only: toBoolean(row.read_only),
    contract: {
      status: row.contract_status,
      hash: row.contract_hash,
      problems: json<string[]>(row.contract_problems, []),
      checked_at: toIsoString(row.contract_checked_at),
    },
    review_status: row.review_status,
    review_required: toBoolean(row.review_required),
    enabled: isToolEnabled(row),
    review_note: row.review_note,
    reviewed_by: row.reviewed_by,
    reviewed_at: iso(row.reviewed_at),
    discovered_at: toIsoString(row.discovered_at),
    updated_at: toIsoString(row.updated_at),
  };
}

/** A tool can be called only when listed, its contract passes and its review status is approved. */
export function isToolEnabled(row: ToolRow): boolean {
  return row.removed_at === null && row.contract_status === 'passing' && row.review_status === 'approved';
}

function toResourceView(row: ResourceRow) {
  return {
    id: row.id,
    kind: row.kind,
    ...(row.kind === 'template' ? { uri_template: row.uri } : { uri: row.uri }),
    name: row.name,
    description: row.description,
    mime_type: row.mime_type,
    discovered_at: toIsoString(row.discovered_at),
  };
}

function toProposalView(row: ProposalRow) {
  return {
    id: row.id,
    server_id: row.server_id,
    name: row.name,
    description: row.description,
    input_schema: json<Record<string, unknown>>(row.input_schema, {}),
    source: json<Record<string, unknown>>(row.source, {}),
    status: row.status,
    enabled: false,
    review_note: row.review_note,
    reviewed_by: row.reviewed_by,
    reviewed_at: iso(row.reviewed_at),
    created_at: toIsoString(row.created_at),
  };
}

// Inputs -----------------------------------------------------------------------------------------------------------

export interface ServerInput {
  realm_id?: string | undefined;
  name: string;
  url: string;
  type?: string | undefined;
  description?: string | null | undefined;
  api_key?: string | null | undefined;
  is_active?: boolean | undefined;
  capabilities?: string[] | undefined;
  auto_discover?: boolean | undefined;
}

export interface ProfileInput {
  transport?: 'streamable_http' | 'sse' | 'stdio' | undefined;
  auth?: Partial<AuthProfile> & { type: string };
  credential_ref?: string | null | undefined;
  egress?: { allowed_hosts: string[] } | undefined;
  region?: string | null | undefined;
  data_handling?: string[] | undefined;
  estimated_cost?: number | null | undefined;
}

const STDIO_MESSAGE =
  'stdio servers are not reached directly: run the server behind a managed sidecar that serves it over streamable HTTP (for example `npx -y supergateway --stdio "<command>" --outputTransport streamableHttp --port 8931`) and register the sidecar URL with type http';

export function serverType(type: string | undefined): 'http' | 'sse' {
  const value = (type ?? 'http').toLowerCase();
  if (value === 'http' || value === 'streamable_http' || value === 'streamable-http') return 'http';
  if (value === 'sse') return 'sse';
  if (value === 'stdio') throw RuntimeErrors.invalid(STDIO_MESSAGE);
  throw RuntimeErrors.invalid('type must be http (streamable HTTP) or sse');
}

export async function checkServerUrl(
  tools: ToolRuntime,
  url: string,
  allowedHosts: readonly string[],
): Promise<string> {
  const policy = { allowPrivate: tools.rt.allowPrivateUrls };
  const parsed = checkOutboundUrl(url, policy);
  await checkOutboundUrlResolves(url, policy);
  if (allowedHosts.length > 0 && !hostMatches(parsed.hostname, allowedHosts))
    throw RuntimeErrors.invalid("url: the host is not in the server's egress allowlist (profile egress.allowed_hosts)");
  return parsed.href;
}

function hostMatches(host: string, allowed: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return allowed.some((rule) =>
    rule.startsWith('*.') ? name.endsWith(rule.slice(1).toLowerCase()) : name === rule.toLowerCase(),
  );
}

async function requireServer(tools: ToolRuntime, realmId: string, id: string): Promise<ServerRow> {
  const row = await findServer(tools.rt.db, realmId, id);
  if (!row) throw RuntimeErrors.notFound('Tool server', id);
  return row;
}

/** The connection settings of a server with a given credential version's secret (decrypted here, never stored). */
export function endpointOf(
  tools: ToolRuntime,
  row: ServerRow,
  credential: Pick<CredentialRow, 'version' | 'secret_sealed'> | null,
): ServerEndpoint {
  return {
    id: row.id,
    url: row.url,
    type: row.type === 'sse' ? 'sse' : 'http',
    auth: json<AuthProfile>(row.auth_profile, { type: 'none' }),
    secret: credential?.secret_sealed ? tools.rt.secrets.decrypt(credential.secret_sealed) : null,
    credentialVersion: credential?.version ?? null,
    allowedHosts: json<{ allowed_hosts: string[] }>(row.egress_policy, { allowed_hosts: [] }).allowed_hosts,
    realmId: row.realm_id,
  };
}

/** The endpoint of a server with its active credential. */
export async function activeEndpoint(tools: ToolRuntime, row: ServerRow): Promise<ServerEndpoint> {
  const credential =
    row.active_credential_version === null
      ? null
      : ((await findCredential(tools.rt.db, row.id, row.active_credential_version)) ?? null);
  return endpointOf(tools, row, credential);
}

/**
 * The endpoint of the version replaced by the last rotation while its overlap window lasts (calls fall back to it
 * when the active credential is refused), with the window's end; undefined otherwise.
 */
export async function overlapEndpoint(
  tools: ToolRuntime,
  row: ServerRow,
): Promise<{ endpoint: ServerEndpoint; until: number } | undefined> {
  if (row.active_credential_version === null) return undefined;
  const now = tools.rt.clock();
  const previous = (await listCredentialRows(tools.rt.db, row.id)).find(
    (c) =>
      c.status === 'previous' &&
      c.secret_sealed !== null &&
      c.overlap_until !== null &&
      Date.parse(toIsoString(c.overlap_until)) > now,
  );
  if (!previous?.overlap_until) return undefined;
  return {
    endpoint: endpointOf(tools, authForKey(row), previous),
    until: Date.parse(toIsoString(previous.overlap_until)),
  };
}

function failureOf(error: unknown): { code: string; message: string; authFailure: boolean } {
  if (error instanceof ToolCallError)
    return { code: error.code, message: safeFailureMessage(error.message), authFailure: error.authFailure };
  return { code: 'TOOL_SERVER_ERROR', message: safeFailureMessage(error), authFailure: false };
}

/** Connects with `endpoint`, initializes and pings: the live check of a test, a probe and a rotation. */
async function liveCheck(tools: ToolRuntime, endpoint: ServerEndpoint) {
  const started = performance.now();
  try {
    const negotiated = await tools.connector.once(endpoint, async (client) => {
      await client.ping({ timeout: 10_000 } as never);
      return {
        protocol_version: client.getNegotiatedProtocolVersion() ?? null,
        server_info: client.getServerVersion() ?? null,
        capabilities: client.getServerCapabilities() ?? {},
      };
    });
    return { ok: true as const, latency_ms: Math.round(performance.now() - started), negotiated };
  } catch (error) {
    return { ok: false as const, latency_ms: Math.round(performance.now() - started), ...failureOf(error) };
  }
}

// Registry ---------------------------------------------------------------------------------------------------------

/** The health and discovery fields of a newly stored server: never probed, never discovered. */
export const UNPROBED_SERVER = Object.freeze({
  negotiated: null,
  last_probe_at: null,
  last_probe_ok: null,
  last_probe_latency_ms: null,
  last_error_code: null,
  auth_failures: 0,
  last_auth_failure_at: null,
  discovered_at: null,
});

export async function registerServer(tools: ToolRuntime, principal: RuntimePrincipal, input: ServerInput) {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const type = serverType(input.type);
  const url = await checkServerUrl(tools, input.url, []);
  const now = nowIso(tools.rt);
  const id = newId();
  const hasKey = typeof input.api_key === 'string' && input.api_key.length > 0;
  await inTransaction(tools.rt.engine, async (trx) => {
    await insertServer(trx, {
      id,
      realm_id: realmId,
      name: input.name,
      url,
      type,
      description: input.description ?? null,
      is_active: input.is_active ?? true,
      capabilities: JSON.stringify(input.capabilities ?? []),
      auth_profile: JSON.stringify({ type: hasKey ? 'api_key' : 'none' }),
      egress_policy: JSON.stringify({ allowed_hosts: [] }),
      region: null,
      data_handling: JSON.stringify([]),
      estimated_cost: null,
      active_credential_version: hasKey ? 1 : null,
      ...UNPROBED_SERVER,
      created_at: now,
      updated_at: now,
    });
    if (hasKey)
      await insertCredential(trx, {
        server_id: id,
        version: 1,
        realm_id: realmId,
        secret_sealed: tools.rt.secrets.encrypt(input.api_key as string),
        status: 'active',
        created_at: now,
        created_by: principal.identityId,
        tested_at: null,
        test_ok: null,
        test_error_code: null,
        activated_at: now,
        overlap_until: null,
      });
  }).catch((error) => {
    if (isUniqueViolation(error))
      throw RuntimeErrors.nameTaken(`A tool server named ${input.name} exists in this realm`);
    throw error;
  });
  await tools.rt.realms.invalidate(realmId);
  const view = await getServer(tools, principal, id);
  if (!input.auto_discover) return { ...view, discovery: null };
  const discovery = await discoverServer(tools, principal, id).catch((error) => {
    const failure = failureOf(error);
    return { ok: false as const, code: failure.code, message: failure.message };
  });
  return { ...(await getServer(tools, principal, id)), discovery };
}

export async function listServers(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined; is_active?: boolean | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const rows = await listServerRows(tools.rt.db, realmId, {
    limit: query.limit,
    before: cursorAfterId('tool-servers', query.cursor),
    isActive: query.is_active,
  });
  return idPage('tool-servers', rows, query.limit, toServerView);
}

export async function getServer(tools: ToolRuntime, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:read');
  return toServerView(await requireServer(tools, realmId, id));
}

/**
 * Replaces URL, type, name, description, capabilities and activation. A new `api_key` is a rotation: the new
 * credential must pass a live `initialize` before it becomes active (atomically); the previous version stays as
 * `previous` for the overlap window. `api_key: null` removes the credential (the server then runs without one).
 */
export async function updateToolServer(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  id: string,
  input: ServerInput,
) {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const row = await requireServer(tools, realmId, id);
  const type = serverType(input.type ?? row.type);
  const egress = json<{ allowed_hosts: string[] }>(row.egress_policy, { allowed_hosts: [] }).allowed_hosts;
  const url = await checkServerUrl(tools, input.url, egress);
  const now = nowIso(tools.rt);
  const next: ServerRow = { ...row, url, type };
  let rotated: { version: number; sealed: string; testedAt: string } | undefined;
  if (typeof input.api_key === 'string') {
    const sealed = tools.rt.secrets.encrypt(input.api_key);
    const version = await nextCredentialVersion(tools.rt.db, row.id);
    const check = await liveCheck(tools, endpointOf(tools, authForKey(next), { version, secret_sealed: sealed }));
    if (!check.ok) throw ToolErrors.credentialTestFailed(check.code, check.message);
    rotated = { version, sealed, testedAt: nowIso(tools.rt) };
  }
  await inTransaction(tools.rt.engine, async (trx) => {
    const fields: Partial<ServerRow> = {
      name: input.name,
      url,
      type,
      description: input.description === undefined ? row.description : input.description,
      is_active: input.is_active ?? toBoolean(row.is_active),
      capabilities: JSON.stringify(input.capabilities ?? json<string[]>(row.capabilities, [])),
      updated_at: now,
    };
    if (rotated) {
      await activateVersion(trx, row, rotated.version, now, {
        insert: { sealed: rotated.sealed, testedAt: rotated.testedAt, by: principal.identityId },
      });
      fields.active_credential_version = rotated.version;
      if (json<AuthProfile>(row.auth_profile, { type: 'none' }).type === 'none')
        fields.auth_profile = JSON.stringify({ type: 'api_key' });
    } else if (input.api_key === null && row.active_credential_version !== null) {
      await demoteCredentials(trx, row.id, 'active', -1, { status: 'inactive', overlap_until: null });
      fields.active_credential_version = null;
    }
    await updateServer(trx, row.id, fields);
  }).catch((error) => {
    if (isUniqueViolation(error))
      throw RuntimeErrors.nameTaken(`A tool server named ${input.name} exists in this realm`);
    throw error;
  });
  await tools.connector.drop(row.id);
  await tools.rt.realms.invalidate(realmId);
  return getServer(tools, principal, row.id);
}

/** A server row whose profile sends the credential (a rotation of a server that had none starts as an API key). */
function authForKey(row: ServerRow): ServerRow {
  const auth = json<AuthProfile>(row.auth_profile, { type: 'none' });
  return auth.type === 'none' ? { ...row, auth_profile: JSON.stringify({ type: 'api_key' }) } : row;
}

/**
 * Makes `version` the active credential in the caller's transaction: the active one becomes `previous` until the
 * overlap window ends, older `previous` versions become `inactive`.
 */
async function activateVersion(
  trx: Parameters<typeof insertCredential>[0],
  row: ServerRow,
  version: number,
  now: string,
  options: { insert?: { sealed: string; testedAt: string; by: string } } = {},
) {
  const overlapUntil = new Date(Date.parse(now) + CREDENTIAL_OVERLAP_MS).toISOString();
  await demoteCredentials(trx, row.id, 'previous', version, { status: 'inactive', overlap_until: null });
  await demoteCredentials(trx, row.id, 'active', version, { status: 'previous', overlap_until: overlapUntil });
  if (options.insert)
    await insertCredential(trx, {
      server_id: row.id,
      version,
      realm_id: row.realm_id,
      secret_sealed: options.insert.sealed,
      status: 'active',
      created_at: now,
      created_by: options.insert.by,
      tested_at: options.insert.testedAt,
      test_ok: true,
      test_error_code: null,
      activated_at: now,
      overlap_until: null,
    });
  else
    await updateCredential(trx, row.id, version, {
      status: 'active',
      activated_at: now,
      overlap_until: null,
      tested_at: now,
      test_ok: true,
      test_error_code: null,
    });
}

/** Deletes a registration no agent attaches and no routing rule names; 409 otherwise. */
export async function deleteServer(tools: ToolRuntime, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await requireServer(tools, realmId, id);
  const agents = (await listAgentServerLists(tools.rt.db, realmId)).filter((a) =>
    json<string[]>(a.allowed_mcp_servers, []).includes(row.id),
  );
  if (agents.length > 0)
    throw RuntimeErrors.inUse(`Tool server ${row.id} is attached to ${agents.length} agent(s): detach it first`);
  const rules = await loadRuleSet(tools, realmId);
  if (rules.some((rule) => rule.servers?.includes(row.id)))
    throw RuntimeErrors.inUse(`Tool server ${row.id} is named by a routing rule: change the rule first`);
  await inTransaction(tools.rt.engine, (trx) => deleteServerRow(trx, row.id));
  await tools.connector.drop(row.id);
  await tools.rt.realms.invalidate(realmId);
  tools.stats.forget(row.id);
}

/** The realm's routing rules as the decision reads them (cached until a rule write or a reload). */
export async function loadRuleSet(tools: ToolRuntime, realmId: string) {
  const cached = tools.rules.get(realmId);
  if (cached) return cached;
  const rules = (await listRuleRows(tools.rt.db, realmId)).map((r) => ({
    ...json<Record<string, unknown>>(r.rule, {}),
    id: r.id,
  })) as unknown as RoutingRule[];
  tools.rules.set(realmId, rules);
  return rules;
}

export async function toggleServer(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  id: string,
  isActive: boolean | undefined,
) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await requireServer(tools, realmId, id);
  const next = isActive ?? !toBoolean(row.is_active);
  await inTransaction(tools.rt.engine, (trx) =>
    updateServer(trx, row.id, { is_active: next, updated_at: nowIso(tools.rt) }),
  );
  await tools.connector.drop(row.id);
  await tools.rt.realms.invalidate(realmId);
  return getServer(tools, principal, row.id);
}

/** Tests connectivity and authentication with the active credential; records the result on the credential. */
export async function testServer(tools: ToolRuntime, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await requireServer(tools, realmId, id);
  const endpoint = await activeEndpoint(tools, row);
  const check = await liveCheck(tools, endpoint);
  const now = nowIso(tools.rt);
  await inTransaction(tools.rt.engine, async (trx) => {
    if (row.active_credential_version !== null)
      await updateCredential(trx, row.id, row.active_credential_version, {
        tested_at: now,
        test_ok: check.ok,
        test_error_code: check.ok ? null : check.code,
      });
    if (!check.ok && check.authFailure) await recordAuthFailure(trx, row.id, now);
  });
  return check.ok
    ? { ok: true, server_id: row.id, latency_ms: check.latency_ms, tested_at: now, authenticated: true }
    : {
        ok: false,
        server_id: row.id,
        latency_ms: check.latency_ms,
        tested_at: now,
        authenticated: !check.authFailure,
        error: { code: check.code, message: check.message },
      };
}

/** Negotiates capabilities and records health, latency and authentication failures (also fed to routing). */
export async function probeServer(tools: ToolRuntime, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await requireServer(tools, realmId, id);
  return probeRow(tools, row);
}

export async function probeRow(tools: ToolRuntime, row: ServerRow) {
  const check = await liveCheck(tools, await activeEndpoint(tools, row));
  tools.stats.record({
    server_id: row.id,
    kind: 'probe',
    ok: check.ok,
    latency_ms: check.latency_ms,
    ...(check.ok ? {} : { auth_failure: check.authFailure }),
  });
  const now = nowIso(tools.rt);
  await inTransaction(tools.rt.engine, async (trx) => {
    await updateServer(trx, row.id, {
      last_probe_at: now,
      last_probe_ok: check.ok,
      last_probe_latency_ms: check.latency_ms,
      last_error_code: check.ok ? null : check.code,
      ...(check.ok ? { negotiated: JSON.stringify(check.negotiated) } : {}),
    });
    if (!check.ok && check.authFailure) await recordAuthFailure(trx, row.id, now);
  });
  const view = tools.stats.view(row.id);
  return {
    ok: check.ok,
    server_id: row.id,
    latency_ms: check.latency_ms,
    probed_at: now,
    negotiated: check.ok ? check.negotiated : null,
    error: check.ok ? null : { code: check.code, message: check.message },
    health: { status: view.health, error_rate: view.error_rate, latency_ms: view.latency_ms, samples: view.samples },
  };
}

/**
 * One round of the background prober: every active server (all realms) not probed within the interval is probed,
 * at most 4 at a time and 500 per round, so a server marked unhealthy that gets no traffic recovers once it answers.
 * Answers how many servers were probed.
 */
export async function probeDueServers(tools: ToolRuntime, intervalMs: number): Promise<number> {
  const before = new Date(tools.rt.clock() - intervalMs).toISOString();
  let afterId = '';
  let probed = 0;
  while (probed < 500) {
    const rows = await listServersDueForProbe(tools.rt.db, { before, afterId, limit: 100 });
    if (rows.length === 0) break;
    for (let i = 0; i < rows.length; i += 4) await Promise.all(rows.slice(i, i + 4).map((row) => probeRow(tools, row)));
    probed += rows.length;
    afterId = rows.at(-1)!.id;
  }
  return probed;
}

/**
 * The stored form of an authentication profile and egress allowlist of a server at `url`: only the fields of its
 * type, an SSRF-checked token URL inside the allowlist, lower-case hosts that include the server's own.
 */
export async function checkedProfile(
  tools: ToolRuntime,
  url: string,
  authInput: Partial<AuthProfile> & { type: string },
  credentialRef: string | null | undefined,
  hosts: readonly string[],
): Promise<{ auth: AuthProfile; allowedHosts: string[] }> {
  if (!AUTH_TYPES.includes(authInput.type as AuthType))
    throw RuntimeErrors.invalid(`auth.type must be one of ${AUTH_TYPES.join(', ')}`);
  const auth: AuthProfile = { type: authInput.type as AuthType };
  if (authInput.header_name) auth.header_name = authInput.header_name;
  const allowedHosts = hosts.map((h) => h.toLowerCase());
  if (auth.type === 'oauth_client_credentials') {
    if (!authInput.token_url || !authInput.client_id)
      throw RuntimeErrors.invalid('auth.token_url and auth.client_id are required for oauth_client_credentials');
    auth.token_url = await checkServerUrl(tools, authInput.token_url, allowedHosts);
    auth.client_id = authInput.client_id;
    if (authInput.scope) auth.scope = authInput.scope;
  }
  const ref = credentialRef ?? authInput.credential_ref;
  if (auth.type === 'credential_ref') {
    if (!ref) throw RuntimeErrors.invalid('credential_ref is required for the credential_ref authentication type');
    auth.credential_ref = ref;
  }
  if (allowedHosts.length > 0 && !hostMatches(new URL(url).hostname, allowedHosts))
    throw RuntimeErrors.invalid("egress.allowed_hosts must include the server URL's host");
  return { auth, allowedHosts };
}

/** Replaces the profile: transport, authentication profile (secret-free), credential reference, egress, routing attributes. */
export async function updateProfile(tools: ToolRuntime, principal: RuntimePrincipal, id: string, input: ProfileInput) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await requireServer(tools, realmId, id);
  const transport = input.transport ?? (row.type === 'sse' ? 'sse' : 'streamable_http');
  if (transport === 'stdio') throw RuntimeErrors.invalid(STDIO_MESSAGE);
  const { auth, allowedHosts } = await checkedProfile(
    tools,
    row.url,
    input.auth ?? json<AuthProfile>(row.auth_profile, { type: 'none' }),
    input.credential_ref,
    input.egress?.allowed_hosts ??
      json<{ allowed_hosts: string[] }>(row.egress_policy, { allowed_hosts: [] }).allowed_hosts,
  );
  await inTransaction(tools.rt.engine, (trx) =>
    updateServer(trx, row.id, {
      type: transport === 'sse' ? 'sse' : 'http',
      auth_profile: JSON.stringify(auth),
      egress_policy: JSON.stringify({ allowed_hosts: allowedHosts }),
      region: input.region === undefined ? row.region : input.region,
      data_handling: JSON.stringify(input.data_handling ?? json<string[]>(row.data_handling, [])),
      estimated_cost: input.estimated_cost === undefined ? row.estimated_cost : input.estimated_cost,
      updated_at: nowIso(tools.rt),
    }),
  );
  await tools.connector.drop(row.id);
  await tools.rt.realms.invalidate(realmId);
  return getServer(tools, principal, row.id);
}

export { CREDENTIAL_REF_PREFIX };

export async function listCredentials(tools: ToolRuntime, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await requireServer(tools, realmId, id);
  const rows = await listCredentialRows(tools.rt.db, row.id);
  const now = tools.rt.clock();
  return {
    server_id: row.id,
    active_version: row.active_credential_version,
    overlap_window_seconds: CREDENTIAL_OVERLAP_MS / 1000,
    data: rows.map((r) => {
      const view = toCredentialView(r);
      // A `previous` version past its overlap window reads as inactive (it is only reachable through rollback).
      return view.status === 'previous' && r.overlap_until && Date.parse(iso(r.overlap_until)!) < now
        ? { ...view, status: 'inactive' }
        : view;
    }),
  };
}

/** Re-tests a prior credential version live and, when it passes, reactivates it atomically. */
export async function rollbackCredential(tools: ToolRuntime, principal: RuntimePrincipal, id: string, version: number) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await requireServer(tools, realmId, id);
  const credential = await findCredential(tools.rt.db, row.id, version);
  if (!credential) throw RuntimeErrors.notFound('Credential version', String(version));
  if (credential.status === 'active') throw RuntimeErrors.conflict(`Credential version ${version} is already active`);
  if (!credential.secret_sealed) throw RuntimeErrors.conflict(`Credential version ${version} holds no secret any more`);
  const check = await liveCheck(tools, endpointOf(tools, authForKey(row), credential));
  const now = nowIso(tools.rt);
  if (!check.ok) {
    await inTransaction(tools.rt.engine, (trx) =>
      updateCredential(trx, row.id, version, { tested_at: now, test_ok: false, test_error_code: check.code }),
    );
    throw ToolErrors.credentialTestFailed(check.code, check.message);
  }
  await inTransaction(tools.rt.engine, async (trx) => {
    await activateVersion(trx, row, version, now);
    await updateServer(trx, row.id, { active_credential_version: version, updated_at: now });
  });
  await tools.connector.drop(row.id);
  await tools.rt.realms.invalidate(realmId);
  return listCredentials(tools, principal, row.id);
}

// Discovery and contracts ----------------------------------------------------------------------------------------------

async function collect<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
  max: number,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < REGISTRY_LIMITS.listPages; page++) {
    const result = await fetchPage(cursor);
    items.push(...result.items);
    if (items.length >= max || !result.nextCursor) break;
    cursor = result.nextCursor;
  }
  return items.slice(0, max);
}

async function fetchListings(client: Client) {
  const capabilities = client.getServerCapabilities() ?? {};
  const tools = capabilities.tools
    ? await collect(async (cursor) => {
        const r = await client.listTools(cursor ? { cursor } : undefined, { cache: 'bypass' } as never);
        return { items: r.tools, nextCursor: r.nextCursor };
      }, REGISTRY_LIMITS.toolsPerServer)
    : [];
  const resources = capabilities.resources
    ? await collect(async (cursor) => {
        const r = await client.listResources(cursor ? { cursor } : undefined, { cache: 'bypass' } as never);
        return { items: r.resources, nextCursor: r.nextCursor };
      }, REGISTRY_LIMITS.resourcesPerServer)
    : [];
  const templates = capabilities.resources
    ? await collect(async (cursor) => {
        const r = await client.listResourceTemplates(cursor ? { cursor } : undefined, { cache: 'bypass' } as never);
        return { items: r.resourceTemplates, nextCursor: r.nextCursor };
      }, REGISTRY_LIMITS.resourcesPerServer)
    : [];
  return { tools, resources, templates };
}

/**
 * Refreshes the server's tool registry (`tools/list`, `resources/list`, `resources/templates/list` through the
 * official SDK client) and reconciles it: a new tool is stored disabled and enabled only when its contract passes
 * and it is read-only with no other impact class (everything else waits for an explicit review); a tool whose
 * contract changed is disabled again until reviewed; a tool no longer listed is marked removed.
 */
export async function discoverServer(tools: ToolRuntime, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await requireServer(tools, realmId, id);
  if (!toBoolean(row.is_active)) throw ToolErrors.serverDisabled(row.id);
  const listings = await tools.connector.use(await activeEndpoint(tools, row), fetchListings).catch(async (error) => {
    const failure = failureOf(error);
    if (failure.authFailure)
      await inTransaction(tools.rt.engine, (trx) => recordAuthFailure(trx, row.id, nowIso(tools.rt)));
    throw ToolErrors.upstream(failure.code, failure.message);
  });
  const now = nowIso(tools.rt);
  const summary = { added: 0, changed: 0, unchanged: 0, removed: 0, enabled: 0, awaiting_review: 0, failing: 0 };
  const report: { name: string; status: string; problems: string[]; change: string }[] = [];
  await inTransaction(tools.rt.engine, async (trx) => {
    const existing = new Map((await listServerTools(trx, row.id)).map((t) => [t.name, t]));
    const seen = new Set<string>();
    for (const tool of listings.tools) {
      if (seen.has(tool.name)) continue;
      seen.add(tool.name);
      const contract: DiscoveredContract = {
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        annotations: tool.annotations as Record<string, unknown> | undefined,
      };
      const problems = checkContract(contract);
      const impact = classifyImpact(contract);
      const hash = contractHash(contract);
      const passing = problems.length === 0;
      const reviewRequired = needsReview(impact);
      const base = {
        title: tool.title?.slice(0, 255) ?? null,
        description: tool.description?.slice(0, 4000) ?? null,
        input_schema: JSON.stringify(tool.inputSchema ?? {}),
        output_schema: tool.outputSchema ? JSON.stringify(tool.outputSchema) : null,
        annotations: tool.annotations ? JSON.stringify(tool.annotations) : null,
        impact: JSON.stringify(impact),
        read_only: impact.length === 1 && impact[0] === 'read',
        contract_hash: hash,
        contract_status: passing ? 'passing' : 'failing',
        contract_problems: JSON.stringify(problems),
        contract_checked_at: now,
        review_required: reviewRequired,
        removed_at: null,
        updated_at: now,
      };
      const before = existing.get(tool.name);
      let change: string;
      let review: string;
      if (!before) {
        change = 'added';
        review = passing && !reviewRequired ? 'approved' : 'disabled';
        await insertTool(trx, {
          id: newId(),
          realm_id: realmId,
          server_id: row.id,
          name: tool.name.slice(0, 128),
          ...base,
          review_status: review,
          review_note: review === 'approved' ? 'enabled automatically: read-only and the contract passes' : null,
          reviewed_by: null,
          reviewed_at: review === 'approved' ? now : null,
          discovered_at: now,
        });
      } else if (before.contract_hash !== hash) {
        change = 'changed';
        // A changed contract is disabled again until someone reviews it (quarantine and rejection stay).
        review = ['quarantined', 'rejected'].includes(before.review_status) ? before.review_status : 'disabled';
        await updateTool(trx, before.id, {
          ...base,
          review_required: true,
          review_status: review,
          review_note: review === 'disabled' ? 'contract changed on rediscovery: review again' : before.review_note,
          reviewed_by: null,
          reviewed_at: null,
        });
      } else {
        change = before.removed_at === null ? 'unchanged' : 'added';
        review = before.review_status;
        if (!passing && review === 'approved') review = 'disabled';
        await updateTool(trx, before.id, {
          ...base,
          review_required: toBoolean(before.review_required),
          review_status: review,
        });
      }
      summary[change as 'added' | 'changed' | 'unchanged'] += 1;
      if (review === 'approved' && passing) summary.enabled += 1;
      else if (review === 'disabled' && passing) summary.awaiting_review += 1;
      if (!passing) summary.failing += 1;
      report.push({ name: tool.name, status: passing ? 'passing' : 'failing', problems, change });
    }
    for (const [name, before] of existing) {
      if (seen.has(name) || before.removed_at !== null) continue;
      await updateTool(trx, before.id, { removed_at: now, updated_at: now });
      summary.removed += 1;
      report.push({ name, status: before.contract_status, problems: [], change: 'removed' });
    }
    const resources = [
      ...listings.resources.map((r) => ({
        kind: 'resource',
        uri: r.uri,
        name: r.name,
        description: r.description,
        mime: r.mimeType,
      })),
      ...listings.templates.map((r) => ({
        kind: 'template',
        uri: r.uriTemplate,
        name: r.name,
        description: r.description,
        mime: r.mimeType,
      })),
    ]
      .filter((r) => typeof r.uri === 'string' && r.uri.length <= 2048)
      .map((r) => ({
        id: newId(),
        realm_id: realmId,
        server_id: row.id,
        kind: r.kind,
        uri: r.uri,
        name: (r.name ?? r.uri).slice(0, 255),
        description: r.description?.slice(0, 4000) ?? null,
        mime_type: r.mime?.slice(0, 255) ?? null,
        discovered_at: now,
      }));
    await replaceResources(trx, row.id, resources);
    await updateServer(trx, row.id, { discovered_at: now, updated_at: now });
  });
  await tools.rt.realms.invalidate(realmId);
  return {
    ok: true as const,
    server_id: row.id,
    discovered_at: now,
    tools: summary,
    resources: listings.resources.length,
    resource_templates: listings.templates.length,
    contracts: report,
  };
}

/** Refreshes the contracts (a discovery) and reports, per tool, whether its contract passes. */
export async function contractTest(tools: ToolRuntime, principal: RuntimePrincipal, id: string) {
  const result = await discoverServer(tools, principal, id);
  const failing = result.contracts.filter((c) => c.status === 'failing');
  return {
    server_id: result.server_id,
    checked_at: result.discovered_at,
    passed: failing.length === 0,
    total: result.contracts.filter((c) => c.change !== 'removed').length,
    failing: failing.length,
    results: result.contracts,
  };
}

export async function listTools(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  id: string,
  query: { limit: number; cursor?: string | undefined; review_status?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await requireServer(tools, realmId, id);
  const after = decodeCursor('tools', query.cursor, ['string'] as const, () =>
    RuntimeErrors.invalid('cursor is not valid'),
  );
  const rows = await listToolPage(tools.rt.db, row.id, {
    limit: query.limit,
    afterName: after?.[0],
    reviewStatus: query.review_status,
  });
  const page = rows.slice(0, query.limit);
  return {
    data: page.map(toToolView),
    next_cursor: rows.length > query.limit ? encodeCursor('tools', [page.at(-1)!.name]) : null,
  };
}

export const REVIEW_DECISIONS = ['approve', 'reject', 'quarantine'] as const;

/**
 * Reviews a discovered tool: `approve` needs a passing contract (409 otherwise) and enables the tool; `reject`
 * and `quarantine` disable it (a quarantined tool stays disabled through rediscoveries until approved).
 */
export async function reviewTool(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  toolId: string,
  input: { decision: (typeof REVIEW_DECISIONS)[number]; note?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await findToolRow(tools.rt.db, realmId, toolId);
  if (!row) throw RuntimeErrors.notFound('Tool', toolId);
  if (input.decision === 'approve' && row.contract_status !== 'passing') throw ToolErrors.contractFailing(row.name);
  if (input.decision === 'approve' && row.removed_at !== null)
    throw RuntimeErrors.conflict(`Tool ${row.name} is no longer listed by its server: discover again first`);
  const status = { approve: 'approved', reject: 'rejected', quarantine: 'quarantined' }[input.decision];
  const now = nowIso(tools.rt);
  await inTransaction(tools.rt.engine, (trx) =>
    updateTool(trx, row.id, {
      review_status: status,
      review_note: input.note ?? null,
      reviewed_by: principal.identityId,
      reviewed_at: now,
      updated_at: now,
    }),
  );
  await tools.rt.realms.invalidate(realmId);
  return toToolView({
    ...row,
    review_status: status,
    review_note: input.note ?? null,
    reviewed_by: principal.identityId,
    reviewed_at: now,
    updated_at: now,
  });
}

// Resources ----------------------------------------------------------------------------------------------------------

export async function listResources(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  id: string,
  kind: 'resource' | 'template',
  query: { limit: number; cursor?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await requireServer(tools, realmId, id);
  const cursorKind = kind === 'resource' ? 'resources' : 'resource-templates';
  const after = decodeCursor(cursorKind, query.cursor, ['string', 'string'] as const, () =>
    RuntimeErrors.invalid('cursor is not valid'),
  );
  const rows = await listResourcePage(tools.rt.db, row.id, kind, { limit: query.limit, after });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    data: page.map(toResourceView),
    next_cursor: rows.length > query.limit && last ? encodeCursor(cursorKind, [last.name, last.id]) : null,
  };
}

/** True when `uri` matches an RFC 6570 template (simple `{var}` expansions, each one path-safe segment or more). */
function matchesTemplate(template: string, uri: string): boolean {
  if (template.length > 2048) return false;
  const pattern = template
    .split(/(\{[^}]{1,64}\})/)
    .map((part) => (part.startsWith('{') ? '[^/?#]{1,512}' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}$`).test(uri);
}

/**
 * Reads a resource the registry approved: one the server listed (or one matching a listed template) on an
 * enabled server; any other URI is a 404 and is never sent to the server.
 */
export async function readResource(tools: ToolRuntime, principal: RuntimePrincipal, id: string, uri: string) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await requireServer(tools, realmId, id);
  if (!toBoolean(row.is_active)) throw ToolErrors.serverDisabled(row.id);
  if (!(await offersResource(tools, row, uri))) throw RuntimeErrors.notFound('Resource', uri.slice(0, 200));
  return readKnownResource(tools, row, uri, undefined);
}

/** Whether the server listed the resource, or a template matching it, at its last discovery (approved to read). */
async function offersResource(tools: ToolRuntime, row: ServerRow, uri: string): Promise<boolean> {
  const known = await listServerResources(tools.rt.db, row.id);
  return known.some((r) => (r.kind === 'resource' ? r.uri === uri : matchesTemplate(r.uri, uri)));
}

async function readKnownResource(tools: ToolRuntime, row: ServerRow, uri: string, signal: AbortSignal | undefined) {
  const started = performance.now();
  try {
    const result = await tools.connector.use(await activeEndpoint(tools, row), (client) =>
      client.readResource({ uri }, { cache: 'bypass', timeout: 30_000, ...(signal ? { signal } : {}) } as never),
    );
    tools.stats.record({ server_id: row.id, kind: 'call', ok: true, latency_ms: performance.now() - started });
    const text = JSON.stringify(result.contents ?? []);
    if (Buffer.byteLength(text) > 1_048_576) throw ToolErrors.resultTooLarge();
    return { server_id: row.id, uri, contents: result.contents ?? [] };
  } catch (error) {
    if (!(error instanceof ToolCallError)) throw error;
    tools.stats.record({
      server_id: row.id,
      kind: 'call',
      ok: false,
      latency_ms: performance.now() - started,
      auth_failure: error.authFailure,
    });
    throw Object.assign(ToolErrors.upstream(error.code, safeFailureMessage(error.message)), {
      retryable: error.retryable,
    });
  }
}

/**
 * A flow step's resource read: the first active server among `allowed` (the execution agent's attached servers, in
 * their order) that lists the resource or a matching template. None: TOOL_NOT_AVAILABLE (nothing is called).
 */
export async function readResourceForFlow(
  tools: ToolRuntime,
  realmId: string,
  allowed: readonly string[],
  uri: string,
  signal: AbortSignal,
) {
  const rows = await findServersByIds(tools.rt.db, realmId, [...allowed]);
  for (const id of allowed) {
    const row = rows.find((r) => r.id === id);
    if (row && toBoolean(row.is_active) && (await offersResource(tools, row, uri)))
      return readKnownResource(tools, row, uri, signal);
  }
  throw ToolErrors.toolUnavailable(`No server attached to the agent offers the resource ${uri.slice(0, 200)}`);
}

// Proposals --------------------------------------------------------------------------------------------------------

export async function listProposals(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined; status?: string | undefined; server_id?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const rows = await listProposalRows(tools.rt.db, realmId, {
    limit: query.limit,
    before: cursorAfterId('tool-proposals', query.cursor),
    status: query.status,
    serverId: query.server_id?.toLowerCase(),
  });
  return idPage('tool-proposals', rows, query.limit, toProposalView);
}

/**
 * Generates bounded tool proposals for a server from its discovered resource templates (one read tool per
 * template, the template's variables as required string arguments) and its resources without a matching tool.
 * Proposals are records to review; approving one never enables anything.
 */
export async function generateProposals(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  input: { server_id: string; max_proposals?: number | undefined },
) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await requireServer(tools, realmId, input.server_id);
  const max = Math.min(input.max_proposals ?? 10, REGISTRY_LIMITS.proposalsPerGenerate);
  const pending = await countPendingProposals(tools.rt.db, realmId);
  const room = Math.max(0, REGISTRY_LIMITS.pendingProposalsPerRealm - pending);
  if (room === 0)
    throw RuntimeErrors.limit(
      `The realm has ${pending} proposals awaiting review (at most ${REGISTRY_LIMITS.pendingProposalsPerRealm}): review them first`,
    );
  const taken = new Set([
    ...(await listProposalNames(tools.rt.db, row.id)),
    ...(await listServerTools(tools.rt.db, row.id)).map((t) => t.name),
  ]);
  const now = nowIso(tools.rt);
  const created: ProposalRow[] = [];
  for (const resource of await listServerResources(tools.rt.db, row.id)) {
    if (created.length >= Math.min(max, room)) break;
    const base =
      resource.name
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .slice(0, 100) || 'resource';
    const name = `read_${base}`;
    if (taken.has(name)) continue;
    taken.add(name);
    const variables =
      resource.kind === 'template' ? [...resource.uri.matchAll(/\{([A-Za-z0-9_]{1,64})\}/g)].map((m) => m[1]!) : [];
    created.push({
      id: newId(),
      realm_id: realmId,
      server_id: row.id,
      name,
      description: `Read ${resource.name}${resource.description ? `: ${resource.description.slice(0, 300)}` : ''}`,
      input_schema: JSON.stringify({
        type: 'object',
        properties: Object.fromEntries(variables.map((v) => [v, { type: 'string', maxLength: 512 }])),
        required: variables,
        additionalProperties: false,
      }),
      source: JSON.stringify({ kind: resource.kind, uri: resource.uri }),
      status: 'proposed',
      review_note: null,
      reviewed_by: null,
      reviewed_at: null,
      created_by: principal.identityId,
      created_at: now,
    });
  }
  await inTransaction(tools.rt.engine, async (trx) => {
    for (const proposal of created) await insertProposal(trx, proposal);
  });
  return { server_id: row.id, generated: created.length, data: created.map(toProposalView) };
}

export async function reviewProposal(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  id: string,
  input: { decision: 'approve' | 'reject'; note?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await findProposal(tools.rt.db, realmId, id);
  if (!row) throw RuntimeErrors.notFound('Tool proposal', id);
  const status = input.decision === 'approve' ? 'approved' : 'rejected';
  const now = nowIso(tools.rt);
  const decided = await inTransaction(tools.rt.engine, (trx) =>
    decideProposal(trx, row.id, {
      status,
      review_note: input.note ?? null,
      reviewed_by: principal.identityId,
      reviewed_at: now,
    }),
  );
  if (!decided) throw RuntimeErrors.conflict(`Tool proposal ${row.id} was already ${row.status}`);
  return toProposalView({
    ...row,
    status,
    review_note: input.note ?? null,
    reviewed_by: principal.identityId,
    reviewed_at: now,
  });
}

/** Whether a server id exists in the realm (agent `allowed_mcp_servers`). */
export async function serverExists(tools: ToolRuntime, realmId: string, id: string): Promise<boolean> {
  return (await findServer(tools.rt.db, realmId, id)) !== undefined;
}
