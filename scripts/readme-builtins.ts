// Rewrites the table of built-in patterns in README.md from the catalog, so the documented base scores are
// always the ones the code uses:  npx node scripts/readme-builtins.ts
import fs from 'node:fs';
import path from 'node:path';
import { BUILTIN_PATTERNS } from '../packages/guard/src/detect/index.ts';

const README = path.join(import.meta.dirname, '..', 'README.md');
const START = '<!-- builtin-table:start -->';
const END = '<!-- builtin-table:end -->';

const rows = BUILTIN_PATTERNS.map(
  (p) => `| \`${p.name}\` | ${p.category} | ${p.baseScore.toFixed(2)} | ${p.description.replaceAll('|', '\\|')} |`,
);
const table = ['| type | category | base score | what it finds |', '|---|---|---|---|', ...rows].join('\n');
const text = fs.readFileSync(README, 'utf8');
const from = text.indexOf(START);
const to = text.indexOf(END);
if (from < 0 || to < from) throw new Error('README.md has no builtin-table markers');
fs.writeFileSync(README, `${text.slice(0, from + START.length)}\n${table}\n${text.slice(to)}`);
console.log(`README.md: ${rows.length} built-in patterns`);
