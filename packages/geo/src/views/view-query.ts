import {
  aggregateName,
  type Bucket,
  type Scalar,
  type ViewAggregate,
  type ViewDefinition,
  type ViewFilter,
  type ViewGroup,
} from './view-definition.ts';

/** A dataset row in its API shape (DatasetRecordSchema or TrackingEventSchema). */
export type ApiRow = Record<string, unknown>;

const RECORD_PATHS: Record<string, string[]> = {
  definitionVersion: ['version', 'definitionVersion'],
  runId: ['version', 'runId'],
  importId: ['version', 'importId'],
  computedAt: ['version', 'computedAt'],
  'confidence.value': ['confidence', 'value'],
};

function walk(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const segment of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current) || !Object.hasOwn(current, segment))
      return null;
    current = (current as Record<string, unknown>)[segment];
  }
  return current === undefined ? null : current;
}

/** The value of a view field in a row (null when absent); `confidence.low/high` read the interval. */
export function readField(row: ApiRow, field: string): unknown {
  const mapped = RECORD_PATHS[field];
  if (mapped) return walk(row, mapped);
  if (field === 'confidence.low' || field === 'confidence.high') {
    const interval = walk(row, ['confidence', 'interval']);
    return Array.isArray(interval) ? (interval[field === 'confidence.low' ? 0 : 1] ?? null) : null;
  }
  return walk(row, field.split('.'));
}

const TYPE_RANK = { number: 0, string: 1, boolean: 2 } as const;

/** A total order over scalar values: numbers, then strings, then booleans; null and non-scalars last. */
export function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown) =>
    typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean'
      ? TYPE_RANK[typeof v as keyof typeof TYPE_RANK]
      : 3;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 3) return 0;
  if (ra === 2) return Number(a) - Number(b);
  if (ra === 0) return (a as number) - (b as number);
  return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Equality for filters: times compare as instants, everything else strictly. */
function same(actual: unknown, expected: Scalar): boolean {
  if (actual === expected) return true;
  if (typeof actual === 'string' && typeof expected === 'string' && ISO_UTC.test(actual) && ISO_UTC.test(expected))
    return Date.parse(actual) === Date.parse(expected);
  return false;
}

function ordered(actual: unknown, expected: Scalar): number | undefined {
  if (typeof actual === 'number' && typeof expected === 'number') return actual - expected;
  if (typeof actual === 'string' && typeof expected === 'string') {
    if (ISO_UTC.test(actual) && ISO_UTC.test(expected)) return Date.parse(actual) - Date.parse(expected);
    return actual < expected ? -1 : actual > expected ? 1 : 0;
  }
  return undefined;
}

function passes(row: ApiRow, filter: ViewFilter): boolean {
  const actual = readField(row, filter.field);
  const value = filter.value;
  switch (filter.op) {
    case 'eq':
      return same(actual, value as Scalar);
    case 'ne':
      return !same(actual, value as Scalar);
    case 'in':
      return (value as Scalar[]).some((v) => same(actual, v));
    case 'not_in':
      return !(value as Scalar[]).some((v) => same(actual, v));
    case 'exists':
      return (actual !== null) === value;
    case 'contains':
      return typeof actual === 'string' && actual.toLowerCase().includes((value as string).toLowerCase());
    default: {
      const c = ordered(actual, value as Scalar);
      if (c === undefined) return false;
      if (filter.op === 'gt') return c > 0;
      if (filter.op === 'gte') return c >= 0;
      if (filter.op === 'lt') return c < 0;
      return c <= 0;
    }
  }
}

/** True when the row passes every filter (filters are and-ed). */
export function matchesFilters(row: ApiRow, filters: readonly ViewFilter[]): boolean {
  for (const filter of filters) if (!passes(row, filter)) return false;
  return true;
}

/** The row reduced to `columns` (always with its `id`). */
export function project(row: ApiRow, columns: readonly string[]): ApiRow {
  const out: ApiRow = { id: row.id };
  for (const column of columns) out[column] = readField(row, column);
  return out;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function localParts(iso: string, zone: string) {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      hourCycle: 'h23',
    });
    if (formatters.size > 500) formatters.clear();
    formatters.set(zone, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(new Date(iso))) parts[part.type] = part.value;
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour! };
}

