import { parseArgs } from 'node:util';
import type { CliCommand, CommandIo } from '@keel/core';
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

async function main(argv: string[], io: CommandIo): Promise<number> {
  const [command, ...rest] = argv;
  const wantsHelp = rest.includes('--help') || rest.includes('-h');
  const contributed: CliCommand | undefined = serviceCommands().find((c) => c.name === command);
  const builtin = builtins().find((c) => c.name === command);
  if (wantsHelp && (builtin || contributed)) {
    const { name, usage } = (builtin ?? contributed)!;
    io.stdout.write(`${commandHelp(name, usage)}\n`);
    return EXIT.ok;
  }
  switch (command) {
    // Each command imports its code (and the services it needs) only when it runs.
    case 'start':
      await (await import('./commands/start.ts')).startCommand(rest, io.env, io.stdout);
      return -1; // keep running until a signal
    case 'migrate':
      await (await import('./commands/migrate.ts')).migrateCommand(rest, io.env, io.stdout);
      return EXIT.ok;
    case 'detect': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { json: { type: 'boolean', default: false } },
        allowPositionals: true,
      });
      const { detectCommand } = await import('./commands/detect.ts');
      return detectCommand({ json: values.json ?? false, paths: positionals }, io.env, io.stdout, io.stderr, io.stdin);
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h': {
      const topic = [...builtins(), ...serviceCommands()].find((c) => c.name === rest[0]);
      io.stdout.write(`${topic ? commandHelp(topic.name, topic.usage) : help()}\n`);
      return EXIT.ok;
    }
    default: {
      if (!contributed) throw new UsageError(`unknown command "${command}" (see keel help)`);
      return contributed.run(rest, io);
    }
  }
}

/**
 * Runs one `keel` command line (`argv` without the node and script paths) on the given streams and environment, and
 * resolves to its exit code; -1 for `keel start`, which keeps running until a signal. A failure is printed as one
 * line on `io.stderr` (with its stack trace when `--debug` stands anywhere before a `--`), never thrown. The `keel`
 * bin runs this on the process's own streams; tests run it in their own process.
 */
export async function runKeel(args: readonly string[], io: CommandIo): Promise<number> {
  const end = args.includes('--') ? args.indexOf('--') : args.length;
  const debug = args.slice(0, end).includes('--debug');
  const commandArgs = debug ? args.filter((arg, i) => !(i < end && arg === '--debug')) : [...args];
  try {
    return await main(commandArgs, io);
  } catch (error) {
    const { describeFailure } = await import('./errors.ts');
    const { message, exitCode } = describeFailure(error, debug);
    io.stderr.write(`keel: ${message}\n`);
    return exitCode;
  }
}
