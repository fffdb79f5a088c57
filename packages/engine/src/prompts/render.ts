/** `{{ name }}`: the only template syntax; no expressions, filters, loops or includes. */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]{0,63})\s*\}\}/g;
/** Anything else that looks like a placeholder (so a typo is refused rather than sent to the model). */
const ANY_PLACEHOLDER = /\{\{([^{}]{0,200})\}\}/g;

export const VARIABLE_NAME = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
/** A rendered value is cut to this many characters. */
export const MAX_VARIABLE_VALUE = 2000;

/** Problems of a prompt's content against its declared variables: malformed or undeclared placeholders. */
export function templateProblems(content: string, variables: readonly string[]): string[] {
  const declared = new Set(variables);
  const problems: string[] = [];
  for (const match of content.matchAll(ANY_PLACEHOLDER)) {
    const inner = match[1]!.trim();
    if (!new RegExp(VARIABLE_NAME).test(inner)) problems.push(`{{${match[1]}}} is not a valid placeholder`);
    else if (!declared.has(inner)) problems.push(`{{${inner}}} is used but not declared in variables`);
    if (problems.length >= 10) break;
  }
  return problems;
}

/**
 * Renders `{{ name }}` placeholders in one pass: values are plain text (never re-scanned, so a value cannot
 * introduce placeholders), control characters are removed, braces are neutralised and each value is cut to
 * MAX_VARIABLE_VALUE characters. Declared variables without a value render as an empty string.
 */
export function renderPrompt(content: string, values: Readonly<Record<string, unknown>>): string {
  return content.replace(PLACEHOLDER, (_whole, name: string) => {
    const raw = Object.hasOwn(values, name) ? values[name] : undefined;
    if (raw === undefined || raw === null) return '';
    const text = typeof raw === 'string' ? raw : typeof raw === 'object' ? JSON.stringify(raw) : String(raw);
    return text
      .slice(0, MAX_VARIABLE_VALUE)
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g, '')
      .replace(/\{\{/g, '{ {')
      .replace(/\}\}/g, '} }');
  });
}
