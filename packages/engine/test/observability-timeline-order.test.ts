import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parentsFirst } from '../src/observability/observability-service.ts';
import type { ObservabilityEventRow } from '../src/observability/observability-store.ts';

const row = (span: string, parent: string | null, at: string): ObservabilityEventRow =>
  ({ id: span, span_id: span, parent_span_id: parent, occurred_at: at }) as ObservabilityEventRow;

test('a trace timeline never puts an event before its parent span, whatever the clocks said', () => {
  // Time order as stored: the step (another clock) ties with or precedes the run that contains it.
  const rows = [
    row('req', null, '2026-11-26T10:00:00.000Z'),
    row('step-1', 'run', '2026-11-26T10:00:00.001Z'),
    row('run', 'req', '2026-11-26T10:00:00.001Z'),
    row('call', 'step-1', '2026-11-26T10:00:00.002Z'),
    row('step-2', 'run', '2026-11-26T10:00:00.003Z'),
    row('foreign-parent', 'not-in-this-trace', '2026-11-26T10:00:00.004Z'),
  ];
  assert.deepEqual(
    parentsFirst(rows).map((r) => r.span_id),
    ['req', 'run', 'step-1', 'call', 'step-2', 'foreign-parent'],
  );
});

test('malformed parent cycles lose no event', () => {
  const rows = [row('a', 'b', '2026-11-26T10:00:00.000Z'), row('b', 'a', '2026-11-26T10:00:00.001Z')];
  assert.deepEqual(
    parentsFirst(rows)
      .map((r) => r.span_id)
      .sort(),
    ['a', 'b'],
  );
});
