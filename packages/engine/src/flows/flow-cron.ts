import { CronExpressionParser } from 'cron-parser';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';

/** Longest cron expression and time zone name a schedule trigger takes. */
export const MAX_CRON_LENGTH = 120;
export const MAX_TIME_ZONE_LENGTH = 64;
export const DEFAULT_TIME_ZONE = 'UTC';

/** The standard macros (each fires at most once an hour); `@secondly`, `@minutely` and the like are refused. */
const MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);
const ALIASES: Record<string, string> = { '@annually': '@yearly', '@midnight': '@daily' };
const NAMES = /\b(?:JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|SUN|MON|TUE|WED|THU|FRI|SAT)\b/gi;
/** A field's characters once month and day names are removed: numbers, `* ? , - / # L`. */
const FIELD = /^[0-9*?,/#L-]+$/i;
/** An IANA zone name (`UTC`, `Europe/Paris`, `America/Argentina/Buenos_Aires`, `Etc/GMT+5`); offsets are refused. */
const ZONE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/;

export interface CronSchedule {
  cron: string;
  timeZone: string;
}

function invalid(message: string): never {
  throw RuntimeErrors.invalid(message);
}

/** Whether `zone` is an IANA time zone this runtime knows (`Intl`, which cron-parser's Luxon uses too). */
function knownZone(zone: string): boolean {
  if (zone.length > MAX_TIME_ZONE_LENGTH || !ZONE.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks a schedule trigger's cron expression and time zone and answers them normalized: a standard 5-field
 * expression (minute hour day-of-month month day-of-week, with `* , - /`, names, `L`, `#` and `?`) or one of the
 * macros `@hourly` … `@yearly`, in an IANA zone (default UTC). A seconds field (6 fields) is refused, so a schedule
 * never fires more often than once a minute; so are hashed (`H`) fields, unknown zones, and expressions that never fire.
 * Every refusal is a 400 with one readable message.
 */
export function checkCron(cron: string, timeZone: string | undefined, now: number): CronSchedule {
  const zone = timeZone ?? DEFAULT_TIME_ZONE;
  if (!knownZone(zone)) invalid(`time_zone ${JSON.stringify(zone.slice(0, 80))} is not an IANA time zone`);
  const text = cron.trim().replace(/\s+/g, ' ');
  if (text.length === 0 || text.length > MAX_CRON_LENGTH) invalid(`cron must be 1–${MAX_CRON_LENGTH} characters`);
  if (text.startsWith('@')) {
    const macro = text.toLowerCase();
    if (!MACROS.has(macro))
      invalid(`cron ${JSON.stringify(text)}: the macros are @hourly, @daily, @weekly, @monthly and @yearly`);
    const normalized = ALIASES[macro] ?? macro;
    nextCronSlot({ cron: normalized, timeZone: zone }, now);
    return { cron: normalized, timeZone: zone };
  }
  const fields = text.split(' ');
  if (fields.length === 6)
    invalid('cron has 6 fields: a seconds field is not supported (a schedule fires at most once a minute)');
  if (fields.length !== 5)
    invalid(`cron needs 5 fields (minute hour day-of-month month day-of-week), got ${Math.min(fields.length, 99)}`);
  for (const field of fields)
    if (!FIELD.test(field.replace(NAMES, '0')))
      invalid(`cron field ${JSON.stringify(field.slice(0, 40))} is not a standard cron field`);
  nextCronSlot({ cron: text, timeZone: zone }, now);
  return { cron: text, timeZone: zone };
}

/**
 * The first time strictly after `after` (epoch ms) that the schedule fires: missed slots are coalesced into the
 * next one. A checked expression that cannot fire (`0 0 30 2 *`) is a 400.
 */
export function nextCronSlot(schedule: CronSchedule, after: number): number {
  let next: number;
  try {
    next = CronExpressionParser.parse(schedule.cron, { currentDate: new Date(after), tz: schedule.timeZone })
      .next()
      .getTime();
  } catch (error) {
    invalid(`cron ${JSON.stringify(schedule.cron)}: ${(error as Error).message.slice(0, 160)}`);
  }
  if (!(next > after)) invalid(`cron ${JSON.stringify(schedule.cron)} never fires`);
  return next;
}
