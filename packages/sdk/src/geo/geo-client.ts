import { randomUUID } from 'node:crypto';
import type { GeoApi } from '@keel/geo';
import { ApiError, ToolCallError } from '../http/errors.ts';
import { HttpTransport } from '../http/transport.ts';

export interface GeoClientOptions {
  /** e.g. `http://127.0.0.1:8082` */
  baseUrl: string;
  /** A geo API key (server-side only; never ship it to browsers). */
  apiKey: string;
  /** Per attempt; default 10 s. */
  timeoutMs?: number;
  /** Retries of transient failures; default 3. */
  maxRetries?: number;
  retryBaseDelayMs?: number;
  fetch?: typeof fetch;
}

export interface AnalyticsQuery {
  workspaceId: string;
  dataset: GeoApi.Dataset;
  /** 1–500, default 100. */
  limit?: number;
  cursor?: string;
  /** experiments only */
  mode?: 'observed' | 'simulated';
}

export interface IdempotencyOption {
  /** Sent as Idempotency-Key; generated (a UUID) when absent and reused by every retry of this call. */
  idempotencyKey?: string;
}

export interface ToolResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * Server-side client of the geo service: analytics (with page iteration), target graph read/import/merge,
 * signals, privacy requests, exports and MCP tool calls. Transient failures are retried with backoff; 401, 403,
 * 404, 409 and 422 never are. Mutations carry an Idempotency-Key, the same one on every retry.
 */
export class GeoClient {
  readonly #http: HttpTransport;
  #rpcId = 0;

