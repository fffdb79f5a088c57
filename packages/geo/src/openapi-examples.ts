import type { OperationExamples } from '@keel/core';

/**
 * Ids and secrets the examples use for things a caller creates first (`keel geo bootstrap` prints a workspace id
 * and keys; the other ids come from the create operations). The replay test maps each to the one it created.
 */
export const EXAMPLE_IDS = {
  workspace: '0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77',
  project: '0195f3a2-9d40-7a11-8c3e-5b7d2e4f6a18',
  action: '0195f3a4-1b2c-7e3d-9f4a-6c5b7d8e9f01',
  export: '0195f3a5-2c3d-7f4e-8a5b-7d6c8e9fa012',
  share: '0195f3a6-3d4e-7a5f-9b6c-8e7d9fa0b123',
  shareToken: 'geoshare_7Kq2mN9pR4tV6xZ8bD1fH3jL5nP7rT9v',
  key: '0195f3a7-4e5f-7b6a-8c7d-9f8eab1c2d34',
  siteTokenId: '0195f3a8-5f6a-7c7b-9d8e-a09fbc2d3e45',
  siteToken: 'geosite_3Fh6Jk9Lm2Np5Qr8St1Uv4Wx7Yz0Ab3C',
  prompt: '0195f3a9-6a7b-7d8c-8e9f-b1a0cd3e4f56',
  engine: '0195f3aa-7b8c-7e9d-9fa0-c2b1de4f5a67',
  run: '0195f3ab-8c9d-7fae-8ab1-d3c2ef5a6b78',
  treatmentRun: '0195f3ac-9dae-7abf-9bc2-e4d3fa6b7c89',
  answer: '0195f3ad-aebf-7bca-8cd3-f5e4ab7c8d9a',
  schedule: '0195f3ae-bfca-7cdb-9de4-a6f5bc8d9eab',
  view: '0195f3af-c0db-7dec-8ef5-b7a6cd9eafbc',
  engineBaseUrl: 'https://api.openai.com/v1',
} as const;

const workspaceId = EXAMPLE_IDS.workspace;
const inWorkspace = { query: { workspaceId } };
const note = (text: string) => ({ body: { workspaceId, note: text } });

/**
 * One realistic request per operation, shown by `/docs` ("Try it out" sends it as is) and replayed against a
 * running geo by test/openapi-examples.test.ts. An operation added without an entry fails that test.
 */
