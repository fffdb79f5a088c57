import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import {
  ConfigError,
  ConfigReader,
  createApp,
  type HttpConfig,
  prettyLogLine,
  readCoreConfig,
  selectLogFormat,
} from '../src/index.ts';

const http: HttpConfig = {
  maxRequestSizeBytes: 2048,
  corsAllowedOrigins: [],
  securityHeadersEnabled: true,
  rateLimitMax: 1000,
  rateLimitWindowMs: 60_000,
};

const REQUEST_LINE = JSON.stringify({
  level: 30,
  time: Date.UTC(2026, 10, 26, 14, 5, 9, 42),
  pid: 4242,
  hostname: 'laptop',
  service: 'guard',
  reqId: 'req-7f3a',
  method: 'POST',
  route: '/detect',
  statusCode: 200,
  ms: 3.4,
  msg: 'request completed',
});

describe('log format', () => {
  test('auto is the human format on a terminal and JSON lines anywhere else; json and pretty are forced', () => {
    assert.equal(selectLogFormat('auto', { isTTY: true }), 'pretty');
    assert.equal(selectLogFormat('auto', {}), 'json');
    assert.equal(selectLogFormat('auto', { isTTY: false }), 'json');
    assert.equal(selectLogFormat('json', { isTTY: true }), 'json');
    assert.equal(selectLogFormat('pretty', {}), 'pretty');
  });

  test('LOG_FORMAT defaults to auto, takes json or pretty, and names the allowed values otherwise', () => {
    assert.equal(readCoreConfig(new ConfigReader({})).logFormat, 'auto');
    assert.equal(readCoreConfig(new ConfigReader({ LOG_FORMAT: 'JSON' })).logFormat, 'json');
    const reader = new ConfigReader({ LOG_FORMAT: 'yaml' });
    readCoreConfig(reader);
    assert.throws(
      () => reader.done(),
      (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /LOG_FORMAT/);
        assert.match(error.message, /auto, json, pretty/);
        return true;
      },
    );
  });

  test('a request line is one human line: time, level, service, method, route, status, ms, request id', () => {
    const line = prettyLogLine(REQUEST_LINE, false);
    const time = new Date(Date.UTC(2026, 10, 26, 14, 5, 9, 42)).toTimeString().slice(0, 8);
    assert.equal(line, `${time}.042 INFO  guard POST /detect 200 3.4 ms req req-7f3a\n`);
    assert.doesNotMatch(line, /hostname|pid|request completed/);
  });

  test('colours mark the level and the status; other fields follow as key=value; errors show their stack', () => {
    const coloured = prettyLogLine(JSON.stringify({ ...JSON.parse(REQUEST_LINE), statusCode: 503 }), true);
    assert.match(coloured, /\u001b\[32mINFO /);
    assert.match(coloured, /\u001b\[31m503\u001b\[39m/);
    const warning = prettyLogLine(
      JSON.stringify({ level: 40, time: 0, service: 'geo', msg: 'Redis unreachable', worker: 'measure', attempt: 2 }),
      false,
    );
    assert.match(warning, /WARN {2}geo Redis unreachable worker=measure attempt=2\n$/);
    const failure = prettyLogLine(
      JSON.stringify({
        level: 50,
        time: 0,
        msg: 'failed',
        err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x' },
      }),
      false,
    );
    assert.match(failure, /ERROR failed\n {4}Error: boom\n {8}at x\n$/);
    assert.equal(prettyLogLine('not json', false), 'not json\n');
  });

  test('an app with LOG_FORMAT=pretty writes its request lines in the human format; json keeps JSON lines', async (t) => {
    for (const logFormat of ['pretty', 'json'] as const) {
      const stream = new PassThrough();
      const lines: string[] = [];
      stream.on('data', (chunk) => lines.push(String(chunk)));
      const app = await createApp({
        name: 'shop',
        version: '1',
        description: 'shop',
        http,
        logLevel: 'info',
        logFormat,
        logStream: stream,
      });
      t.after(() => app.close());
      app.get('/items/:id', async () => ({ ok: true }));
      const response = await app.inject({ url: '/items/secret-path-value?q=jane@example.org' });
      await new Promise((resolve) => setImmediate(resolve));
      const text = lines.join('');
      if (logFormat === 'pretty') {
        assert.match(
          text,
          new RegExp(`INFO  shop GET /items/:id 200 [0-9.]+ ms req ${response.headers['x-request-id']}\\n`),
        );
        assert.doesNotMatch(text, /^\{/m);
      } else {
        const entry = JSON.parse(text.trim().split('\n').at(-1)!);
        assert.equal(entry.route, '/items/:id');
        assert.equal(entry.statusCode, 200);
      }
      assert.doesNotMatch(text, /secret-path-value|jane@example\.org/, 'neither format logs the path or the query');
    }
  });
});
