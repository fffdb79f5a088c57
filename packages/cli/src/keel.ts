#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError } from '@keel/core';
import { detectCommand } from './commands/detect.ts';
import { migrateCommand } from './commands/migrate.ts';
import { startCommand } from './commands/start.ts';
import { serviceCommands, UsageError } from './services.ts';

function help(): string {
  const contributed = serviceCommands().map((command) => `  ${command.usage.split('\n').join('\n  ')}`);
  return [
    'keel — run and operate the Keel services',
    '',
    'Usage:',
    '  keel start [service…]        start services (default: all) on the embedded defaults; Ctrl-C stops gracefully',
    '  keel migrate [service…]      apply database migrations to DATABASE_URL (or the embedded SQLite files)',
    '  keel detect [PATH…] [--json] scan files or directories (stdin when none) for PII and secrets;',
    '                               exit code 1 when something would be blocked',
    ...contributed,
    '  keel help                    this text',
    '',
    'Configuration comes from environment variables; see README.md.',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      await startCommand(rest, process.env, process.stdout);
      return -1; // keep running until a signal
    case 'migrate':
      await migrateCommand(rest, process.env, process.stdout);
      return 0;
    case 'detect': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { json: { type: 'boolean', default: false } },
        allowPositionals: true,
      });
      return detectCommand(
        { json: values.json ?? false, paths: positionals },
        process.env,
        process.stdout,
        process.stderr,
      );
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${help()}\n`);
      return 0;
    default: {
      const contributed = serviceCommands().find((c) => c.name === command);
      if (!contributed) throw new UsageError(`unknown command "${command}"\n\n${help()}`);
      return contributed.run(rest, {
        env: process.env,
        stdout: process.stdout,
        stderr: process.stderr,
        stdin: process.stdin,
      });
    }
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    const usage = error instanceof UsageError || (error as Error)?.name === 'UsageError';
    if (error instanceof ConfigError || usage) {
      process.stderr.write(`keel: ${(error as Error).message}\n`);
      process.exitCode = usage ? 2 : 1;
      return;
    }
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE' || code === 'ENOENT' || code === 'EACCES') {
      process.stderr.write(`keel: ${(error as Error).message}\n`);
    } else {
      process.stderr.write(`keel: failed: ${(error as Error).stack ?? String(error)}\n`);
    }
    process.exitCode = 1;
  },
);
