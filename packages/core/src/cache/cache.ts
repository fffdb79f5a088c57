/**
 * A small key-value cache with expiry, plus a broadcast channel so that several instances of a service can
 * tell each other to drop what they hold. Values are JSON-serializable. A shared cache that cannot be reached
 * serves from process memory: it never fails (or holds up) the request that asked it.
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
  /**
   * Hears every message published on the channel by any instance (this one included). After an outage of the
   * shared store the handler is called once with `*`: messages may have been lost, so drop everything. Never
   * rejects: a subscription that cannot be made now is made when the store answers.
   */
  subscribe(channel: string, handler: (message: string) => void): Promise<void>;
  close(): Promise<void>;
}
