// The usage lines of keel's own commands, apart from the commands so that `keel help` loads none of them.

export const START_USAGE = `start [SERVICE…]                start services (default: all: guard, engine, geo) on the embedded defaults;
Ctrl-C stops gracefully`;

export const MIGRATE_USAGE = `migrate [SERVICE…]              apply database migrations to DATABASE_URL (or the embedded SQLite files)`;

export const DETECT_USAGE = `detect [PATH…] [--json]         scan files or directories (stdin when none) for PII and secrets offline;
prints path:line:col, block or mask, type, score and the masked value, then a summary line;
exit code 1 when something would be blocked`;
