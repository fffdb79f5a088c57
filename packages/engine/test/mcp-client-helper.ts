import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Realm, RuntimeUnderTest } from './runtime-helper.ts';

// A real MCP SDK client against the engine's public tool endpoint (listening on a free port once per engine).

const listening = new WeakMap<object, string>();
export async function mcpUrl(engine: RuntimeUnderTest): Promise<string> {
  const known = listening.get(engine.mcp);
  if (known) return known;
  await engine.mcp.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(engine.mcp.server.address() as AddressInfo).port}/mcp`;
  listening.set(engine.mcp, url);
  return url;
}

export function realmHeaders(realm: Realm, realmId = realm.realmId): Record<string, string> {
  return {
    'x-engine-realm-id': realmId,
    'x-engine-access-key': realm.accessKey,
    'x-engine-secret-key': realm.secretKey,
  };
}

export async function connect(t: TestContext, url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'runtime-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  t.after(() => client.close());
  return client;
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: any;
    content: { text: string }[];
  };
  return { isError: result.isError === true, data: result.structuredContent ?? JSON.parse(result.content[0]!.text) };
}
