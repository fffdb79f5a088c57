import { createError } from '@keel/core';

/** Errors of the measurement engine (prompts, engines, runs, schedules, experiments). */
export const MeasureErrors = {
  invalid: createError('GEO_MEASURE_INVALID', '%s', 400),
  promptNotFound: createError('GEO_PROMPT_NOT_FOUND', 'Prompt %s not found', 404),
  engineNotFound: createError('GEO_ENGINE_NOT_FOUND', 'Engine %s not found', 404),
  engineExists: createError('GEO_ENGINE_EXISTS', 'An engine named %s already exists in this workspace', 409),
  runNotFound: createError('GEO_RUN_NOT_FOUND', 'Run %s not found', 404),
  answerNotFound: createError('GEO_ANSWER_NOT_FOUND', 'Answer %s not found', 404),
  scheduleNotFound: createError('GEO_SCHEDULE_NOT_FOUND', 'Schedule %s not found', 404),
  runNotComplete: createError('GEO_RUN_NOT_COMPLETE', 'Run %s is %s; this needs a completed run', 409),
  nothingToRun: createError('GEO_NOTHING_TO_RUN', '%s', 422),
} as const;
