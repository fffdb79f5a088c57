import type { ModelProvider } from '@keel/models';
import type { GuardrailOutcome } from '../validators/builtin-validators.ts';

/** Asks the upstream model to judge a text against a validator's prompt. */
export interface AiValidatorClient {
  judge(prompt: string, text: string, expectedResponse: string): Promise<GuardrailOutcome>;
}

const INSTRUCTIONS =
  'Answer with JSON only: {"answer": "<your one-word answer>", "confidence": <how sure you are, 0 to 1>}.';

/**
 * Reads `{answer, confidence}`; a bare word is taken as the answer. The confidence is null when the model gave
 * none in 0..1: it is never made up.
 */
export function parseJudgement(raw: string): { answer: string; confidence: number | null } {
  const start = raw.indexOf('{');
  const end = raw.lastIndexOf('}');
  if (start >= 0 && end > start) {
    try {
      const parsed = JSON.parse(raw.slice(start, end + 1)) as { answer?: unknown; confidence?: unknown };
      if (
        typeof parsed.answer === 'string' ||
        typeof parsed.answer === 'number' ||
        typeof parsed.answer === 'boolean'
      ) {
        const confidence =
          typeof parsed.confidence === 'number' && parsed.confidence >= 0 && parsed.confidence <= 1
            ? parsed.confidence
            : null;
        return { answer: String(parsed.answer), confidence };
      }
    } catch {
      // fall through to the bare answer
    }
  }
  return { answer: raw.trim().replace(/^["'`]+|["'`.!]+$/g, ''), confidence: null };
}

/**
 * AI_PROMPT validators: the validator's rule is the instruction, the (already redacted) text is the input, and
 * the answer passes when it equals `expected_response`, ignoring case and surrounding space. An upstream that
 * fails makes the validator fail: a guardrail that could not run never counts as passed.
 */
export function createAiValidatorClient(provider: ModelProvider, model: string, timeoutMs: number): AiValidatorClient {
  return {
    async judge(prompt, text, expectedResponse) {
      try {
        const raw = await provider.complete(
          {
            model,
            messages: [
              { role: 'system', content: `${prompt}\n\n${INSTRUCTIONS}` },
              { role: 'user', content: text },
            ],
            temperature: 0,
            maxTokens: 60,
          },
          { timeoutMs },
        );
        const { answer, confidence } = parseJudgement(raw);
        const passed = answer.trim().toUpperCase() === expectedResponse.trim().toUpperCase();
        const rule = confidence === null ? 'VERDICT_ONLY' : 'MODEL_CONFIDENCE';
        return passed
          ? { passed, confidence, rule }
          : { passed, confidence, rule, reason: 'the model did not give the expected answer' };
      } catch {
        return { passed: false, confidence: null, rule: 'FAIL_CLOSED', reason: 'the AI upstream could not be reached' };
      }
    },
  };
}
