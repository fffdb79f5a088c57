import type { RuntimeContext } from '../runtime/runtime-context.ts';
import type { ToolRuntime } from './tool-runtime.ts';

const registry = new WeakMap<RuntimeContext, ToolRuntime>();

/** Remembers the tool runtime built for a runtime context (the public MCP endpoint's tools use it). */
export function rememberToolRuntime(rt: RuntimeContext, tools: ToolRuntime): void {
  registry.set(rt, tools);
}

/** The tool runtime of a runtime context; throws when the tool-server routes were never registered. */
export function toolRuntimeOf(rt: RuntimeContext): ToolRuntime {
  const tools = registry.get(rt);
  if (!tools) throw new Error('the tool-server registry is not registered on this runtime');
  return tools;
}
