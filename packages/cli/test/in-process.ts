// `keel` run inside the test's own process: the same command line as the bin (src/main.ts's runKeel), on the test
// process's environment plus `env`, with its output collected. Starting a child costs ~0.5–1 s of CPU for Node and the
// type stripping of every module the command loads; in-process a command costs what the command does. Tests about the
// process itself (the bin, signals, `keel start`'s listeners, the modules a fresh process loads) spawn `keel` instead.
import { Readable, Writable } from 'node:stream';
import { runKeel } from '../src/main.ts';

export interface KeelResult {
  code: number;
  stdout: string;
  stderr: string;
}

function collector(): Writable & { text: string } {
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      stream.text += String(chunk);
      done();
    },
  }) as Writable & { text: string };
  stream.text = '';
  return stream;
}

/** Runs `keel …args` in this process; `input` is its stdin (empty by default). */
export async function keelInProcess(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  input = '',
): Promise<KeelResult> {
  const stdout = collector();
  const stderr = collector();
  const stdin = Readable.from(input ? [Buffer.from(input)] : []);
  const code = await runKeel(args, { env: { ...process.env, ...env }, stdout, stderr, stdin });
  return { code, stdout: stdout.text, stderr: stderr.text };
}
