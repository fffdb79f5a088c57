import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const RESULTS = path.join(import.meta.dirname, '..', 'RESULTS.md');

/** One line describing the machine and runtime, printed with every result. */
export function machineLine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

/**
 * Replaces the section named `name` in bench/RESULTS.md (between its start and end markers), or appends it,
 * so each benchmark script keeps its own part of the file current.
 */
export function writeResultsSection(name: string, markdown: string): void {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const current = fs.existsSync(RESULTS) ? fs.readFileSync(RESULTS, 'utf8') : '# Benchmark results\n';
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next =
    from >= 0 && to > from
      ? current.slice(0, from) + block + current.slice(to + end.length)
      : `${current.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(RESULTS, next);
}
