import { AppError } from '@keel/core';
import type { FastifyError } from 'fastify';
import type { DetectResponse } from '../detect-api/analyze-text.ts';

/** `gw_meta`: added to non-streaming responses and to every error response of the gateway. */
export interface GwMeta {
  rid: string;
  guardrails: string[];
  input: DetectResponse[];
  output: DetectResponse[];
}

/** The chat-completions error object of the spec (`type` is always `invalid_request_error`). */
export interface GatewayErrorObject {
  message: string;
  type: 'invalid_request_error';
  param: null;
  code: string;
}

/** An error the gateway answers in the chat-completions shape; never carries a request or response value. */
export class GatewayError extends Error {
  override name = 'GatewayError';
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string> | undefined;
  constructor(status: number, code: string, message: string, headers?: Record<string, string>) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

export const GatewayErrors = {
  invalidHeader: (header: string, expected: string) =>
    new GatewayError(400, 'invalid_header', `Invalid ${header} header: ${expected}`),
  invalidBody: (message: string) => new GatewayError(400, 'invalid_request_body', message),
  blocked: (message: string) => new GatewayError(400, 'gw_content_blocked', message),
  streamingNotSupported: () =>
    new GatewayError(
      400,
      'streaming_not_supported',
      'Streaming is not supported by the configured upstream (MANAGED_MODEL)',
    ),
  notConfigured: () =>
    new GatewayError(
      503,
      'upstream_not_configured',
      'No upstream model is configured (set AI_MODEL_URL or AI_PROVIDER)',
    ),
  upstreamUnreachable: (reason: string) =>
    new GatewayError(502, 'upstream_unreachable', `The upstream could not be reached: ${reason}`),
  upstreamInvalid: () =>
    new GatewayError(
      502,
      'upstream_invalid_response',
      'The upstream answered with a body that is not a chat completion',
    ),
  timeout: (ms: number) => new GatewayError(504, 'gateway_timeout', `The call did not finish within ${ms} ms`),
  detectionFailed: () =>
    new GatewayError(503, 'gw_detection_failed', 'Content could not be checked, so it was not forwarded (fail closed)'),
} as const;

/** The error object for a body or an SSE `error` event. */
export function errorObject(code: string, message: string): GatewayErrorObject {
  return { message, type: 'invalid_request_error', param: null, code };
}

const APP_CODES: Record<string, string> = {
  UNAUTHORIZED: 'invalid_api_key',
  FORBIDDEN: 'insufficient_permissions',
  RATE_LIMITED: 'rate_limit_exceeded',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
  PAYLOAD_TOO_LARGE: 'request_too_large',
  INVALID_JSON: 'invalid_json',
  BAD_REQUEST: 'invalid_request',
  VALIDATION_FAILED: 'invalid_request_body',
  GUARD_UNKNOWN_GUARDRAIL: 'unknown_guardrail',
  GUARD_UNKNOWN_FORMAT: 'unknown_guardrail',
  GUARD_DETECT_TIMEOUT: 'gw_detection_failed',
};

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function validationMessage(error: FastifyError): string {
  const issues = (error.validation ?? []) as ValidationIssue[];
  const parts = issues.slice(0, 5).map((issue) => {
    const missing = issue.params?.missingProperty;
    const at = `${error.validationContext ?? 'body'}${issue.instancePath ?? ''}`;
    return `${typeof missing === 'string' ? `${at}/${missing}` : at} ${issue.message ?? 'is invalid'}`;
  });
  return `Invalid request: ${parts.join('; ')}`;
}

/**
 * Maps anything the gateway route raised (its own errors, guard's AppErrors from auth, rate limit, body
 * parsing, schema validation, detection) onto a GatewayError: the gateway's one place where errors meet
 * statuses. 5xx messages say nothing about internals.
 */
export function toGatewayError(error: unknown, bodyLimit: number): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof AppError) {
    if (error.code === 'GUARD_DETECT_TIMEOUT') return GatewayErrors.detectionFailed();
    const code = APP_CODES[error.code] ?? error.code.toLowerCase();
    if (error.statusCode >= 500)
      return new GatewayError(error.statusCode, code, 'Internal Server Error', error.headers);
    return new GatewayError(error.statusCode, code, error.message, error.headers);
  }
  const e = error as FastifyError;
  if (e?.validation) return GatewayErrors.invalidBody(validationMessage(e));
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError(413, 'request_too_large', `The request body exceeds the limit of ${bodyLimit} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError(415, 'unsupported_media_type', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError(400, 'invalid_request', 'Content-Length does not match the body');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError(400, 'invalid_json', 'The request body is empty; send a JSON document');
  }
  if (e instanceof SyntaxError || e?.statusCode === 400) {
    return new GatewayError(400, 'invalid_json', 'The request body is not valid JSON');
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new GatewayError(e.statusCode, 'invalid_request', 'The request could not be processed');
  }
  return new GatewayError(500, 'internal_error', 'Internal Server Error');
}
