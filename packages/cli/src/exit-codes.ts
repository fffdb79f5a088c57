/**
 * The exit codes of `keel`, one meaning each (listed by `keel help` and in the CLI README). `1` is the command's
 * own negative outcome: `keel detect` found something that would be blocked, `keel import` rejected rows.
 */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** detect: something would be blocked; import: some rows were rejected. */
  outcome: 1,
  /** The command line is wrong: unknown command or option, a missing or malformed flag value. */
  usage: 2,
  /** An environment variable has a value Keel cannot use. */
  config: 3,
  /** A file or directory named on the command line does not exist or cannot be read. */
  input: 4,
  /** The service refused the request: a rule was broken or a named thing does not exist. */
  refused: 5,
  /** A port, database or Redis could not be reached or bound. */
  unavailable: 6,
  /** An unexpected failure (a bug): run again with --debug for the stack trace. */
  internal: 70,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0   done
  1   detect: something would be blocked; import: some rows were rejected
  2   usage error (unknown command or option, missing or malformed flag value)
  3   configuration error (an environment variable Keel cannot use)
  4   a file or directory named on the command line does not exist or cannot be read
  5   refused by the service (a rule was broken, or a named merchant, store, key… does not exist)
  6   a port, the database or Redis could not be reached or bound
  70  unexpected failure (run again with --debug for the stack trace)`;
