/**
 * Finds one directed cycle in a graph given as adjacency lists over node indexes, or returns undefined when the
 * graph is acyclic. Iterative depth-first search (no recursion limit), O(nodes + edges).
 */
export function findCycle(nodeCount: number, adjacency: readonly (readonly number[])[]): number[] | undefined {
  const WHITE = 0;
  const GREY = 1;
  const BLACK = 2;
  const color = new Uint8Array(nodeCount);
  const parent = new Int32Array(nodeCount).fill(-1);
  const nextEdge = new Uint32Array(nodeCount);
  const stack: number[] = [];
  for (let start = 0; start < nodeCount; start++) {
    if (color[start] !== WHITE) continue;
    stack.push(start);
    color[start] = GREY;
    while (stack.length > 0) {
      const node = stack[stack.length - 1]!;
      const edges = adjacency[node] ?? [];
      if (nextEdge[node]! < edges.length) {
        const next = edges[nextEdge[node]!++]!;
        if (color[next] === WHITE) {
          color[next] = GREY;
          parent[next] = node;
          stack.push(next);
        } else if (color[next] === GREY) {
          // Back edge node → next: the cycle is next … node → next.
          const cycle = [node];
          let at = node;
          while (at !== next) {
            at = parent[at]!;
            cycle.push(at);
          }
          cycle.reverse();
          cycle.push(next);
          return cycle;
        }
      } else {
        color[node] = BLACK;
        stack.pop();
      }
    }
  }
  return undefined;
}
