import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { buildGeo, call, testDatabaseTargets } from './helper.ts';

const [target] = testDatabaseTargets();

describe('geo request log', () => {
  test('a secret placed in a path segment is never logged: the line names the route', async (t) => {
    const stream = new PassThrough();
    const lines: string[] = [];
    stream.on('data', (chunk) => lines.push(...String(chunk).split('\n').filter(Boolean)));
    const { app, a } = await buildGeo(t, target!, { LOG_LEVEL: 'info' }, { logStream: stream });
    const secret = 'sk-live-GEOPATHSECRET7731q8w9';
    const answered = await call(app, 'GET', `/api/v1/geo/actions/${secret}`, { key: a.keys.admin });
    assert.ok(answered.status >= 400 && answered.status < 500, String(answered.status));
    await call(app, 'GET', `/api/v1/geo/no-such-thing/${secret}`, { key: a.keys.admin });
    const completed = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request completed');
    assert.deepEqual(
      completed.map((l) => l.route),
      ['/api/v1/geo/actions/:actionId', '(unmatched)'],
    );
    assert.ok(!lines.join('\n').includes('GEOPATHSECRET'), 'no path segment reaches the log');
  });
});
