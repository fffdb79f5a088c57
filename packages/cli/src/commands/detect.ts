import fs from 'node:fs/promises';
import path from 'node:path';
import type { Env } from '@keel/core';
import { createLocalScanner, readGuardConfig } from '@keel/guard/scanner';
import { InputError } from '../error-types.ts';
import { EXIT } from '../exit-codes.ts';

export interface DetectCommandOptions {
  json: boolean;
  paths: string[];
}

export interface Finding {
  path: string;
  line: number;
  column: number;
  type: string;
  score: string;
  masked: string;
  blocked: boolean;
}

const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git', '.hg', '.svn', 'dist', 'build', 'coverage']);
const MAX_FILE_BYTES = 20 * 1024 * 1024;

/** Shows the shape of a value without its content: the first and last two characters at most. */
export function maskForDisplay(value: string): string {
  const flat = value.replace(/\s+/g, ' ');
  if (flat.length <= 8) return '*'.repeat(flat.length);
  return `${flat.slice(0, 2)}${'*'.repeat(Math.min(flat.length - 4, 16))}${flat.slice(-2)}`;
}

/** 1-based line and column (in characters) of each offset, from a sorted list of line starts. */
export function lineColumn(lineStarts: readonly number[], offset: number): { line: number; column: number } {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (lineStarts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return { line: low + 1, column: offset - lineStarts[low]! + 1 };
}

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

async function* walk(target: string): AsyncGenerator<string> {
  const stat = await fs.stat(target);
  if (!stat.isDirectory()) {
    yield target;
    return;
  }
  const entries = await fs.readdir(target, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (entry.isDirectory() && SKIPPED_DIRECTORIES.has(entry.name)) continue;
    if (entry.isDirectory() || entry.isFile()) yield* walk(path.join(target, entry.name));
  }
}

async function readAll(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** Checks that every path exists and is readable before anything is scanned (exit code 4 otherwise). */
async function checkPaths(paths: readonly string[]): Promise<void> {
  for (const target of paths) {
    try {
      await fs.access(target, fs.constants.R_OK);
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new InputError(
        code === 'ENOENT' ? `${target}: no such file or directory` : `${target}: cannot be read (${code ?? 'error'})`,
      );
    }
  }
}

/** The closing line of the human output: how many findings, how many block, in how many files. */
export function summaryLine(findings: readonly Finding[], files: number): string {
  const blocking = findings.filter((f) => f.blocked);
  const withFindings = new Set(findings.map((f) => f.path)).size;
  const scanned = `${files} file${files === 1 ? '' : 's'} scanned`;
  if (findings.length === 0) return `keel: no findings; ${scanned}`;
  const types = [...new Set(blocking.map((f) => f.type))].sort().join(', ');
  return `keel: ${findings.length} finding${findings.length === 1 ? '' : 's'} in ${withFindings} file${withFindings === 1 ? '' : 's'}, ${blocking.length} would be blocked${types ? ` (${types})` : ''}; ${scanned}`;
}

/**
 * `keel detect [PATH…]`: scans files (directories recursively, `stdin` when no path) with guard's engine and
 * default patterns. Prints `path:line:col block|mask TYPE score masked` and a summary line (or JSON lines with
 * --json); resolves to the exit code: 1 when something would be blocked, else 0.
 */
export async function detectCommand(
  options: DetectCommandOptions,
  env: Env,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream & { isTTY?: boolean },
  stdin: NodeJS.ReadableStream,
): Promise<number> {
  const { detection } = readGuardConfig(env);
  const scan = createLocalScanner(detection);
  const blocks = (score: string) => detection.piiMode === 'BLOCK' || Number(score) >= detection.blockThreshold;
  let wouldBlock = false;
  const findings: Finding[] = [];

  const report = (file: string, text: string) => {
    const decision = scan(text);
    if (decision.blocked) wouldBlock = true;
    if (decision.detections.length === 0) return;
    const starts = lineStartsOf(text);
    for (const d of decision.detections) {
      const { line, column } = lineColumn(starts, d.start);
      const finding: Finding = {
        path: file,
        line,
        column,
        type: d.type,
        score: d.confidence_score,
        masked: maskForDisplay(d.value),
        blocked: blocks(d.confidence_score),
      };
      findings.push(finding);
      const decision = finding.blocked ? 'block' : 'mask';
      out.write(
        options.json
          ? `${JSON.stringify(finding)}\n`
          : `${finding.path}:${finding.line}:${finding.column} ${decision} ${finding.type} ${finding.score} ${finding.masked}\n`,
      );
    }
  };

  const finish = (files: number) => {
    if (!options.json) out.write(`${summaryLine(findings, files)}\n`);
    return wouldBlock ? EXIT.outcome : EXIT.ok;
  };
  if (options.paths.length === 0) {
    report('<stdin>', await readAll(stdin));
    return finish(1);
  }
  await checkPaths(options.paths);

  const files: string[] = [];
  for (const target of options.paths) for await (const file of walk(target)) files.push(file);
  const showProgress = files.length > 20;
  let lastProgress = 0;
  for (let i = 0; i < files.length; i++) {
    const file = files[i]!;
    const stat = await fs.stat(file);
    if (stat.size > MAX_FILE_BYTES) {
      err.write(`keel: skipping ${file}: larger than ${MAX_FILE_BYTES / 1024 / 1024} MB\n`);
      continue;
    }
    const buffer = await fs.readFile(file);
    if (buffer.subarray(0, 8192).includes(0)) continue; // binary
    report(file, buffer.toString('utf8'));
    if (showProgress && (Date.now() - lastProgress > 200 || i === files.length - 1)) {
      lastProgress = Date.now();
      const line = `keel: scanned ${i + 1}/${files.length} files`;
      err.write(err.isTTY ? `\r${line}${i === files.length - 1 ? '\n' : ''}` : `${line}\n`);
    }
  }
  return finish(files.length);
}
