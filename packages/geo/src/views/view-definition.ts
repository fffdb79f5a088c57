import { DATASETS, type DatasetName } from '../datasets/dataset-schemas.ts';
import { GeoErrors } from '../errors.ts';

/** The type of a field a view can filter, sort, group or chart by. `any` is a free-form `data.*` value. */
export type FieldType = 'string' | 'number' | 'time' | 'boolean' | 'any';

/** Fields of every record dataset (the API names of DatasetRecordSchema), besides free-form `data.<path>`. */
export const RECORD_FIELDS: Record<string, FieldType> = {
  id: 'string',
  key: 'string',
  definitionVersion: 'string',
  runId: 'string',
  importId: 'string',
  computedAt: 'time',
  createdAt: 'time',
  updatedAt: 'time',
  status: 'string',
  'confidence.value': 'number',
  'confidence.low': 'number',
  'confidence.high': 'number',
};

/** Fields of the `tracking_events` dataset (TrackingEventSchema), besides free-form `properties.<name>`. */
export const EVENT_FIELDS: Record<string, FieldType> = {
  id: 'string',
  kind: 'string',
  name: 'string',
  path: 'string',
  referrerHost: 'string',
  aiEngine: 'string',
  crawler: 'string',
  consent: 'boolean',
  visitorId: 'string',
  occurredAt: 'time',
  receivedAt: 'time',
};

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

export const VIEW_LIMITS = {
  filters: 20,
  columns: 30,
  groupBy: 3,
  aggregates: 10,
  inValues: 100,
  stringValue: 500,
  definitionBytes: 16 * 1024,
} as const;

export const FILTER_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'contains', 'exists'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];
export const AGGREGATE_FNS = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateFn = (typeof AGGREGATE_FNS)[number];
export const BUCKETS = ['hour', 'day', 'week', 'month'] as const;
export type Bucket = (typeof BUCKETS)[number];

export type Scalar = string | number | boolean | null;

export interface ViewFilter {
  field: string;
  op: FilterOp;
  value?: Scalar | Scalar[] | undefined;
}
export interface ViewGroup {
  field: string;
  bucket?: Bucket | undefined;
}
export interface ViewAggregate {
  fn: AggregateFn;
  field?: string | undefined;
}
export interface ViewSort {
  field: string;
  direction: 'asc' | 'desc';
}
export interface ViewChart {
  type: 'line' | 'bar';
  x: string;
  y: string;
}

/** A saved view as the client writes it (every part but the name and dataset optional). */
export interface ViewInput {
  name: string;
  description?: string | null | undefined;
  dataset: string;
  mode?: 'observed' | 'simulated' | null | undefined;
  filters?: ViewFilter[] | undefined;
  sort?: ViewSort | null | undefined;
  columns?: string[] | null | undefined;
  groupBy?: ViewGroup[] | undefined;
  aggregates?: ViewAggregate[] | undefined;
  chart?: ViewChart | null | undefined;
}

/** A checked view definition, as stored in the `saved_views` record's `data`. */
export interface ViewDefinition {
  name: string;
  description: string | null;
  dataset: DatasetName;
  mode: 'observed' | 'simulated' | null;
  filters: ViewFilter[];
  sort: ViewSort | null;
  columns: string[] | null;
  groupBy: ViewGroup[];
  aggregates: ViewAggregate[];
  chart: ViewChart | null;
}

/** Datasets a view can be over: every dataset except the views themselves. */
export const VIEWABLE_DATASETS = DATASETS.filter((d) => d !== 'saved_views');

const invalid = (message: string) => GeoErrors.viewInvalid(message);

/** The type of `field` in `dataset`, or a 400 naming the fields it could be. */
export function fieldType(dataset: DatasetName, field: string, where: string): FieldType {
  const events = dataset === 'tracking_events';
  const known = events ? EVENT_FIELDS : RECORD_FIELDS;
  if (Object.hasOwn(known, field)) return known[field]!;
  const prefix = events ? 'properties.' : 'data.';
  if (field.startsWith(prefix)) {
    const segments = field.slice(prefix.length).split('.');
    const maxDepth = events ? 1 : 3;
    if (
      segments.length <= maxDepth &&
      segments.every((s) => SEGMENT.test(s) && !FORBIDDEN_SEGMENTS.has(s)) &&
      field.length <= 200
    )
      return 'any';
  }
  const shown = JSON.stringify(field.slice(0, 80));
  throw invalid(
    `${where}: ${shown} is not a field of ${dataset}; use one of ${Object.keys(known).join(', ')} or ${prefix}<name>${events ? '' : '[.<name>…] (up to 3 levels)'}`,
  );
}

