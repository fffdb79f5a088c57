import type { App } from '@keel/core';
import type { EngineContext } from '../context.ts';

/** Mounts the public MCP endpoint (filled in by the MCP item). */
export async function registerCatalogMcp(_app: App, _ctx: EngineContext): Promise<void> {}
