// The MCP server of the tool-execution benchmark, in its own process (MCP_SERVER_PORT, default a free port): the official SDK over streamable HTTP on
// 127.0.0.1 (the same server the engine's tests use), one read-only tool `lookup_stock`.
import { startMcpServer } from '../packages/engine/test/mcp-servers.ts';

const port = Number(process.env.MCP_SERVER_PORT ?? 0);
const server = await startMcpServer(undefined, { label: 'bench', port });
console.log(`mcp server listening on ${server.url}`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
