// Turns the services' named API schemas (JSON Schema, as TypeBox builds them) into plain TypeScript type
// declarations, so the published SDK's types need neither the services nor TypeBox.

/** A JSON Schema object as the services build them (TypeBox output, serialized). */
type Schema = { [key: string]: unknown };

/** One named API shape: a schema, or a list of allowed strings. */
export type NamedShape = object | readonly string[];

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function literal(value: unknown): string {
  return JSON.stringify(value);
}

function comment(schema: Schema, indent: string): string {
  const text = typeof schema.description === 'string' ? schema.description : undefined;
  return text ? `${indent}/** ${text.replace(/\*\//g, '* /').replace(/\s*\n\s*/g, ' ')} */\n` : '';
}

/**
 * Renders every named shape as `export type Name = …;` (JSON Schema → TypeScript). A `$ref` to another named
 * shape's `$id` becomes that name; a `$ref` to a schema that is not named is inlined.
 */
export function declarationsFor(shapes: Record<string, NamedShape>, header: string): string {
  const plain = JSON.parse(JSON.stringify(shapes)) as Record<string, Schema | string[]>;
  const byId = new Map<string, Schema>();
  const nameOfId = new Map<string, string>();
  const collect = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(collect);
    else if (node && typeof node === 'object') {
      const id = (node as Schema).$id;
      if (typeof id === 'string' && !byId.has(id)) byId.set(id, node as Schema);
      for (const value of Object.values(node)) collect(value);
    }
  };
  collect(plain);
  for (const [name, shape] of Object.entries(plain))
    if (!Array.isArray(shape) && typeof shape.$id === 'string') nameOfId.set(shape.$id, name);

  const render = (schema: Schema, indent: string, self?: string): string => {
    if (typeof schema.$ref === 'string') {
      const id = schema.$ref.replace(/#$/, '');
      const name = nameOfId.get(id);
      if (name && name !== self) return name;
      const target = byId.get(id);
      if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
      return render({ ...target, $id: undefined }, indent, self);
    }
    if (typeof schema.$id === 'string' && self === undefined) {
      const name = nameOfId.get(schema.$id);
      if (name) return name;
    }
    if ('const' in schema) return literal(schema.const);
    if (Array.isArray(schema.enum)) return schema.enum.map(literal).join(' | ');
    const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (Array.isArray(union)) return union.map((member) => wrap(render(member, indent))).join(' | ');
    if (Array.isArray(schema.allOf))
      return (schema.allOf as Schema[]).map((member) => wrap(render(member, indent))).join(' & ');
    if (Array.isArray(schema.type))
      return (schema.type as string[]).map((type) => render({ ...schema, type }, indent)).join(' | ');
    switch (schema.type) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array': {
        if (Array.isArray(schema.prefixItems))
          return `[${(schema.prefixItems as Schema[]).map((item) => render(item, indent)).join(', ')}]`;
        const items = schema.items as Schema | undefined;
        return items ? `${wrap(render(items, indent))}[]` : 'unknown[]';
      }
      case 'object':
        return renderObject(schema, indent);
      default:
        return 'unknown';
    }
  };

  const renderObject = (schema: Schema, indent: string): string => {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set((schema.required ?? []) as string[]);
    const patterns = schema.patternProperties as Record<string, Schema> | undefined;
    const additional = schema.additionalProperties;
    const names = Object.keys(properties);
    if (names.length === 0) {
      if (patterns)
        return `Record<string, ${Object.values(patterns)
          .map((p) => render(p, indent))
          .join(' | ')}>`;
      if (additional && typeof additional === 'object')
        return `Record<string, ${render(additional as Schema, indent)}>`;
      return 'Record<string, unknown>';
    }
    const inner = `${indent}  `;
    const lines = names.map((name) => {
      const key = IDENTIFIER.test(name) ? name : literal(name);
      const optional = required.has(name) ? '' : '?';
      return `${comment(properties[name]!, inner)}${inner}${key}${optional}: ${render(properties[name]!, inner)};`;
    });
    return `{\n${lines.join('\n')}\n${indent}}`;
  };

  const wrap = (type: string) => (topLevelOperator(type) ? `(${type})` : type);

  const out = [header, ''];
  for (const [name, shape] of Object.entries(plain)) {
    if (Array.isArray(shape)) {
      out.push(`export type ${name} = ${shape.map(literal).join(' | ')};`, '');
      continue;
    }
    out.push(`${comment(shape, '')}export type ${name} = ${render(shape, '', name)};`, '');
  }
  return out.join('\n');
}

/** Whether a rendered type has a `|` or `&` outside brackets and string literals (so it needs parentheses). */
function topLevelOperator(type: string): boolean {
  let depth = 0;
  for (let i = 0; i < type.length; i++) {
    const c = type[i];
    if (c === '"') {
      for (i++; i < type.length && type[i] !== '"'; i++) if (type[i] === '\\') i++;
    } else if (c === '{' || c === '[' || c === '(' || c === '<') depth++;
    else if (c === '}' || c === ']' || c === ')' || c === '>') depth--;
    else if ((c === '|' || c === '&') && depth === 0) return true;
  }
  return false;
}
