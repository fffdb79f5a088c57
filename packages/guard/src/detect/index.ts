// Public API of guard's detection engine: pure functions, no I/O.
export {
  BUILTIN_PATTERNS,
  type BuiltinCategory,
  type BuiltinPattern,
  builtinPattern,
  defaultPatternSpecs,
  isUnmodifiedBuiltin,
} from './builtin-patterns.ts';
export { defaultPlaceholder } from './decide.ts';
export { compileDetector, localAiScores } from './detector.ts';
export { DetectionTimeout } from './errors.ts';
export { AI_WEIGHT, finalScore, formatScore, REGEX_WEIGHT, round2 } from './scoring.ts';
export type {
  AiScore,
  AiScoreSource,
  Candidate,
  ConfidenceExplanation,
  Decision,
  Detection,
  Detector,
  EngineInput,
  EngineSettings,
  PatternSpec,
  PlaceholderFor,
  ScanOptions,
} from './types.ts';
export { compileUserRegex, MAX_USER_REGEX_LENGTH } from './user-patterns.ts';
