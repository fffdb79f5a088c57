// The contract between guard's detection engine (pure, no I/O) and the service around it.

/** A stored pattern as the engine needs it. `name` is also the detection `type`. */
export interface PatternSpec {
  name: string;
  /** Go/RE2 syntax. When it equals a built-in's canonical regex, the built-in's native detector runs instead. */
  regex: string;
  category: string;
  allowThreshold: number | null;
  blockThreshold: number | null;
}

export interface EngineSettings {
  /** CONFIDENCE_ALLOW_THRESHOLD: final scores below it are ignored (not reported). */
  allowThreshold: number;
  /** CONFIDENCE_BLOCK_THRESHOLD: final scores at or above it block. */
  blockThreshold: number;
  /** PII_MODE: MASK decides by thresholds; BLOCK blocks on any reported detection. */
  piiMode: 'MASK' | 'BLOCK';
}

export interface EngineInput {
  patterns: readonly PatternSpec[];
  /** Values trusted and ignored during detection. */
  allowlist: readonly string[];
  /** Values forbidden: any occurrence is a hard block. */
  blocklist: readonly string[];
  settings: EngineSettings;
}

/** A match found by the scan, scored by the regex stage and by the local (deterministic) AI scorer. */
export interface Candidate {
  type: string;
  category: string;
  start: number;
  end: number;
  value: string;
  /** 0..1, raised by checksum validation and context words, lowered where validation fails. */
  regexScore: number;
  /** 0..1, the local deterministic scorer's opinion; used when no upstream model answers. */
  localAiScore: number;
  /** True for blocklist hits: they block whatever the scores say. */
  blocklisted: boolean;
}

export type AiScoreSource = 'HYBRID' | 'LOCAL' | 'BLOCKLIST';

export interface AiScore {
  score: number;
  source: AiScoreSource;
}

export interface ConfidenceExplanation {
  source: AiScoreSource;
  regex_score: string;
  ai_score: string;
  category: string;
  pattern_active: boolean;
  final_score: string;
}

export interface Detection {
  type: string;
  value: string;
  placeholder: string;
  start: number;
  end: number;
  confidence_score: string;
  confidence_explanation: ConfidenceExplanation;
}

export interface Decision {
  detections: Detection[];
  /** Omitted when nothing was redacted. */
  redactedText: string | undefined;
  breakdown: Record<string, number>;
  blocked: boolean;
  containsPii: boolean;
  /** The highest final score of a reported detection, 0 when none. */
  overallConfidence: number;
  message: string;
  /** The type that caused a block, when one did. */
  blockedBy: string | undefined;
}

/** Placeholder text for a detection; /detect uses `[TYPE]`, the gateway `[<RID>_<TYPE>_<suffix>]`. */
export type PlaceholderFor = (type: string, value: string) => string;

export interface ScanOptions {
  /** Epoch ms after which scanning stops with a DetectionTimeout error. */
  deadline?: number;
  /**
   * The user patterns' matches, found elsewhere (guard runs them off the event loop, under a hard deadline);
   * when given, the user patterns are not run by this scan.
   */
  userMatches?: readonly Candidate[];
}

export interface Detector {
  /** Every candidate in `text`, overlaps resolved, allowlisted values dropped, blocklist hits included. */
  scan(text: string, options?: ScanOptions): Candidate[];
  /** Combines regex and AI scores into final scores, decides allow/mask/block and redacts. */
  decide(
    text: string,
    candidates: readonly Candidate[],
    aiScores: readonly AiScore[],
    placeholderFor?: PlaceholderFor,
  ): Decision;
}
