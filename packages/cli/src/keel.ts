#!/usr/bin/env node
import { parseArgs } from 'node:util';
import type { CliCommand } from '@keel/core';
import { DETECT_USAGE, MIGRATE_USAGE, START_USAGE } from './commands/usage.ts';
import { UsageError } from './error-types.ts';
import { EXIT, EXIT_CODES_HELP } from './exit-codes.ts';
import { serviceCommands } from './services.ts';

const HELP_USAGE = 'help [COMMAND]                  this text, or one command’s';

/** A command's usage lines, laid out alike: `  keel <synopsis>` and its description lines indented under it. */
function renderUsage(name: string, usage: string): string[] {
  return usage
    .split('\n')
    .map((line) => line.trim().replace(/^keel /, ''))
    .filter(Boolean)
    .map((line) => (line === name || line.startsWith(`${name} `) ? `  keel ${line}` : `        ${line}`));
}

function builtins(): { name: string; usage: string }[] {
  return [
    { name: 'start', usage: START_USAGE },
    { name: 'migrate', usage: MIGRATE_USAGE },
    { name: 'detect', usage: DETECT_USAGE },
  ];
}

function help(): string {
  const commands = [...builtins(), ...serviceCommands(), { name: 'help', usage: HELP_USAGE }];
  return [
    'keel — run and operate the Keel services',
    '',
    'Usage:',
    ...commands.flatMap((command) => renderUsage(command.name, command.usage)),
    '',
    'Every command takes --help; --debug prints the stack trace of a failure.',
    'Configuration comes from environment variables; see README.md.',
    '',
    EXIT_CODES_HELP,
  ].join('\n');
}

function commandHelp(name: string, usage: string): string {
  return ['Usage:', ...renderUsage(name, usage), '', 'See `keel help` for the exit codes.'].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const wantsHelp = rest.includes('--help') || rest.includes('-h');
  const contributed: CliCommand | undefined = serviceCommands().find((c) => c.name === command);
  const builtin = builtins().find((c) => c.name === command);
  if (wantsHelp && (builtin || contributed)) {
    const { name, usage } = (builtin ?? contributed)!;
    process.stdout.write(`${commandHelp(name, usage)}\n`);
    return EXIT.ok;
  }
  switch (command) {
    // Each command imports its code (and the services it needs) only when it runs.
    case 'start':
      await (await import('./commands/start.ts')).startCommand(rest, process.env, process.stdout);
      return -1; // keep running until a signal
    case 'migrate':
      await (await import('./commands/migrate.ts')).migrateCommand(rest, process.env, process.stdout);
      return EXIT.ok;
    case 'detect': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { json: { type: 'boolean', default: false } },
        allowPositionals: true,
      });
      const { detectCommand } = await import('./commands/detect.ts');
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
    case '-h': {
      const topic = [...builtins(), ...serviceCommands()].find((c) => c.name === rest[0]);
      process.stdout.write(`${topic ? commandHelp(topic.name, topic.usage) : help()}\n`);
      return EXIT.ok;
    }
    default: {
      if (!contributed) throw new UsageError(`unknown command "${command}" (see keel help)`);
      return contributed.run(rest, {
        env: process.env,
        stdout: process.stdout,
        stderr: process.stderr,
        stdin: process.stdin,
      });
    }
  }
}

// `--debug` may stand anywhere before a `--`; it is not passed on to the command.
const args = process.argv.slice(2);
const end = args.includes('--') ? args.indexOf('--') : args.length;
const debug = args.slice(0, end).includes('--debug');
const commandArgs = debug ? args.filter((arg, i) => !(i < end && arg === '--debug')) : args;

main(commandArgs).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  async (error: unknown) => {
    const { describeFailure } = await import('./errors.ts');
    const { message, exitCode } = describeFailure(error, debug);
    process.stderr.write(`keel: ${message}\n`);
    process.exitCode = exitCode;
  },
);
