import { scoreCandidates } from '../ai/ai-scorer.ts';
import type { GuardContext } from '../context.ts';
import { DetectionTimeout } from '../detect/index.ts';
import type { Candidate, Decision, Detection, PlaceholderFor } from '../detect/types.ts';
import { GuardErrors } from '../errors.ts';
import { UserWorkFailed } from '../sandbox/user-work.ts';
import type { ActiveConfig } from '../state/active-config.ts';
import { type DecisionRule, isBuiltinValidator } from '../validators/builtin-validators.ts';
import { type CompiledValidator, compileBuiltin } from '../validators/compile-validator.ts';

export interface ValidatorResult {
  name: string;
  type: 'AI_PROMPT' | 'VALIDATOR';
  passed: boolean;
  /** Two decimals; null when nothing measured the verdict (decision_rule VERDICT_ONLY or FAIL_CLOSED). */
  confidence_score: string | null;
  /** How a failure of this validator is decided (see DecisionRule). */
  decision_rule: DecisionRule;
  /** Why it failed, when it did (never the offending value). */
  reason?: string;
}

/** The DetectResponse of the spec, field for field. */
export interface DetectResponse {
  redacted_text?: string;
  detections: Detection[];
  validator_results: ValidatorResult[];
  breakdown: Record<string, number>;
  blocked: boolean;
  contains_pii: boolean;
  overall_confidence: string;
  message: string;
}

export interface AnalyzeOptions {
  guardrails?: readonly string[] | undefined;
  expectedFormat?: string | undefined;
  placeholderFor?: PlaceholderFor;
  /** Epoch ms by which the analysis must finish. */
  deadline: number;
}

const two = (n: number) => n.toFixed(2);

function findValidator(active: ActiveConfig, name: string): CompiledValidator | undefined {
  return active.validators.get(name) ?? (isBuiltinValidator(name) ? compileBuiltin(name) : undefined);
}

/** Resolves guardrail names and the expected format before any work starts: an unknown name is a 400. */
export function resolveGuardrails(
  active: ActiveConfig,
  options: Pick<AnalyzeOptions, 'guardrails' | 'expectedFormat'>,
) {
  const chosen = new Map<string, CompiledValidator>();
  for (const name of options.guardrails ?? []) {
    const validator = findValidator(active, name);
    if (!validator) throw GuardErrors.unknownGuardrail(name);
    chosen.set(name, validator);
  }
  if (options.expectedFormat !== undefined) {
    const validator = findValidator(active, options.expectedFormat);
    if (!validator) throw GuardErrors.unknownFormat(options.expectedFormat);
    chosen.set(options.expectedFormat, validator);
  }
  return [...chosen.values()];
}

/**
 * Every candidate in `text`: the built-ins here, the user patterns in guard's worker threads (so a costly
 * stored pattern never blocks the event loop, and is stopped at the deadline). Throws the 503
 * GUARD_DETECT_TIMEOUT past the deadline.
 */
export async function scanText(ctx: GuardContext, active: ActiveConfig, text: string, deadline: number) {
  try {
    let userMatches: Candidate[] | undefined;
    if (active.userPatterns) userMatches = await ctx.userWork.matchPatterns(active.userPatterns, text, deadline);
    return active.detector.scan(text, userMatches ? { deadline, userMatches } : { deadline });
  } catch (error) {
    throw asGuardError(ctx, error);
  }
}

/** The HTTP error for a failed detection step: its deadline passed (503), or its worker stopped (503). */
function asGuardError(ctx: GuardContext, error: unknown): unknown {
  if (error instanceof DetectionTimeout) return GuardErrors.detectTimeout(ctx.config.detection.timeoutMs);
  if (error instanceof UserWorkFailed) {
    ctx.log.warn({ reason: error.message }, 'user-defined detection failed');
    return GuardErrors.userDetectionFailed();
  }
  return error;
}

function withDeadline<T>(work: Promise<T>, deadline: number, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(GuardErrors.detectTimeout(timeoutMs)), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/**
 * Detection, AI scoring, decision, redaction and guardrails for one text — the core of /detect, shared with
 * the gateway. A failed guardrail blocks (an AI guardrail only when it is at least as sure as the block
 * threshold); the message starts with the reason that blocked first.
 */
export async function analyzeText(ctx: GuardContext, text: string, options: AnalyzeOptions): Promise<DetectResponse> {
  const { detection } = ctx.config;
  const active = await ctx.activeConfig.get();
  const validators = resolveGuardrails(active, options);

  const run = async (): Promise<DetectResponse> => {
    const candidates = await scanText(ctx, active, text, options.deadline);
    const aiScores = await scoreCandidates(
      {
        provider: ctx.provider,
        cache: ctx.cache,
        model: ctx.config.ai.model,
        timeoutMs: Math.max(1, Math.min(ctx.config.ai.timeoutMs, options.deadline - Date.now())),
        cacheTtlMs: ctx.config.ai.cacheTtlMs,
        onUpstreamFailure: (reason) => ctx.log.warn({ reason }, 'AI scoring fell back to the local scorer'),
      },
      text,
      candidates,
    );
    const decision: Decision = active.detector.decide(text, candidates, aiScores, options.placeholderFor);
    const input = { text, redactedText: decision.redactedText ?? text, decision };
    const env = { ai: ctx.aiValidator, userWork: ctx.userWork, deadline: options.deadline };
    // Most calls (every gateway call without X-GW-Guardrails) have no validator: no promise to wait for then.
    const outcomes =
      validators.length === 0
        ? []
        : await Promise.all(validators.map((v) => v.run(input, env))).catch((error: unknown) => {
            throw asGuardError(ctx, error);
          });

    let blocked = decision.blocked;
    let message = decision.message;
    let overall = decision.overallConfidence;
    const results: ValidatorResult[] = validators.map((validator, i) => {
      const outcome = outcomes[i]!;
      // Only a stated model confidence can fall short of the threshold; every other rule blocks on failure.
      const blocks =
        !outcome.passed &&
        (outcome.rule !== 'MODEL_CONFIDENCE' || (outcome.confidence ?? 0) >= detection.blockThreshold);
      if (blocks) {
        message = blocked
          ? `${message}; failed guardrail: ${validator.name}`
          : `Blocked due to failed guardrail: ${validator.name}`;
        blocked = true;
        if (outcome.confidence !== null) overall = Math.max(overall, outcome.confidence);
      }
      return {
        name: validator.name,
        type: validator.resultType,
        passed: outcome.passed,
        confidence_score: outcome.confidence === null ? null : two(outcome.confidence),
        decision_rule: outcome.rule,
        ...(outcome.reason && !outcome.passed ? { reason: outcome.reason } : {}),
      };
    });

    return {
      ...(decision.redactedText !== undefined ? { redacted_text: decision.redactedText } : {}),
      detections: decision.detections,
      validator_results: results,
      breakdown: decision.breakdown,
      blocked,
      contains_pii: decision.containsPii,
      overall_confidence: two(overall),
      message,
    };
  };

  // The built-in scan checks the deadline itself and user-defined work is stopped at it; upstream calls (AI
  // scoring, AI validators) can leave the analysis waiting, so then a timer is raced against it too.
  return ctx.provider ? withDeadline(run(), options.deadline, detection.timeoutMs) : run();
}