  constructor(options: GeoClientOptions) {
    this.#http = new HttpTransport({
      baseUrl: options.baseUrl,
      headers: { authorization: `Bearer ${options.apiKey}` },
      timeoutMs: options.timeoutMs,
      maxRetries: options.maxRetries,
      retryBaseDelayMs: options.retryBaseDelayMs,
      fetch: options.fetch,
    });
  }

  /** One page of a dataset. */
  analytics(query: AnalyticsQuery): Promise<GeoApi.AnalyticsPage> {
    return this.#http.json({ method: 'GET', path: '/api/v1/geo/analytics', query: { ...query }, idempotent: true });
  }

  /** Every page of a dataset in turn, following `nextCursor` (stops after `maxPages`, default unlimited). */
  async *analyticsPages(
    query: Omit<AnalyticsQuery, 'cursor'>,
    options: { maxPages?: number } = {},
  ): AsyncGenerator<GeoApi.AnalyticsPage> {
    let cursor: string | undefined;
    for (let pages = 0; pages < (options.maxPages ?? Number.POSITIVE_INFINITY); pages++) {
      const page = await this.analytics({ ...query, ...(cursor ? { cursor } : {}) });
      yield page;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  /** Every record of a dataset, newest first, fetched page by page. */
  async *analyticsItems(
    query: Omit<AnalyticsQuery, 'cursor'>,
    options: { maxPages?: number } = {},
  ): AsyncGenerator<GeoApi.AnalyticsItem> {
    for await (const page of this.analyticsPages(query, options)) yield* page.items;
  }

  getTargetGraph(query: {
    workspaceId: string;
    projectId?: string;
    includeHistory?: boolean;
  }): Promise<GeoApi.TargetGraph> {
    return this.#http.json({ method: 'GET', path: '/api/v1/geo/target-graph', query: { ...query }, idempotent: true });
  }

  /** Imports targets and relations (upsert by key). A cyclic or invalid graph rejects with an ApiError 422. */
  importTargetGraph(
    input: Omit<GeoApi.GraphImport, 'operation'>,
    options: IdempotencyOption = {},
  ): Promise<GeoApi.GraphReceipt> {
    return this.#mutateGraph({ operation: 'import', ...input }, options);
  }

  /** Folds duplicate targets into a canonical one (relations re-pointed, keys kept as aliases). */
  mergeTargets(
    input: Omit<GeoApi.GraphMerge, 'operation'>,
    options: IdempotencyOption = {},
  ): Promise<GeoApi.GraphReceipt> {
    return this.#mutateGraph({ operation: 'merge', ...input }, options);
  }

  #mutateGraph(body: GeoApi.GraphMutation, options: IdempotencyOption): Promise<GeoApi.GraphReceipt> {
    return this.#postOnce('/api/v1/geo/target-graph', body, options);
  }

  /** A POST under an Idempotency-Key (the caller's, or a new UUID) that every retry of this call reuses. */
  #postOnce<T>(path: string, body: unknown, options: IdempotencyOption): Promise<T> {
    return this.#http.json({
      method: 'POST',
      path,
      body,
      headers: { 'idempotency-key': options.idempotencyKey ?? randomUUID() },
      idempotent: true,
    });
  }

  /** Writes signal records (all or nothing) under an Idempotency-Key. */
  writeSignals(
    input: { workspaceId: string; records: GeoApi.SignalRecordInput[] },
    options: IdempotencyOption = {},
  ): Promise<{ workspaceId: string; accepted: number; ids: string[] }> {
    return this.#postOnce('/api/v1/geo/signals', input, options);
  }

  /**
   * Submits a pseudonymous access or deletion request (the subject is hashed by the service on arrival), under an
   * Idempotency-Key so a retry never queues a second request.
   */
  submitPrivacyRequest(
    input: { workspaceId: string; type: 'access' | 'deletion'; subject: string },
    options: IdempotencyOption = {},
  ): Promise<GeoApi.PrivacyRequest> {
    return this.#postOnce('/api/v1/geo/privacy', input, options);
  }

  listPrivacyRequests(query: {
    workspaceId: string;
    limit?: number;
    cursor?: string;
  }): Promise<{ items: GeoApi.PrivacyRequest[]; nextCursor: string | null }> {
    return this.#http.json({ method: 'GET', path: '/api/v1/geo/privacy', query: { ...query }, idempotent: true });
  }

  /** Queues an export under an Idempotency-Key, so a retry never queues a second one. */
  requestExport(
    input: {
      workspaceId: string;
      source: 'dataset' | 'report';
      dataset?: GeoApi.Dataset;
      reportId?: string;
      format: GeoApi.ExportFormat;
    },
    options: IdempotencyOption = {},
  ): Promise<GeoApi.Export> {
    return this.#postOnce('/api/v1/geo/exports', input, options);
  }

  /** The export's bytes once ready, or its status while it is being generated. */
  async downloadExport(
    exportId: string,
  ): Promise<{ ready: true; contentType: string; body: Uint8Array } | { ready: false; export: GeoApi.Export }> {
    const response = await this.#http.send({
      method: 'GET',
      path: `/api/v1/geo/exports/${encodeURIComponent(exportId)}`,
      idempotent: true,
    });
    if (response.status === 202) return { ready: false, export: (await response.json()) as GeoApi.Export };
    return {
      ready: true,
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
      body: new Uint8Array(await response.arrayBuffer()),
    };
  }

  /** Lists the MCP tools this key may call. */
  async listTools(): Promise<{ name: string; description?: string; inputSchema: Record<string, unknown> }[]> {
    const result = await this.#rpc<{
      tools: { name: string; description?: string; inputSchema: Record<string, unknown> }[];
    }>('tools/list', undefined);
    return result.tools;
  }

  /**
   * Calls an MCP tool. A JSON-RPC error (authentication, permission, unknown tool) rejects with ToolCallError;
   * a tool that fails on its own terms resolves with `isError: true`.
   */
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    return this.#rpc<ToolResult>('tools/call', { name, arguments: args });
  }

  async #rpc<T>(method: string, params: unknown): Promise<T> {
    const id = ++this.#rpcId;
    const body = { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) };
    let response: Response;
    try {
      response = await this.#http.send({
        method: 'POST',
        path: '/api/v1/geo/mcp',
        body,
        headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        idempotent:
          method === 'tools/list' ||
          (method === 'tools/call' && (params as { name: string }).name !== 'geo_request_action_approval'),
      });
    } catch (error) {
      const rpcError =
        error instanceof ApiError
          ? (error.body as { error?: { code?: unknown; message?: unknown; data?: unknown } } | null)?.error
          : undefined;
      if (error instanceof ApiError && rpcError && typeof rpcError.code === 'number') {
        // Both layers: the HTTP status and the JSON-RPC error object in the body.
        throw new ToolCallError(rpcError.code, String(rpcError.message ?? error.message), error.status, rpcError.data);
      }
      throw error;
    }
    const message = (await response.json()) as {
      result?: T;
      error?: { code: number; message: string; data?: unknown };
    };
    if (message.error)
      throw new ToolCallError(message.error.code, message.error.message, response.status, message.error.data);
    return message.result as T;
  }
}
