#!/usr/bin/env node
// The `keel` bin: the command line in src/main.ts, on this process's arguments, environment and streams.
import { runKeel } from './main.ts';

const code = await runKeel(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
});
if (code >= 0) process.exitCode = code;
