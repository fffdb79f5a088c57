import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config.ts';
import { ensurePrivateDirectory, restrictFiles } from '../fs/private-files.ts';

/**
 * A service's generated key: `configured` when set; otherwise `<dataDir>/<file>`, created with 32 random bytes in hex
 * (mode 0600) on first start and read on every later one. When two processes start at once, exactly one writes it
 * and the other reads it. A file whose content does not match `pattern` is a ConfigError naming `describe`.
 */
export function loadKeyFile(options: {
  configured: string | undefined;
  dataDir: string;
  file: string;
  pattern: RegExp;
  describe: string;
}): { keyHex: string; generated: boolean } {
  if (options.configured) return { keyHex: options.configured, generated: false };
  const file = path.join(options.dataDir, options.file);
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    restrictFiles(file);
    if (!options.pattern.test(existing)) throw new ConfigError(`${file} does not hold ${options.describe}`);
    return { keyHex: existing, generated: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  ensurePrivateDirectory(options.dataDir);
  const keyHex = randomBytes(32).toString('hex');
  try {
    fs.writeFileSync(file, `${keyHex}\n`, { mode: 0o600, flag: 'wx' });
    return { keyHex, generated: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return loadKeyFile(options);
  }
}
