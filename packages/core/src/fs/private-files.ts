import fs from 'node:fs';

/** Creates a data directory (and missing parents) readable by its owner only (0700); an existing one is left as it is. */
export function ensurePrivateDirectory(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/**
 * Makes existing files owner-only (0600): database files written before this rule, or by a tool with a looser
 * umask. A file that is missing, or not ours to change, is skipped.
 */
export function restrictFiles(...files: string[]): void {
  for (const file of files) {
    try {
      if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
    } catch {
      // Missing or not ours: nothing to tighten.
    }
  }
}
