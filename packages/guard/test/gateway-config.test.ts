import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readGuardConfig } from '../src/config.ts';

describe('gateway configuration', () => {
  test('defaults: BLOCK, security events to stdout, 300 s bound, 8192-character hold-back', () => {
    const { gateway } = readGuardConfig({});
    assert.deepEqual(gateway, {
      blockMode: 'BLOCK',
      securityEvents: { kind: 'stdout' },
      timeoutMs: 300_000,
      holdbackMaxChars: 8192,
      toolArgumentsMaxChars: 1_048_576,
    });
  });

  test('valid values are read', () => {
    const { gateway } = readGuardConfig({
      GATEWAY_BLOCK_MODE: 'warn',
      GATEWAY_SECURITY_EVENTS: 'file:/var/log/keel/gateway-events.jsonl',
      GATEWAY_TIMEOUT_MS: '60000',
      GATEWAY_STREAM_HOLDBACK_MAX_CHARS: '4096',
    });
    assert.equal(gateway.blockMode, 'WARN');
    assert.deepEqual(gateway.securityEvents, { kind: 'file', path: '/var/log/keel/gateway-events.jsonl' });
    assert.equal(gateway.timeoutMs, 60_000);
    assert.equal(gateway.holdbackMaxChars, 4096);
    assert.deepEqual(
      readGuardConfig({ GATEWAY_SECURITY_EVENTS: 'https://siem.example.com/ingest' }).gateway.securityEvents,
      {
        kind: 'http',
        url: 'https://siem.example.com/ingest',
      },
    );
    assert.deepEqual(
      readGuardConfig({ GATEWAY_SECURITY_EVENTS: 'http://127.0.0.1:9000/e', KEEL_ALLOW_PRIVATE_URLS: 'true' }).gateway
        .securityEvents,
      { kind: 'http', url: 'http://127.0.0.1:9000/e' },
    );
  });

  test('bad values are configuration errors that name the variable', () => {
    for (const [env, message] of [
      [{ GATEWAY_BLOCK_MODE: 'DROP' }, /GATEWAY_BLOCK_MODE must be one of BLOCK, MASK, WARN/],
      [
        { GATEWAY_SECURITY_EVENTS: 'syslog' },
        /GATEWAY_SECURITY_EVENTS must be stdout, file:\/absolute\/path or an https:\/\/ URL/,
      ],
      [{ GATEWAY_SECURITY_EVENTS: 'file:relative/events.log' }, /GATEWAY_SECURITY_EVENTS must be/],
      [{ GATEWAY_SECURITY_EVENTS: 'http://siem.example.com/e' }, /http:\/\/ only with KEEL_ALLOW_PRIVATE_URLS=true/],
      [{ GATEWAY_SECURITY_EVENTS: 'https://' }, /GATEWAY_SECURITY_EVENTS must be/],
      [{ GATEWAY_TIMEOUT_MS: '0' }, /GATEWAY_TIMEOUT_MS must be an integer from 100 to 3600000/],
      [{ GATEWAY_TIMEOUT_MS: 'soon' }, /GATEWAY_TIMEOUT_MS must be an integer/],
      [{ GATEWAY_STREAM_HOLDBACK_MAX_CHARS: '10' }, /GATEWAY_STREAM_HOLDBACK_MAX_CHARS must be an integer from 256/],
      [{ GATEWAY_TOOL_ARGUMENTS_MAX_CHARS: '-1' }, /GATEWAY_TOOL_ARGUMENTS_MAX_CHARS must be an integer/],
      [{ AI_PROVIDER: 'MANAGED_MODEL' }, /MANAGED_MODEL_REGION is required/],
      [{ MANAGED_MODEL_ENDPOINT_OVERRIDE: 'bedrock.local' }, /MANAGED_MODEL_ENDPOINT_OVERRIDE must be a URL/],
    ] as const) {
      assert.throws(() => readGuardConfig(env), message, JSON.stringify(env));
    }
  });
});
