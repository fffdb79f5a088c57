// The worker thread behind user-work.ts: runs user patterns, REGEX rules and SCHEMA rules, compiled once per
// definition and kept in small caches. The main thread terminates it when a job outlives its deadline.
import { parentPort } from 'node:worker_threads';
import type { ValidateFunction } from 'ajv';
import type { RE2JS } from 're2js';
import { DetectionTimeout } from '../detect/errors.ts';
import type { Candidate } from '../detect/types.ts';
import { compileUserPattern, compileUserRegex, runUserPattern, type UserPattern } from '../detect/user-patterns.ts';
import { compileSchemaRule, validateAgainstSchema } from './schema-rule.ts';
import type { ReadyNote, WorkReply, WorkRequest } from './user-work.ts';

const CACHE_SIZE = 32;
const patternSets = new Map<string, UserPattern[]>();
const regexes = new Map<string, RE2JS>();
const schemas = new Map<string, ValidateFunction>();

function remember<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let value = cache.get(key);
  if (value === undefined) {
    value = make();
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  } else cache.delete(key);
  cache.set(key, value);
  return value;
}

function handle(request: WorkRequest): WorkReply {
  switch (request.kind) {
    case 'patterns': {
      const patterns = remember(patternSets, request.key, () => request.specs.map(compileUserPattern));
      const found: Candidate[] = [];
      const flat: number[] = [];
      patterns.forEach((pattern, index) => {
        found.length = 0;
        runUserPattern(pattern, request.text, found, request.deadline);
        for (const c of found) flat.push(index, c.start, c.end, c.regexScore, c.localAiScore);
      });
      return { id: request.id, ok: true, matches: Float64Array.from(flat) };
    }
    case 'regex': {
      const re = remember(regexes, request.rule, () => compileUserRegex(request.rule));
      return { id: request.id, ok: true, matched: re.matcher(request.text).find() };
    }
    case 'schema': {
      const validate = remember(schemas, request.rule, () => compileSchemaRule(request.rule));
      return { id: request.id, ok: true, outcome: validateAgainstSchema(validate, request.text) };
    }
  }
}

parentPort!.on('message', (request: WorkRequest) => {
  let reply: WorkReply;
  try {
    reply = handle(request);
  } catch (error) {
    reply = {
      id: request.id,
      ok: false,
      timeout: error instanceof DetectionTimeout,
      message: error instanceof Error ? error.message : String(error),
    };
  }
  parentPort!.postMessage(reply, reply.ok && 'matches' in reply ? [reply.matches.buffer as ArrayBuffer] : []);
});

parentPort!.postMessage({ ready: true } satisfies ReadyNote);
