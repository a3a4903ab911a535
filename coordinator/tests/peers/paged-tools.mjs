// The `paged` mode both TypeScript control peers share (ts-v1/server-legacy.mjs on SDK 1.x,
// ts-v2/server.mjs on SDK v2). The SDKs' McpServer lists every tool in one page and ignores
// `cursor`, so this registers tools/list and tools/call on the low-level Server: tools/list
// `pageSize` tools a page with `page-N` cursors, refusing a cursor it did not issue with
// InvalidParams (JSON-RPC -32602); tools/call over the same tools.
//
// Plain JavaScript with no imports, so it runs with either SDK as .ci/install-peers installs
// them: each peer passes what differs between the versions, the two methods as its SDK names
// them (`[list, call]`), its tools (`[name, description, shape, run]`), its zod, and its
// SDK's InvalidParams error.
export function registerPagedTools(server, { methods: [listMethod, callMethod], tools, pageSize, z, invalidParams }) {
  const defs = tools().map(([name, description, shape]) => ({
    name,
    description,
    inputSchema: z.toJSONSchema(z.object(shape)),
  }));
  server.registerCapabilities({ tools: { listChanged: true } });
  server.setRequestHandler(listMethod, (request) => {
    const cursor = request.params?.cursor;
    let start = 0;
    if (cursor !== undefined) {
      const m = /^page-(\d+)$/.exec(cursor);
      if (!m || Number(m[1]) * pageSize >= defs.length) throw invalidParams('Invalid cursor');
      start = Number(m[1]) * pageSize;
    }
    const end = Math.min(start + pageSize, defs.length);
    return {
      tools: defs.slice(start, end),
      ...(end < defs.length && { nextCursor: `page-${end / pageSize}` }),
    };
  });
  server.setRequestHandler(callMethod, (request) => {
    const found = tools().find(([name]) => name === request.params.name);
    if (!found) throw invalidParams(`Tool ${request.params.name} not found`);
    return found[3](request.params.arguments ?? {});
  });
}
