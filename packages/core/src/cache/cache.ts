/**
 * A small key-value cache with expiry, plus a broadcast channel so that several instances of a service can
 * tell each other to drop what they hold. Values are JSON-serializable. A cache that cannot be reached
 * behaves as empty: it never fails the request that asked it.
 */
export interface Cache {
  readonly kind: 'memory' | 'redis';
  get<T>(key: string): Promise<T | undefined>;
  /** One round trip for several keys; missing keys are undefined at their index. */
  getMany<T>(keys: readonly string[]): Promise<(T | undefined)[]>;
  set<T>(key: string, value: T, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Drops every key that starts with the prefix. */
  deletePrefix(prefix: string): Promise<void>;
  /** True when the backing store answers. */
  ping(): Promise<boolean>;
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, handler: (message: string) => void): Promise<void>;
  close(): Promise<void>;
}
