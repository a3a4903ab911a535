// A control peer: an MCP server built on the official TypeScript SDK v2
// (@modelcontextprotocol/server, createMcpHandler) served through @modelcontextprotocol/node's
// toNodeHandler on loopback, with the Host and Origin guards the SDK's README puts in front.
//
// Usage: node server.mjs PORT [dual|modern]   (prints "listening PORT" when ready)
//   dual   (the SDK default) serves 2026-07-28 and falls back to stateless 2025-11-25
//   modern (legacy: 'reject') serves 2026-07-28 only
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  McpServer,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

const port = Number(process.argv[2] ?? 0);
const mode = process.argv[3] ?? 'dual';

function factory() {
  const server = new McpServer({ name: 'vantage-control-ts', version: '1.0.0' });
  server.registerTool(
    'add',
    { description: 'Add two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  return server;
}

const handler = createMcpHandler(factory, { legacy: mode === 'modern' ? 'reject' : 'stateless' });
const guarded = {
  fetch: (request, options) =>
    hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
    originValidationResponse(request, localhostAllowedOrigins()) ??
    handler.fetch(request, options),
};
const node = toNodeHandler(guarded);
const http = createServer((req, res) => void node(req, res));
http.listen(port, '127.0.0.1', () => {
  console.log(`listening ${http.address().port}`);
});
process.on('SIGTERM', () => http.close(() => process.exit(0)));
