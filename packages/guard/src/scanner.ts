/**
 * The `@keel/guard/scanner` entry point: guard's detection engine for in-process scanning (`keel detect`, the
 * engine's PII scrubbing and payment-data guard) and the configuration it reads, without guard's HTTP app, routes and
 * stores, so a process that only scans does not load them.
 */
export { type GuardConfig, readGuardConfig } from './config.ts';
export { createLocalScanner } from './local-scanner.ts';