/**
 * The bucket a time falls in, in the workspace's reporting time zone: `2026-11-20T13:00` (hour), `2026-11-20`
 * (day), the week's Monday `2026-11-16` (week, ISO weeks) or `2026-11` (month). Labels sort in time order.
 */
export function bucketOf(value: unknown, bucket: Bucket, zone: string): string | null {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) return null;
  const p = localParts(value, zone);
  switch (bucket) {
    case 'hour':
      return `${p.year}-${p.month}-${p.day}T${p.hour}:00`;
    case 'day':
      return `${p.year}-${p.month}-${p.day}`;
    case 'month':
      return `${p.year}-${p.month}`;
    default: {
      const day = new Date(Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day)));
      const sinceMonday = (day.getUTCDay() + 6) % 7;
      return new Date(day.getTime() - sinceMonday * 86_400_000).toISOString().slice(0, 10);
    }
  }
}

interface Accumulator {
  count: number;
  sum: number;
  n: number;
  min: number | null;
  max: number | null;
}

/** Groups rows by the view's group fields and computes its aggregates, in bounded memory (at most `maxGroups`). */
export class Grouper {
  readonly #groups = new Map<string, { keys: unknown[]; acc: Accumulator[] }>();
  readonly #groupBy: readonly ViewGroup[];
  readonly #aggregates: readonly ViewAggregate[];
  readonly #zone: string;
  readonly #maxGroups: number;
  /** True when a row of a new group arrived after `maxGroups` groups existed (it was left out). */
  overflow = false;

  constructor(definition: ViewDefinition, zone: string, maxGroups: number) {
    this.#groupBy = definition.groupBy;
    this.#aggregates = definition.aggregates;
    this.#zone = zone;
    this.#maxGroups = maxGroups;
  }

  add(row: ApiRow): void {
    const keys = this.#groupBy.map((g) => {
      const value = readField(row, g.field);
      if (g.bucket) return bucketOf(value, g.bucket, this.#zone);
      return value !== null && typeof value === 'object' ? JSON.stringify(value) : value;
    });
    const id = JSON.stringify(keys);
    let group = this.#groups.get(id);
    if (!group) {
      if (this.#groups.size >= this.#maxGroups) {
        this.overflow = true;
        return;
      }
      group = { keys, acc: this.#aggregates.map(() => ({ count: 0, sum: 0, n: 0, min: null, max: null })) };
      this.#groups.set(id, group);
    }
    this.#aggregates.forEach((aggregate, i) => {
      const acc = group.acc[i]!;
      if (aggregate.field === undefined) {
        acc.count++;
        return;
      }
      const value = readField(row, aggregate.field);
      if (value === null) return;
      acc.count++;
      if (typeof value !== 'number' || !Number.isFinite(value)) return;
      acc.n++;
      acc.sum += value;
      acc.min = acc.min === null ? value : Math.min(acc.min, value);
      acc.max = acc.max === null ? value : Math.max(acc.max, value);
    });
  }

  /** One object per group: the group fields and the aggregates by name (`count`, `avg(data.value)`, …). */
  rows(): ApiRow[] {
    const out: ApiRow[] = [];
    for (const group of this.#groups.values()) {
      const row: ApiRow = {};
      this.#groupBy.forEach((g, i) => {
        row[g.field] = group.keys[i] ?? null;
      });
      this.#aggregates.forEach((aggregate, i) => {
        const acc = group.acc[i]!;
        const value =
          aggregate.fn === 'count'
            ? acc.count
            : acc.n === 0
              ? null
              : aggregate.fn === 'sum'
                ? acc.sum
                : aggregate.fn === 'avg'
                  ? acc.sum / acc.n
                  : aggregate.fn === 'min'
                    ? acc.min
                    : acc.max;
        row[aggregateName(aggregate)] = value;
      });
      out.push(row);
    }
    return out;
  }
}