export const GEO_EXAMPLES: OperationExamples = {
  'GET /api/v1/geo/analytics': { query: { workspaceId, dataset: 'metrics', limit: 50 } },
  'POST /api/v1/geo/signals': {
    headers: { 'idempotency-key': 'nightly-visibility-2026-11-25' },
    body: {
      workspaceId,
      records: [
        {
          dataset: 'metrics',
          definitionVersion: 'ai-visibility/3',
          key: 'ai-visibility:2026-11-25',
          computedAt: '2026-11-25T00:00:00Z',
          data: { metric: 'ai_visibility', value: 0.42, engine: 'chatgpt', prompts: 120 },
          confidence: { value: 0.42, interval: [0.36, 0.48] },
          evidence: [{ type: 'query', ref: 'best waterproof hiking tent for two' }],
        },
        {
          dataset: 'dashboards',
          definitionVersion: 'dashboard/1',
          key: 'weekly-ai-visibility',
          data: {
            title: 'Weekly AI visibility',
            widgets: [{ title: 'Share of AI answers', type: 'line', metric: 'ai_visibility' }],
          },
        },
      ],
    },
  },
  'POST /api/v1/geo/actions': {
    body: {
      workspaceId,
      title: 'Add an FAQ on tent waterproof ratings to the Trailhead 2 page',
      kind: 'content_update',
      payload: { url: 'https://www.acme-outdoor.com/tents/trailhead-2', section: 'FAQ' },
    },
  },
  'GET /api/v1/geo/actions/{actionId}': { params: { actionId: EXAMPLE_IDS.action }, ...inWorkspace },
  'POST /api/v1/geo/actions/{actionId}/request-approval': {
    params: { actionId: EXAMPLE_IDS.action },
    ...note('Ready for review by the content lead'),
  },
  'POST /api/v1/geo/actions/{actionId}/approve': {
    params: { actionId: EXAMPLE_IDS.action },
    ...note('Approved: matches the spring campaign'),
  },
  'POST /api/v1/geo/actions/{actionId}/reject': {
    params: { actionId: EXAMPLE_IDS.action },
    ...note('Rejected: the ratings are not confirmed yet'),
  },
  'POST /api/v1/geo/actions/{actionId}/execute': {
    params: { actionId: EXAMPLE_IDS.action },
    ...note('Published on the product page'),
  },
  'GET /api/v1/geo/target-graph': { query: { workspaceId, includeHistory: false } },
  'POST /api/v1/geo/target-graph': {
    headers: { 'idempotency-key': 'graph-import-2026-11-25' },
    body: {
      operation: 'import',
      workspaceId,
      targets: [
        { key: 'acme-outdoor', name: 'Acme Outdoor', kind: 'brand', url: 'https://www.acme-outdoor.com/' },
        {
          key: 'trailhead-2',
          name: 'Trailhead 2 tent',
          kind: 'product',
          url: 'https://www.acme-outdoor.com/tents/trailhead-2',
          aliases: ['Trailhead II'],
        },
        { key: 'summit-gear', name: 'Summit Gear', kind: 'competitor' },
      ],
      relations: [{ from: 'acme-outdoor', to: 'trailhead-2', kind: 'sells' }],
    },
  },
  'POST /api/v2/geo/events': {
    body: {
      siteToken: EXAMPLE_IDS.siteToken,
      consent: { analytics: true },
      events: [
        {
          type: 'pageview',
          url: 'https://www.acme-outdoor.com/tents/trailhead-2',
          referrer: 'https://chatgpt.com/',
        },
      ],
    },
  },
  'GET /api/v1/geo/privacy': { query: { workspaceId, limit: 20 } },
  'POST /api/v1/geo/privacy': { body: { workspaceId, type: 'access', subject: 'visitor-8f14e45f' } },
  'POST /api/v1/geo/exports': { body: { workspaceId, source: 'dataset', dataset: 'metrics', format: 'csv' } },
  'GET /api/v1/geo/exports': { query: { workspaceId, limit: 20 } },
  'GET /api/v1/geo/exports/{exportId}': { params: { exportId: EXAMPLE_IDS.export } },
  'POST /api/v1/geo/dashboards/{dashboardId}/shares': {
    params: { dashboardId: 'weekly-ai-visibility' },
    body: { workspaceId, expiresInHours: 168 },
  },
  'GET /api/v1/geo/dashboards/{dashboardId}/shares': {
    params: { dashboardId: 'weekly-ai-visibility' },
    ...inWorkspace,
  },
  'DELETE /api/v1/geo/dashboards/{dashboardId}/shares/{shareId}': {
    params: { dashboardId: 'weekly-ai-visibility', shareId: EXAMPLE_IDS.share },
    ...inWorkspace,
  },
  'GET /api/v1/geo/shared-dashboard': { headers: { 'x-share-token': EXAMPLE_IDS.shareToken } },
  'GET /api/v1/geo/keys': { query: { limit: 20 } },
  'POST /api/v1/geo/keys': {
    body: {
      name: 'Looker dashboard (read only)',
      permissions: ['geo:read'],
      scope: { type: 'workspace', workspaceIds: [workspaceId] },
      expiresAt: '2027-06-30T00:00:00Z',
    },
  },
  'DELETE /api/v1/geo/keys/{keyId}': { params: { keyId: EXAMPLE_IDS.key } },
  'POST /api/v1/geo/site-tokens': { body: { workspaceId, name: 'www.acme-outdoor.com' } },
  'DELETE /api/v1/geo/site-tokens/{tokenId}': { params: { tokenId: EXAMPLE_IDS.siteTokenId } },
  'POST /api/v1/geo/attribution': { body: { workspaceId, days: 30 } },
  'POST /api/v1/geo/saved-views': {
    body: {
      workspaceId,
      name: 'Visibility by engine',
      dataset: 'metrics',
      filters: [{ field: 'data.metric', op: 'eq', value: 'mention_rate.by_engine' }],
      groupBy: [{ field: 'data.engineName' }],
      aggregates: [{ fn: 'avg', field: 'data.value' }],
      chart: { type: 'bar', x: 'data.engineName', y: 'avg(data.value)' },
    },
  },
  'GET /api/v1/geo/saved-views': { query: { workspaceId, limit: 20 } },
  'GET /api/v1/geo/saved-views/{viewId}': { params: { viewId: EXAMPLE_IDS.view }, ...inWorkspace },
  'PATCH /api/v1/geo/saved-views/{viewId}': {
    params: { viewId: EXAMPLE_IDS.view },
    body: { workspaceId, name: 'Visibility by engine (weekly)', expectedVersion: 1 },
  },
  'GET /api/v1/geo/saved-views/{viewId}/rows': {
    params: { viewId: EXAMPLE_IDS.view },
    query: { workspaceId, limit: 100 },
  },
  'DELETE /api/v1/geo/saved-views/{viewId}': { params: { viewId: EXAMPLE_IDS.view }, ...inWorkspace },
  'POST /api/v1/geo/experiments': {
    body: {
      workspaceId,
      name: 'Trailhead 2 FAQ',
      metric: 'mention_rate',
      controlRunId: EXAMPLE_IDS.run,
      treatmentRunId: EXAMPLE_IDS.treatmentRun,
      design: 'before_after',
      change: 'Added an FAQ with waterproof ratings to the Trailhead 2 page',
    },
  },
  'POST /api/v1/geo/simulations': {
    body: {
      workspaceId,
      name: 'Trailhead 2 page with an FAQ',
      engineIds: [EXAMPLE_IDS.engine],
      promptIds: [EXAMPLE_IDS.prompt],
      samples: 2,
      content: {
        url: 'https://www.acme-outdoor.com/tents/trailhead-2',
        text: 'Trailhead 2: a two-person tent with a 3000 mm waterproof rating, 2.1 kg, set up in four minutes.',
      },
    },
  },
  'POST /api/v1/geo/prompts': {
    body: {
      workspaceId,
      prompts: [{ text: 'What is the best waterproof hiking tent for two people?', topic: 'tents', locale: 'en-US' }],
    },
  },
  'GET /api/v1/geo/prompts': { query: { workspaceId, limit: 50 } },
  'DELETE /api/v1/geo/prompts/{promptId}': { params: { promptId: EXAMPLE_IDS.prompt }, ...inWorkspace },
  'POST /api/v1/geo/engines': {
    body: {
      workspaceId,
      name: 'ChatGPT (gpt-4o-mini)',
      provider: 'chat_completions',
      baseUrl: EXAMPLE_IDS.engineBaseUrl,
      model: 'gpt-4o-mini',
      apiKey: 'sk-proj-your-openai-key',
      concurrency: 4,
      requestsPerMinute: 60,
    },
  },
  'GET /api/v1/geo/engines': inWorkspace,
  'DELETE /api/v1/geo/engines/{engineId}': { params: { engineId: EXAMPLE_IDS.engine }, ...inWorkspace },
  'POST /api/v1/geo/runs': { body: { workspaceId, engineIds: [EXAMPLE_IDS.engine], samples: 2 } },
  'GET /api/v1/geo/runs': { query: { workspaceId, limit: 20 } },
  'GET /api/v1/geo/runs/{runId}': { params: { runId: EXAMPLE_IDS.run }, ...inWorkspace },
  'GET /api/v1/geo/runs/{runId}/answers': { params: { runId: EXAMPLE_IDS.run }, query: { workspaceId, limit: 50 } },
  'GET /api/v1/geo/answers/{answerId}': { params: { answerId: EXAMPLE_IDS.answer }, ...inWorkspace },
  'POST /api/v1/geo/schedules': {
    body: { workspaceId, engineIds: [EXAMPLE_IDS.engine], samples: 2, everyHours: 24 },
  },
  'GET /api/v1/geo/schedules': inWorkspace,
  'DELETE /api/v1/geo/schedules/{scheduleId}': { params: { scheduleId: EXAMPLE_IDS.schedule }, ...inWorkspace },
  'POST /api/v1/geo/mcp': { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
};
