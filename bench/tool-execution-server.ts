// The MCP server of the tool-execution benchmark, in its own process: the official SDK over streamable HTTP on
// 127.0.0.1 (the same server the engine's tests use), one read-only tool `lookup_stock`.
import { startMcpServer } from '../packages/engine/test/mcp-servers.ts';

const server = await startMcpServer(undefined, { label: 'bench' });
console.log(`mcp server listening on ${server.url}`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