function isScalar(value: unknown): value is Scalar {
  return (
    value === null ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value)) ||
    (typeof value === 'string' && value.length <= VIEW_LIMITS.stringValue)
  );
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** A filter value checked against the field's type (times normalized to ISO 8601 UTC). */
function checkValue(type: FieldType, value: unknown, where: string, ordered: boolean): Scalar {
  if (!isScalar(value))
    throw invalid(`${where}: a string (at most ${VIEW_LIMITS.stringValue} characters), finite number, boolean or null`);
  if (value === null) {
    if (ordered) throw invalid(`${where}: null cannot be compared; use op exists`);
    return null;
  }
  switch (type) {
    case 'string':
      if (typeof value !== 'string') throw invalid(`${where}: this field holds text; give a string`);
      return value;
    case 'number':
      if (typeof value !== 'number') throw invalid(`${where}: this field holds numbers; give a number`);
      return value;
    case 'boolean':
      if (ordered) throw invalid(`${where}: a boolean field takes eq, ne, in, not_in or exists`);
      if (typeof value !== 'boolean') throw invalid(`${where}: this field is true or false`);
      return value;
    case 'time': {
      if (typeof value !== 'string' || !ISO_DATE_TIME.test(value) || Number.isNaN(Date.parse(value)))
        throw invalid(`${where}: this field is a time; give an ISO 8601 date or date-time`);
      return new Date(value).toISOString();
    }
    default:
      if (ordered && typeof value === 'boolean') throw invalid(`${where}: compare with a number or a string`);
      return value;
  }
}

function checkFilter(dataset: DatasetName, filter: ViewFilter, index: number): ViewFilter {
  const where = `filters[${index}]`;
  const type = fieldType(dataset, filter.field, `${where}.field`);
  const op = filter.op;
  switch (op) {
    case 'exists':
      if (typeof filter.value !== 'boolean') throw invalid(`${where}.value: exists takes true or false`);
      return { field: filter.field, op, value: filter.value };
    case 'in':
    case 'not_in': {
      const values = filter.value;
      if (!Array.isArray(values) || values.length === 0 || values.length > VIEW_LIMITS.inValues)
        throw invalid(`${where}.value: ${op} takes a list of 1 to ${VIEW_LIMITS.inValues} values`);
      return {
        field: filter.field,
        op,
        value: values.map((v, i) => checkValue(type, v, `${where}.value[${i}]`, false)),
      };
    }
    case 'contains':
      if (type !== 'string' && type !== 'any') throw invalid(`${where}: contains applies to text fields`);
      if (typeof filter.value !== 'string' || filter.value.length === 0 || filter.value.length > 200)
        throw invalid(`${where}.value: contains takes a string of 1 to 200 characters`);
      return { field: filter.field, op, value: filter.value };
    case 'eq':
    case 'ne':
      return { field: filter.field, op, value: checkValue(type, filter.value, `${where}.value`, false) };
    default:
      return { field: filter.field, op, value: checkValue(type, filter.value, `${where}.value`, true) };
  }
}

/** The output name of an aggregate: `count`, or `fn(field)`. */
export function aggregateName(aggregate: ViewAggregate): string {
  return aggregate.field === undefined ? aggregate.fn : `${aggregate.fn}(${aggregate.field})`;
}

/**
 * Checks a view against its dataset's fields and the bounds, and returns it in stored form. Every problem is a 400
 * `GEO_VIEW_INVALID` naming the part at fault.
 */
