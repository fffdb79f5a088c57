import type { GuardConfig } from './config.ts';
import { compileDetector, defaultPatternSpecs } from './detect/index.ts';
import type { AiScore, Decision } from './detect/types.ts';

/**
 * The detection engine with the default pattern library and the local scorer, for scanning files offline
 * (`keel detect`): the same decisions /detect makes on a fresh install without an AI upstream.
 */
export function createLocalScanner(detection: GuardConfig['detection']): (text: string) => Decision {
  const detector = compileDetector({
    patterns: defaultPatternSpecs(),
    allowlist: [],
    blocklist: [],
    settings: {
      allowThreshold: detection.allowThreshold,
      blockThreshold: detection.blockThreshold,
      piiMode: detection.piiMode,
    },
  });
  return (text) => {
    const candidates = detector.scan(text);
    const scores: AiScore[] = candidates.map((c) => ({ score: c.localAiScore, source: 'LOCAL' }));
    return detector.decide(text, candidates, scores);
  };
}
