import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUILTIN_PATTERNS } from '../src/detect/index.ts';
import { buildGuard, detect, sharedGuard, testDatabaseTargets } from './helper.ts';

const json = { 'content-type': 'application/json' };

for (const target of testDatabaseTargets()) {
  describe(`management APIs (${target.dialect})`, () => {
    // One app for the tests whose writes are all refused; a test that stores anything builds its own.
    const readOnly = sharedGuard(target);

    test('the default pattern library is seeded on first start', async () => {
      const { app } = readOnly();
      const response = await app.inject({ method: 'GET', url: '/patterns' });
      assert.equal(response.statusCode, 200);
      const names = response.json().map((p: { Name: string }) => p.Name);
      for (const builtin of BUILTIN_PATTERNS) assert.ok(names.includes(builtin.name), `${builtin.name} seeded`);
      for (const required of [
        'EMAIL',
        'PHONE_NUMBER',
        'CREDIT_CARD',
        'US_SSN',
        'IBAN',
        'IP_ADDRESS',
        'AWS_ACCESS_KEY',
        'GITHUB_TOKEN',
        'OPENAI_API_KEY',
        'ANTHROPIC_API_KEY',
        'STRIPE_KEY',
        'SLACK_TOKEN',
        'GOOGLE_API_KEY',
        'JWT',
        'PRIVATE_KEY',
        'GENERIC_PASSWORD',
        'PROMPT_INJECTION',
      ]) {
        assert.ok(names.includes(required), `${required} is in the default library`);
      }
      const email = response.json().find((p: { Name: string }) => p.Name === 'EMAIL');
      assert.deepEqual(Object.keys(email).sort(), [
        'AllowThreshold',
        'BlockThreshold',
        'Category',
        'CreatedAt',
        'Description',
        'ID',
        'IsActive',
        'Name',
        'Regex',
        'UpdatedAt',
      ]);
      assert.equal(email.IsActive, true);
      assert.equal(typeof email.ID, 'number');
    });

    test('POST /patterns: 201, defaults, duplicate Name 409, invalid regex 400', async (t) => {
      const { app } = await buildGuard(t, target);
      const created = await app.inject({
        method: 'POST',
        url: '/patterns',
        payload: { Name: 'TICKET', Regex: 'TCK-\\d+' },
      });
      assert.equal(created.statusCode, 201);
      const body = created.json();
      assert.equal(body.Category, 'PII');
      assert.equal(body.IsActive, true);
      assert.equal(body.BlockThreshold, null);
      assert.equal(body.Description, '');
      const duplicate = await app.inject({ method: 'POST', url: '/patterns', payload: { Name: 'TICKET', Regex: 'x' } });
      assert.equal(duplicate.statusCode, 409);
      assert.equal(duplicate.json().error.code, 'GUARD_PATTERN_EXISTS');
      const invalid = await app.inject({
        method: 'POST',
        url: '/patterns',
        payload: { Name: 'BAD', Regex: '(unclosed' },
      });
      assert.equal(invalid.statusCode, 400);
      assert.equal(invalid.json().error.code, 'GUARD_INVALID_REGEX');
      const lookbehind = await app.inject({
        method: 'POST',
        url: '/patterns',
        payload: { Name: 'PERL', Regex: '(?<=a)b' },
      });
      assert.equal(lookbehind.statusCode, 400, 'only RE2 (Go) syntax is accepted');
      const thresholds = await app.inject({
        method: 'POST',
        url: '/patterns',
        payload: { Name: 'T2', Regex: 'x', AllowThreshold: 0.9, BlockThreshold: 0.5 },
      });
      assert.equal(thresholds.statusCode, 400);
      const badJson = await app.inject({ method: 'POST', url: '/patterns', payload: '{"Name":', headers: json });
      assert.equal(badJson.statusCode, 400);
      const list = await app.inject({ method: 'GET', url: '/patterns' });
      assert.equal(
        list.json().filter((p: { Name: string }) => p.Name === 'TICKET').length,
        1,
        'nothing partial was written',
      );
    });

    test('a NUL character in a stored field is a 400 (PostgreSQL cannot store it), while /detect reads it', async () => {
      const { app } = readOnly();
      const pattern = await app.inject({
        method: 'POST',
        url: '/patterns',
        headers: json,
        payload: JSON.stringify({ Name: 'NUL\u0000NAME', Regex: 'abc', PIIType: 'X', Category: 'PII' }),
      });
      assert.equal(pattern.statusCode, 400);
      assert.equal(pattern.json().error.code, 'VALIDATION_FAILED');
      const item = await app.inject({
        method: 'POST',
        url: '/allowlist',
        headers: json,
        payload: JSON.stringify({ value: 'x\u0000y' }),
      });
      assert.equal(item.statusCode, 400);
      const { status, body } = await detect(app, { text: 'mail jane.doe@example.org\u0000 now' });
      assert.equal(status, 200);
      assert.equal(body.detections[0].type, 'EMAIL');
    });

    test('a new pattern takes effect on the next request, and an inactive one is not evaluated', async (t) => {
      const { app } = await buildGuard(t, target);
      assert.deepEqual((await detect(app, { text: 'ref TCK-991' })).body.detections, []);
      await app.inject({ method: 'POST', url: '/patterns', payload: { Name: 'TICKET', Regex: 'TCK-\\d+' } });
      assert.equal((await detect(app, { text: 'ref TCK-991' })).body.detections[0].type, 'TICKET');
      await app.inject({
        method: 'POST',
        url: '/patterns',
        payload: { Name: 'OFF', Regex: 'ZZZ-\\d+', IsActive: false },
      });
      assert.deepEqual((await detect(app, { text: 'ZZZ-1' })).body.detections, []);
    });

    test('DELETE /patterns/{id}: 204, then 404; an invalid id is a 400', async (t) => {
      const { app } = await buildGuard(t, target);
      const email = (await app.inject({ method: 'GET', url: '/patterns' }))
        .json()
        .find((p: { Name: string }) => p.Name === 'EMAIL');
      assert.equal((await app.inject({ method: 'DELETE', url: `/patterns/${email.ID}` })).statusCode, 204);
      assert.deepEqual(
        (await detect(app, { text: 'jane.doe@example.org' })).body.detections,
        [],
        'deleting EMAIL takes effect at once',
      );
      const again = await app.inject({ method: 'DELETE', url: `/patterns/${email.ID}` });
      assert.equal(again.statusCode, 404);
      for (const bad of ['abc', '-1', '0', '1.5', '99999999999999999999', '%20']) {
        const response = await app.inject({ method: 'DELETE', url: `/patterns/${bad}` });
        assert.equal(response.statusCode, 400, `id ${bad}`);
        assert.equal(response.json().error.code, 'GUARD_INVALID_ID');
      }
    });

    test('a deleted seed pattern stays deleted after a restart (seeded on first start only)', async (t) => {
      const first = await buildGuard(t, target);
      const email = (await first.app.inject({ method: 'GET', url: '/patterns' }))
        .json()
        .find((p: { Name: string }) => p.Name === 'EMAIL');
      await first.app.inject({ method: 'DELETE', url: `/patterns/${email.ID}` });
      const { prepareGuardDatabase } = await import('../src/app.ts');
      await prepareGuardDatabase(first.db);
      const names = (await first.db.selectFrom('pattern').select('name').execute()).map((r) => r.name);
      assert.equal(names.includes('EMAIL'), false);
    });

    for (const list of ['allowlist', 'blacklist'] as const) {
      test(`/${list}: create 201, list, duplicate 409, delete 204/404, invalid id 400`, async (t) => {
        const { app } = await buildGuard(t, target);
        const created = await app.inject({
          method: 'POST',
          url: `/${list}`,
          payload: { value: 'Value One', description: 'd' },
        });
        assert.equal(created.statusCode, 201);
        const item = created.json();
        assert.equal(item.value, 'Value One');
        assert.equal(item.description, 'd');
        assert.equal(typeof item.ID, 'number');
        const duplicate = await app.inject({ method: 'POST', url: `/${list}`, payload: { value: 'value one' } });
        assert.equal(duplicate.statusCode, 409);
        const all = await app.inject({ method: 'GET', url: `/${list}` });
        assert.deepEqual(
          all.json().map((i: { value: string }) => i.value),
          ['Value One'],
        );
        assert.equal((await app.inject({ method: 'POST', url: `/${list}`, payload: { value: '' } })).statusCode, 400);
        assert.equal((await app.inject({ method: 'DELETE', url: `/${list}/${item.ID}` })).statusCode, 204);
        assert.equal((await app.inject({ method: 'DELETE', url: `/${list}/${item.ID}` })).statusCode, 404);
        assert.equal((await app.inject({ method: 'DELETE', url: `/${list}/x` })).statusCode, 400);
      });
    }

    test('/validators: create 201, list, invalid definitions 400, duplicate 409, delete', async (t) => {
      const { app } = await buildGuard(t, target);
      const post = (payload: object) => app.inject({ method: 'POST', url: '/validators', payload });
      const created = await post({ name: 'zip', type: 'REGEX', rule: '^\\d{5}$', description: 'US zip' });
      assert.equal(created.statusCode, 201);
      assert.deepEqual(
        { ...(created.json() as object), ID: 0, CreatedAt: '', UpdatedAt: '' },
        {
          ID: 0,
          name: 'zip',
          type: 'REGEX',
          rule: '^\\d{5}$',
          description: 'US zip',
          expected_response: 'MATCH',
          CreatedAt: '',
          UpdatedAt: '',
        },
      );
      assert.equal((await post({ name: 'zip', type: 'REGEX', rule: 'x' })).statusCode, 409);
      for (const bad of [
        { name: 'a', type: 'REGEX', rule: '(' },
        { name: 'b', type: 'SCHEMA', rule: 'not json' },
        { name: 'c', type: 'SCHEMA', rule: '{"type": "nonsense"}' },
        { name: 'd', type: 'BUILTIN', rule: 'no_such_builtin' },
        { name: 'e', type: 'MAGIC', rule: 'x' },
        { name: 'f', type: 'REGEX', rule: 'x', expected_response: 'SOMETIMES' },
      ]) {
        const response = await post(bad);
        assert.equal(response.statusCode, 400, JSON.stringify(bad));
      }
      const ai = await post({ name: 'judge', type: 'AI_PROMPT', rule: 'Safe?' });
      assert.equal(ai.json().expected_response, 'YES');
      const list = await app.inject({ method: 'GET', url: '/validators' });
      assert.deepEqual(
        list.json().map((v: { name: string }) => v.name),
        ['zip', 'judge'],
      );
      assert.equal((await app.inject({ method: 'DELETE', url: `/validators/${created.json().ID}` })).statusCode, 204);
      assert.equal(
        (await detect(app, { text: '12345', guardrails: ['zip'] })).status,
        400,
        'a deleted validator is unknown at once',
      );
      assert.equal((await app.inject({ method: 'DELETE', url: '/validators/0' })).statusCode, 400);
      assert.equal((await app.inject({ method: 'DELETE', url: '/validators/999' })).statusCode, 404);
    });

    test('POST /templates/import upserts by name in one transaction', async (t) => {
      const { app, db } = await buildGuard(t, target);
      await app.inject({
        method: 'POST',
        url: '/patterns',
        payload: { Name: 'TICKET', Regex: 'TCK-\\d+', Description: 'old' },
      });
      const imported = await app.inject({
        method: 'POST',
        url: '/templates/import',
        payload: {
          template: {
            name: 'support-desk',
            description: 'support tickets',
            patterns: [
              { Name: 'TICKET', Regex: 'TKT-\\d{4}', Description: 'new' },
              { Name: 'CASE', Regex: 'CASE-\\d{3}', Category: 'topic' },
            ],
            validators: [{ name: 'case_ref', type: 'REGEX', rule: 'CASE-\\d{3}' }],
          },
        },
      });
      assert.equal(imported.statusCode, 200);
      assert.equal(imported.json().name, 'support-desk');
      assert.match(imported.json().message, /1 created|2 created/);
      const patterns = await db
        .selectFrom('pattern')
        .selectAll()
        .where('name', 'in', ['TICKET', 'CASE'])
        .orderBy('name')
        .execute();
      assert.deepEqual(
        patterns.map((p) => [p.name, p.regex, p.description, p.category]),
        [
          ['CASE', 'CASE-\\d{3}', '', 'TOPIC'],
          ['TICKET', 'TKT-\\d{4}', 'new', 'PII'],
        ],
      );
      assert.equal(
        (await detect(app, { text: 'see TKT-1234', guardrails: ['case_ref'] })).body.detections[0].type,
        'TICKET',
      );
    });

    test('a template with one bad definition writes nothing', async (t) => {
      const { app, db } = await buildGuard(t, target);
      const before = await db.selectFrom('pattern').select('name').execute();
      const response = await app.inject({
        method: 'POST',
        url: '/templates/import',
        payload: {
          template: {
            name: 'broken',
            patterns: [{ Name: 'GOOD', Regex: 'ok' }],
            validators: [{ name: 'bad', type: 'SCHEMA', rule: '{' }],
          },
        },
      });
      assert.equal(response.statusCode, 400);
      const after = await db.selectFrom('pattern').select('name').execute();
      assert.equal(after.length, before.length);
      assert.equal((await db.selectFrom('validator').selectAll().execute()).length, 0);
    });

    test('a template that fails inside the transaction rolls back', async (t) => {
      const { app, db } = await buildGuard(t, target);
      // Every definition passes the checks, but a unique index added for this test makes the second
      // validator's insert fail after the pattern and the first validator were written.
      await db.schema.createIndex('validator_rule_unique_for_test').on('validator').column('rule').unique().execute();
      const response = await app.inject({
        method: 'POST',
        url: '/templates/import',
        payload: {
          template: {
            name: 'conflicting',
            patterns: [{ Name: 'FIRST', Regex: 'first' }],
            validators: [
              { name: 'v1', type: 'REGEX', rule: 'same' },
              { name: 'v2', type: 'REGEX', rule: 'same' },
            ],
          },
        },
      });
      assert.equal(response.statusCode, 500);
      assert.equal(response.json().error.message, 'Internal Server Error');
      assert.equal(
        (await db.selectFrom('pattern').selectAll().where('name', '=', 'FIRST').execute()).length,
        0,
        'the pattern written first was rolled back',
      );
      assert.equal((await db.selectFrom('validator').selectAll().execute()).length, 0);
    });

    test('a stored regex that no longer compiles is skipped, not fatal', async (t) => {
      const { app, db } = await buildGuard(t, target);
      const now = new Date().toISOString();
      // Written behind the API's back, as an old row might be after a library upgrade.
      await db
        .insertInto('pattern')
        .values({
          name: 'BROKEN',
          regex: '(?<=x)y',
          description: '',
          category: 'PII',
          is_active: true,
          allow_threshold: null,
          block_threshold: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await app.inject({ method: 'POST', url: '/admin/reload' });
      const { status, body } = await detect(app, { text: 'mail jane.doe@example.org' });
      assert.equal(status, 200);
      assert.deepEqual(
        body.detections.map((d: { type: string }) => d.type),
        ['EMAIL'],
      );
    });

    test('POST /admin/reload clears the caches; other methods are 405', async (t) => {
      const { app, db } = await buildGuard(t, target);
      assert.deepEqual((await detect(app, { text: 'ref TCK-1' })).body.detections, []);
      // A change made behind the API's back is seen after a reload.
      const now = new Date().toISOString();
      await db
        .insertInto('pattern')
        .values({
          name: 'TICKET',
          regex: 'TCK-\\d+',
          description: '',
          category: 'PII',
          is_active: true,
          allow_threshold: null,
          block_threshold: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      assert.deepEqual((await detect(app, { text: 'ref TCK-1' })).body.detections, [], 'still cached');
      const reload = await app.inject({ method: 'POST', url: '/admin/reload' });
      assert.equal(reload.statusCode, 200);
      assert.deepEqual(Object.keys(reload.json()).sort(), ['message', 'status']);
      assert.equal((await detect(app, { text: 'ref TCK-1' })).body.detections[0].type, 'TICKET');
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'] as const) {
        const response = await app.inject({ method, url: '/admin/reload' });
        assert.equal(response.statusCode, 405, method);
        assert.equal(response.headers.allow, 'POST');
      }
    });

    test('write endpoints without Content-Type: application/json get 415', async () => {
      const { app } = readOnly();
      for (const url of ['/detect', '/patterns', '/allowlist', '/blacklist', '/validators', '/templates/import']) {
        const response = await app.inject({
          method: 'POST',
          url,
          payload: '{}',
          headers: { 'content-type': 'text/plain' },
        });
        assert.equal(response.statusCode, 415, url);
        const none = await app.inject({ method: 'POST', url });
        assert.equal(none.statusCode, 415, `${url} without a content type`);
      }
    });
  });
}
