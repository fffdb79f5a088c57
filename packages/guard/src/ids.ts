import { GuardErrors } from './errors.ts';

const MAX_ID = 2_147_483_647; // the largest id an int4 serial column holds

/** Parses a path id: a positive integer that fits the id column, else a 400. */
export function parseId(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > MAX_ID) {
    throw GuardErrors.invalidId(JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw));
  }
  return Number(raw);
}
