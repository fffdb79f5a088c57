// compileDetector: turns stored patterns, lists and settings into a reusable Detector.
import { compileBlocklist } from './blocklist.ts';
import { builtinPattern, isUnmodifiedBuiltin } from './builtin-patterns.ts';
import { scanBuiltins } from './builtin-scanner.ts';
import { type DecisionConfig, decideCandidates } from './decide.ts';
import { checkDeadline } from './errors.ts';
import { resolveOverlaps } from './overlaps.ts';
import { selectBuiltins } from './scan-state.ts';
import type { AiScore, Candidate, Detector, EngineInput, EngineSettings } from './types.ts';
import { compileUserPattern, runUserPattern, type UserPattern } from './user-patterns.ts';

function normalizeListValue(v: string): string {
  return v.trim().toLowerCase();
}

function checkSettings(s: EngineSettings): void {
  for (const [name, v] of [
    ['allowThreshold', s.allowThreshold],
    ['blockThreshold', s.blockThreshold],
  ] as const) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1)
      throw new Error(`${name} must be a number from 0 to 1`);
  }
  if (s.piiMode !== 'MASK' && s.piiMode !== 'BLOCK') throw new Error('piiMode must be MASK or BLOCK');
}

/**
 * Compiles the engine once for the given patterns, lists and settings (the result is immutable and reusable
 * for any number of texts). Unmodified built-ins run their native detectors; every other pattern is compiled
 * with re2js and runs as an extra pass. Throws when a user pattern's regex does not compile (the message names
 * the pattern) or a setting is out of range.
 */
export function compileDetector(input: EngineInput): Detector {
  checkSettings(input.settings);
  const builtinCategories = new Map<string, string>();
  const userPatterns: UserPattern[] = [];
  const overrides = new Map<string, { allow: number | null; block: number | null }>();
  for (const spec of input.patterns) {
    if (isUnmodifiedBuiltin(spec)) {
      builtinCategories.set(spec.name, spec.category || (builtinPattern(spec.name)?.category ?? 'PII'));
    } else {
      userPatterns.push(compileUserPattern(spec));
    }
    if (spec.allowThreshold != null || spec.blockThreshold != null) {
      overrides.set(spec.name, { allow: spec.allowThreshold, block: spec.blockThreshold });
    }
  }
  const selection = selectBuiltins(builtinCategories);
  const allowlist = new Set(input.allowlist.map(normalizeListValue).filter((v) => v.length > 0));
  const blocklist = compileBlocklist(input.blocklist);
  const config: DecisionConfig = { settings: { ...input.settings }, overrides };

  return {
    scan(text, options) {
      const deadline = options?.deadline;
      checkDeadline(deadline);
      let candidates: Candidate[] = scanBuiltins(text, selection, deadline);
      if (options?.userMatches) {
        for (const c of options.userMatches) candidates.push(c);
      } else {
        for (const p of userPatterns) {
          checkDeadline(deadline);
          runUserPattern(p, text, candidates, deadline);
        }
      }
      if (allowlist.size > 0) candidates = candidates.filter((c) => !allowlist.has(normalizeListValue(c.value)));
      if (blocklist) {
        checkDeadline(deadline);
        blocklist.findAll(text, candidates, deadline);
      }
      return resolveOverlaps(text, candidates, config.settings.allowThreshold);
    },
    decide(text, candidates, aiScores, placeholderFor) {
      return decideCandidates(config, text, candidates, aiScores, placeholderFor);
    },
  };
}

/** The local scorer's opinion for each candidate (source LOCAL; BLOCKLIST for blocklist hits), index-aligned. */
export function localAiScores(candidates: readonly Candidate[]): AiScore[] {
  return candidates.map((c) =>
    c.blocklisted ? { score: 1, source: 'BLOCKLIST' } : { score: c.localAiScore, source: 'LOCAL' },
  );
}
