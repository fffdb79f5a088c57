import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, type TestContext } from 'node:test';

/** One request the fake Bedrock endpoint received. */
export interface BedrockCall {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** A local stand-in for the Bedrock runtime endpoint (MANAGED_MODEL_ENDPOINT_OVERRIDE), closed after the test. */
export async function startFakeBedrock(
  t: TestContext,
  answer: (call: BedrockCall) => { status?: number; body: unknown; errorType?: string },
) {
  const calls: BedrockCall[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const call = {
      path: decodeURIComponent(req.url ?? ''),
      headers: req.headers,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'),
    };
    calls.push(call);
    const reply = answer(call);
    res.writeHead(reply.status ?? 200, {
      'content-type': 'application/json',
      ...(reply.errorType ? { 'x-amzn-errortype': reply.errorType } : {}),
    });
    res.end(JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

/** A Converse API answer carrying `text`. */
export const converseAnswer = (text: string, stopReason = 'end_turn') => ({
  output: { message: { role: 'assistant', content: [{ text }] } },
  stopReason,
  usage: { inputTokens: 12, outputTokens: 4, totalTokens: 16 },
  metrics: { latencyMs: 5 },
});

/** Static, fake AWS credentials in the environment for the suite (the standard chain reads them first). */
export function useFakeAwsCredentials(): void {
  const saved: Record<string, string | undefined> = {};
  const credentials = {
    AWS_ACCESS_KEY_ID: 'AKIDLOCALTESTONLY000',
    AWS_SECRET_ACCESS_KEY: 'local-test-secret-not-real',
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  before(() => {
    for (const [name, value] of Object.entries(credentials)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });
  after(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

/**
 * Runs `body` (an ES module body; top-level await allowed) in a fresh node process started in `cwd`, recording
 * every module it resolves, and returns the AWS SDK modules (`@aws-sdk/*`, `@smithy/*`) among them: how a test
 * shows that a code path does not load the SDK.
 */
export function awsModulesLoadedBy(body: string, options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string[]> {
  const script = `
    import { registerHooks } from 'node:module';
    const __seen = [];
    registerHooks({
      resolve(specifier, context, next) {
        const result = next(specifier, context);
        if (/@aws-sdk|@smithy/.test(result.url)) __seen.push(specifier);
        return result;
      },
    });
    ${body}
    process.stdout.write('\\n' + JSON.stringify(__seen));
  `;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '--eval', script],
      { cwd: options.cwd, env: options.env ?? process.env, timeout: 60_000 },
      (error, stdout) => {
        if (error) reject(error);
        else resolve(JSON.parse(stdout.slice(stdout.lastIndexOf('\n') + 1)) as string[]);
      },
    );
  });
}
