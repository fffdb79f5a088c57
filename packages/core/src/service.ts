import type { CoreConfig, Env } from './config.ts';

export interface ServiceAddress {
  label: string;
  url: string;
}

export interface RunningService {
  name: string;
  addresses: ServiceAddress[];
  /** Stops accepting connections, lets in-flight requests finish, then releases the database and cache. */
  close(): Promise<void>;
}

/** Where a CLI command reads and writes; tests pass their own streams. */
export interface CommandIo {
  env: Env;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream;
}

/** A `keel <name> …` command a service contributes (e.g. `keel geo bootstrap`, `keel import products`). */
export interface CliCommand {
  name: string;
  /** One or more usage lines shown by `keel help`. */
  usage: string;
  /** Resolves to the exit code. Throw a ConfigError or UsageError-like Error for a clean message. */
  run(args: string[], io: CommandIo): Promise<number>;
}

/** What the `keel` CLI needs to know about a service to start it or migrate its database. */
export interface ServiceDefinition {
  name: string;
  description: string;
  start(options: { env: Env; core: CoreConfig }): Promise<RunningService>;
  /** Applies pending migrations to the service's database and returns the names applied. */
  migrate(options: { env: Env; core: CoreConfig }): Promise<string[]>;
  /** Commands this service adds to `keel`. */
  commands?: CliCommand[];
}