export function checkViewDefinition(input: ViewInput): ViewDefinition {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 100) throw invalid('name: 1 to 100 characters');
  if (!(VIEWABLE_DATASETS as readonly string[]).includes(input.dataset))
    throw invalid(`dataset: one of ${VIEWABLE_DATASETS.join(', ')}`);
  const dataset = input.dataset as DatasetName;
  let mode: ViewDefinition['mode'] = null;
  if (dataset === 'experiments') mode = input.mode ?? 'observed';
  else if (input.mode) throw invalid('mode applies to the experiments dataset only');

  const filters = (input.filters ?? []).map((f, i) => checkFilter(dataset, f, i));
  if (filters.length > VIEW_LIMITS.filters) throw invalid(`filters: at most ${VIEW_LIMITS.filters}`);

  const groupBy = (input.groupBy ?? []).map((g, i) => {
    const type = fieldType(dataset, g.field, `groupBy[${i}].field`);
    if (g.bucket !== undefined && type !== 'time')
      throw invalid(`groupBy[${i}].bucket: only time fields are bucketed (${g.field} is not a time)`);
    return g.bucket === undefined ? { field: g.field } : { field: g.field, bucket: g.bucket };
  });
  if (new Set(groupBy.map((g) => g.field)).size !== groupBy.length)
    throw invalid('groupBy: a field can be grouped by once');
  const aggregates = (input.aggregates ?? []).map((a, i) => {
    if (a.field === undefined) {
      if (a.fn !== 'count') throw invalid(`aggregates[${i}]: ${a.fn} needs a field`);
      return { fn: a.fn };
    }
    const type = fieldType(dataset, a.field, `aggregates[${i}].field`);
    if (a.fn !== 'count' && type !== 'number' && type !== 'any')
      throw invalid(`aggregates[${i}]: ${a.fn} needs a numeric field (${a.field} is ${type})`);
    return { fn: a.fn, field: a.field };
  });
  if (new Set(aggregates.map(aggregateName)).size !== aggregates.length)
    throw invalid('aggregates: each aggregate once');
  const grouped = groupBy.length > 0 || aggregates.length > 0;
  if (grouped && aggregates.length === 0) aggregates.push({ fn: 'count' });

  const columns = input.columns ?? null;
  if (columns) {
    if (grouped) throw invalid('columns: a grouped view shows its group fields and aggregates');
    for (const [i, column] of columns.entries()) fieldType(dataset, column, `columns[${i}]`);
    if (new Set(columns).size !== columns.length) throw invalid('columns: each field once');
  }

  // Grouped views sort and chart by their output: a group field or an aggregate name.
  const outputs = new Map<string, FieldType>();
  if (grouped) {
    for (const g of groupBy) outputs.set(g.field, g.bucket ? 'string' : fieldType(dataset, g.field, 'groupBy'));
    for (const a of aggregates) outputs.set(aggregateName(a), 'number');
  }
  const typeOf = (field: string, where: string): FieldType => {
    if (!grouped) return fieldType(dataset, field, where);
    const type = outputs.get(field);
    if (type === undefined)
      throw invalid(`${where}: a grouped view orders and charts by ${[...outputs.keys()].join(', ')}`);
    return type;
  };

  const sort = input.sort ?? null;
  if (sort) typeOf(sort.field, 'sort.field');
  const chart = input.chart ?? null;
  if (chart) {
    typeOf(chart.x, 'chart.x');
    const yType = typeOf(chart.y, 'chart.y');
    if (yType !== 'number' && yType !== 'any') throw invalid(`chart.y: a numeric field (${chart.y} is ${yType})`);
  }
  const description = input.description?.trim() || null;
  const definition: ViewDefinition = {
    name,
    description,
    dataset,
    mode,
    filters,
    sort: sort ? { field: sort.field, direction: sort.direction } : null,
    columns,
    groupBy,
    aggregates,
    chart: chart ? { type: chart.type, x: chart.x, y: chart.y } : null,
  };
  if (Buffer.byteLength(JSON.stringify(definition)) > VIEW_LIMITS.definitionBytes)
    throw invalid(`the view is larger than ${VIEW_LIMITS.definitionBytes} bytes of JSON`);
  return definition;
}

/** True when the view returns groups (it has groupBy or aggregates) rather than records. */
export function isGrouped(definition: ViewDefinition): boolean {
  return definition.groupBy.length > 0 || definition.aggregates.length > 0;
}
