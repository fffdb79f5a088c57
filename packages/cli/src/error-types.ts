// The CLI's own error classes, apart from errors.ts (which reads core's) so that throwing one loads nothing.

/** A mistake on the command line: printed as one line without a stack, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A file or directory named on the command line that cannot be read: exit code 4. */
export class InputError extends Error {
  override name = 'InputError';
}
