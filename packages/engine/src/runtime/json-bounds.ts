import { RuntimeErrors } from './runtime-errors.ts';

/**
 * Bounds a free-form JSON value (metadata, state, context, settings): nesting depth and serialized size.
 * 400 naming the field otherwise. Returns the JSON text (or null for null/undefined).
 */
export function checkJson(
  value: unknown,
  field: string,
  limits: { maxDepth?: number; maxBytes?: number } = {},
): string | null {
  if (value === undefined || value === null) return null;
  const maxDepth = limits.maxDepth ?? 8;
  const maxBytes = limits.maxBytes ?? 16_384;
  const depth = (node: unknown, level: number): void => {
    if (level > maxDepth) throw RuntimeErrors.invalid(`${field} nests deeper than ${maxDepth} levels`);
    if (Array.isArray(node)) for (const child of node) depth(child, level + 1);
    else if (node && typeof node === 'object') for (const child of Object.values(node)) depth(child, level + 1);
  };
  depth(value, 1);
  const text = JSON.stringify(value);
  if (Buffer.byteLength(text) > maxBytes) throw RuntimeErrors.invalid(`${field} exceeds ${maxBytes} bytes`);
  return text;
}
