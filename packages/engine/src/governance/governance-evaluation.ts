import { fromJsonColumn } from '@keel/core';
import { loadAgent } from '../agents/agent-service.ts';
import type { RuntimePrincipal } from '../identity/roles.ts';
import { requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { picosText } from '../providers/pricing.ts';
import { answerDirectly } from '../runtime/orchestrator.ts';
import { createRunBudget } from '../runtime/run-budget.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { asksForSensitiveData } from '../runtime/sensitive-data.ts';
import {
  actionAllowed,
  activePolicy,
  admitRun,
  chargeRun,
  checkProviderAllowed,
  checkToolAllowed,
  type GovernancePolicy,
  pinnedPolicy,
} from './governance-enforcement.ts';
import { GOVERNANCE_PROPOSE, governanceWrite, iso, rejectPersonalData } from './governance-service.ts';
import {
  type DatasetRow,
  type EvaluationRunRow,
  findDataset,
  findEvaluationRun,
  insertDataset,
  insertEvaluationRun,
} from './governance-store.ts';

/** Bounds of evaluation: cases per dataset, cases answered at once, a run's total time, answer text kept per case. */
export const MAX_CASES = 100;
const CONCURRENCY = 4;
export const MAX_RUN_MS = 120_000;
const MAX_KEPT_ANSWER = 2000;

export interface EvaluationCase {
  input: string;
  expected_action?: string | undefined;
  expected_contains?: string[] | undefined;
  must_not_contain?: string[] | undefined;
  tool_call?: { tool_name: string; arguments?: Record<string, unknown> | undefined } | undefined;
}

export interface DatasetInput {
  realm_id?: string | undefined;
  name: string;
  kind: 'synthetic' | 'approved_redacted';
  cases: EvaluationCase[];
  approval?: { reference: string; note?: string | undefined } | undefined;
}

export function toDatasetView(row: DatasetRow) {
  return {
    id: row.id,
    realm_id: row.realm_id,
    name: row.name,
    kind: row.kind,
    case_count: row.case_count,
    cases: fromJsonColumn<EvaluationCase[]>(row.cases),
    approval: fromJsonColumn<Record<string, unknown> | null>(row.approval),
    created_by: row.created_by,
    created_at: iso(row.created_at)!,
  };
}

/**
 * Stores an evaluation dataset: `synthetic`, or `approved_redacted` (production-derived, redacted, with the approval
 * reference recorded and the caller — an admin or owner — as the approver). Either way every string of every case
 * goes through guard's detector first: raw personal data is a 400 GOVERNANCE_RAW_PII and nothing is stored.
 */
export function createDataset(rt: RuntimeContext, principal: RuntimePrincipal, input: DatasetInput, rawKey: unknown) {
  const realmId = requirePermission(principal, GOVERNANCE_PROPOSE);
  if (input.kind === 'approved_redacted') {
    requirePermission(principal, 'realm:manage');
    if (!input.approval) throw RuntimeErrors.invalid('An approved_redacted dataset needs approval.reference');
  }
  if (input.realm_id !== undefined && input.realm_id.toLowerCase() !== realmId) throw RuntimeErrors.realmMismatch();
  rejectPersonalData(rt, input.cases, 'body/cases');
  return governanceWrite(
    rt,
    principal,
    'POST /api/v1/governance/evaluation-datasets',
    rawKey,
    input,
    async (trx, audit) => {
      const now = nowIso(rt);
      const row: DatasetRow = {
        id: newId(),
        realm_id: realmId,
        name: input.name,
        kind: input.kind,
        cases: JSON.stringify(input.cases),
        case_count: input.cases.length,
        approval: input.approval
          ? JSON.stringify({ ...input.approval, approved_by: principal.identityId, approved_at: now })
          : null,
        created_by: principal.identityId,
        created_at: now,
      };
      await insertDataset(trx, row);
      await audit({
        action: 'dataset.created',
        targetType: 'evaluation_dataset',
        targetId: row.id,
        details: { kind: row.kind, case_count: row.case_count },
      });
      return { statusCode: 201, body: toDatasetView(row) };
    },
  );
}

export interface RunInput {
  realm_id?: string | undefined;
  dataset_id: string;
  agent_id: string;
  mode: 'offline' | 'shadow' | 'adversarial';
  policy_id?: string | undefined;
}

interface Decision {
  action: string;
  allowed: boolean;
  reason: string | null;
}

export function toRunView(row: EvaluationRunRow) {
  return {
    id: row.id,
    realm_id: row.realm_id,
    dataset_id: row.dataset_id,
    mode: row.mode,
    agent_id: row.agent_id,
    policy_id: row.policy_id,
    status: row.status,
    summary: fromJsonColumn<Record<string, unknown>>(row.summary),
    results: fromJsonColumn<Record<string, unknown>[]>(row.results),
    created_by: row.created_by,
    created_at: iso(row.created_at)!,
    completed_at: iso(row.completed_at),
  };
}

async function decide(
  rt: RuntimeContext,
  realmId: string,
  policy: GovernancePolicy | null,
  action: string,
  providerType: string,
): Promise<Decision> {
  try {
    await checkProviderAllowed(rt, realmId, policy, providerType);
  } catch (error) {
    return { action, allowed: false, reason: (error as Error).message };
  }
  if (!actionAllowed(policy, action))
    return {
      action,
      allowed: false,
      reason: `the action ${action} is not allowed by policy version ${policy!.version}`,
    };
  return { action, allowed: true, reason: null };
}

/** Whether the answer meets the case's expectations (case-insensitive substrings). */
function expectationsMet(testCase: EvaluationCase, action: string, content: string): string[] {
  const failures: string[] = [];
  const text = content.toLowerCase();
  if (testCase.expected_action && testCase.expected_action !== action)
    failures.push(`expected action ${testCase.expected_action}, got ${action}`);
  for (const needle of testCase.expected_contains ?? [])
    if (!text.includes(needle.toLowerCase())) failures.push(`answer lacks "${needle}"`);
  for (const needle of testCase.must_not_contain ?? [])
    if (text.includes(needle.toLowerCase())) failures.push(`answer contains "${needle}"`);
  return failures;
}

/**
 * Runs a dataset against an agent without side effects and stores the run with per-case outcomes. Each case is
 * answered through the same direct-answer path as a chat turn (the agent's provider, active prompt, knowledge) but
 * with no session, no transcript, no execution record and no anonymous events; tools are never called — a case's
 * `tool_call` is only checked against the policy (`executed: false`). Modes: `offline` judges the answers under the
 * active policy; `shadow` under a candidate policy version (`policy_id`), reporting where the active and candidate
 * decisions differ; `adversarial` also fails any answer that holds or asks for sensitive data.
 */
export async function runEvaluation(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: RunInput,
  rawKey: unknown,
  traceId: string,
) {
  const realmId = requirePermission(principal, GOVERNANCE_PROPOSE);
  if (input.realm_id !== undefined && input.realm_id.toLowerCase() !== realmId) throw RuntimeErrors.realmMismatch();
  const dataset = await findDataset(rt.db, realmId, input.dataset_id.toLowerCase());
  if (!dataset) throw RuntimeErrors.notFound('Evaluation dataset', input.dataset_id);
  const agent = await loadAgent(rt, realmId, input.agent_id);
  if (!agent) throw RuntimeErrors.notFound('Agent', input.agent_id);
  const active = await activePolicy(rt, realmId);
  let candidate: GovernancePolicy | null = null;
  if (input.mode === 'shadow') {
    if (!input.policy_id) throw RuntimeErrors.invalid('A shadow run needs policy_id (the candidate policy version)');
    candidate = await pinnedPolicy(rt, realmId, input.policy_id.toLowerCase());
    if (!candidate) throw RuntimeErrors.notFound('Policy', input.policy_id);
  } else if (input.policy_id !== undefined) throw RuntimeErrors.invalid('policy_id is for shadow runs only');
  await admitRun(rt, realmId);

  const cases = fromJsonColumn<EvaluationCase[]>(dataset.cases);
  const judged = candidate ?? active;
  let tokens = 0;
  let costPicos = 0n;
  const results: Record<string, unknown>[] = new Array(cases.length);
  const started = rt.clock();
  const runCase = async (index: number) => {
    const testCase = cases[index]!;
    if (rt.clock() - started > MAX_RUN_MS) {
      results[index] = {
        index,
        outcome: 'error',
        error: { code: 'EVALUATION_DEADLINE', message: `not started within the run's ${MAX_RUN_MS / 1000} s` },
      };
      return;
    }
    const budget = createRunBudget(agent.settings, rt.clock);
    try {
      const outcome = await answerDirectly(
        rt,
        {
          realmId,
          principal,
          agent,
          session: null,
          message: testCase.input,
          history: [],
          channel: 'evaluation',
          locale: null,
          metadata: {},
          clientCapabilities: undefined,
          budget,
          traceId,
          // Judged below under the policy being evaluated (active or candidate), not refused on the way.
          policy: null,
        },
        { messages: [{ role: 'user', content: testCase.input }] },
      );
      const content = outcome.action.content ?? '';
      if (outcome.usage) {
        tokens += outcome.usage.inputTokens + outcome.usage.outputTokens;
        costPicos += outcome.usage.costPicos;
      }
      const providerType = String(outcome.diagnostics.provider_type ?? '');
      const decision = await decide(rt, realmId, judged, outcome.action.type, providerType);
      const failures = expectationsMet(testCase, outcome.action.type, content);
      if (!decision.allowed) failures.push(decision.reason!);
      // The runtime already replaces such an answer in production (`policy: sensitive_data_blocked`); adversarial
      // runs report that the model tried.
      const blocked = outcome.action.metadata.policy === 'sensitive_data_blocked';
      if (
        input.mode === 'adversarial' &&
        (blocked || asksForSensitiveData(content) || rt.scanner.scanText(content, 'stored'))
      )
        failures.push('the model answer held or asked for sensitive data');
      let tool: Record<string, unknown> | null = null;
      if (testCase.tool_call) {
        let allowed = true;
        try {
          await checkToolAllowed(rt, realmId, judged, testCase.tool_call.tool_name);
        } catch {
          allowed = false;
        }
        tool = { tool_name: testCase.tool_call.tool_name, allowed_by_policy: allowed, executed: false };
      }
      const result: Record<string, unknown> = {
        index,
        outcome: failures.length === 0 ? 'passed' : 'failed',
        action: outcome.action.type,
        answer: content.slice(0, MAX_KEPT_ANSWER),
        failures,
        tool_call: tool,
        usage: outcome.usage
          ? {
              input_tokens: outcome.usage.inputTokens,
              output_tokens: outcome.usage.outputTokens,
              cost: picosText(outcome.usage.costPicos),
            }
          : null,
      };
      if (input.mode === 'shadow') {
        const current = await decide(rt, realmId, active, outcome.action.type, providerType);
        result.shadow = {
          active: { policy_version: active?.version ?? null, allowed: current.allowed, reason: current.reason },
          candidate: { policy_version: candidate!.version, allowed: decision.allowed, reason: decision.reason },
          differs: current.allowed !== decision.allowed,
        };
      }
      results[index] = result;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      results[index] = {
        index,
        outcome: 'error',
        error: {
          code: typeof code === 'string' ? code : 'EVALUATION_FAILED',
          message: (error as Error).message.slice(0, 300),
        },
      };
    } finally {
      budget.dispose();
    }
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, cases.length) }, async () => {
      while (next < cases.length) await runCase(next++);
    }),
  );
  await chargeRun(rt, realmId, { tokens, costPicos });

  const count = (outcome: string) => results.filter((r) => r.outcome === outcome).length;
  const summary = {
    total: results.length,
    passed: count('passed'),
    failed: count('failed'),
    errors: count('error'),
    ...(input.mode === 'shadow'
      ? { differences: results.filter((r) => (r.shadow as { differs?: boolean })?.differs).length }
      : {}),
    tokens,
    cost: picosText(costPicos),
  };
  return governanceWrite(
    rt,
    principal,
    'POST /api/v1/governance/evaluation-runs',
    rawKey,
    input,
    async (trx, audit) => {
      const now = nowIso(rt);
      const row: EvaluationRunRow = {
        id: newId(),
        realm_id: realmId,
        dataset_id: dataset.id,
        mode: input.mode,
        agent_id: agent.id,
        policy_id: judged?.id ?? null,
        status: 'completed',
        summary: JSON.stringify(summary),
        results: JSON.stringify(results),
        created_by: principal.identityId,
        created_at: now,
        completed_at: now,
      };
      await insertEvaluationRun(trx, row);
      await audit({
        action: 'evaluation_run.recorded',
        targetType: 'evaluation_run',
        targetId: row.id,
        details: { mode: row.mode, dataset_id: row.dataset_id, passed: summary.passed, total: summary.total },
      });
      return { statusCode: 201, body: toRunView(row) };
    },
  );
}

/** One evaluation run with its per-case outcomes. */
export async function getEvaluationRun(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, GOVERNANCE_PROPOSE);
  const row = await findEvaluationRun(rt.db, realmId, id.toLowerCase());
  if (!row) throw RuntimeErrors.notFound('Evaluation run', id);
  return toRunView(row);
}
