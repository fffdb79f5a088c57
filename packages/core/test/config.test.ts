import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, ConfigReader, readCoreConfig, readHttpConfig } from '../src/index.ts';

function read(env: Record<string, string>) {
  const reader = new ConfigReader(env);
  const core = readCoreConfig(reader);
  const http = readHttpConfig(reader);
  reader.done();
  return { core, http };
}

describe('configuration', () => {
  test('defaults match DESIGN.md', () => {
    const { core, http } = read({});
    assert.equal(core.host, '127.0.0.1');
    assert.deepEqual(core.ports, { guard: 8081, geo: 8082, engine: 8083, engineMcp: 8084, engineWebhook: 8085 });
    assert.equal(core.databaseUrl, undefined);
    assert.equal(core.redisUrl, undefined);
    assert.equal(core.allowPrivateUrls, false);
    assert.equal(core.logLevel, 'info');
    assert.equal(http.maxRequestSizeBytes, 10 * 1024 * 1024);
    assert.deepEqual(http.corsAllowedOrigins, []);
    assert.equal(http.securityHeadersEnabled, true);
  });

  test('a bad value stops start-up with a message naming the variable', () => {
    assert.throws(
      () => read({ GUARD_PORT: 'eighty' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /GUARD_PORT must be an integer from 0 to 65535 \(got "eighty"\)/);
        return true;
      },
    );
  });

  test('every bad variable is listed at once', () => {
    assert.throws(
      () => read({ GEO_PORT: '70000', SECURITY_HEADERS_ENABLED: 'maybe', LOG_LEVEL: 'loud' }),
      (error: Error) => {
        assert.match(error.message, /GEO_PORT/);
        assert.match(error.message, /SECURITY_HEADERS_ENABLED must be true or false/);
        assert.match(error.message, /LOG_LEVEL must be one of/);
        return true;
      },
    );
  });

  test('secret values are never echoed in errors', () => {
    assert.throws(
      () => read({ DATABASE_URL: 'mysql://user:hunter2@db/x' }),
      (error: Error) => {
        assert.match(
          error.message,
          /DATABASE_URL must be a postgres:\/\/USER@HOST\/DATABASE URL \(PostgreSQL\) or sqlite:PATH/,
        );
        assert.doesNotMatch(error.message, /hunter2/);
        return true;
      },
    );
    assert.throws(
      () => read({ KEEL_SECRET_KEY: 'short-secret' }),
      (error: Error) => {
        assert.doesNotMatch(error.message, /short-secret/);
        return true;
      },
    );
  });

  test('lists and booleans are parsed', () => {
    const { core, http } = read({
      CORS_ALLOWED_ORIGINS: 'https://a.example, https://b.example',
      KEEL_ALLOW_PRIVATE_URLS: 'true',
    });
    assert.deepEqual(http.corsAllowedOrigins, ['https://a.example', 'https://b.example']);
    assert.equal(core.allowPrivateUrls, true);
  });

  test('TRUST_PROXY: off by default; true, a hop count or an address list; anything else names the variable', () => {
    assert.equal(read({}).http.trustProxy, false);
    assert.equal(read({ TRUST_PROXY: 'true' }).http.trustProxy, true);
    assert.equal(read({ TRUST_PROXY: '2' }).http.trustProxy, 2);
    assert.deepEqual(read({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1' }).http.trustProxy, [
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
    ]);
    assert.throws(() => read({ TRUST_PROXY: 'proxy.internal' }), /TRUST_PROXY/);
  });
});
