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

/** What the `keel` CLI needs to know about a service to start it or migrate its database. */
export interface ServiceDefinition {
  name: string;
  description: string;
  start(options: { env: Env; core: CoreConfig }): Promise<RunningService>;
  /** Applies pending migrations to the service's database and returns the names applied. */
  migrate(options: { env: Env; core: CoreConfig }): Promise<string[]>;
}
