// A control peer: an MCP server built on the official TypeScript SDK v2
// (@modelcontextprotocol/server, createMcpHandler) served through @modelcontextprotocol/node's
// toNodeHandler on loopback, with the Host and Origin guards the SDK's README puts in front.
//
// Usage: node server.mjs PORT [dual|modern] [paged] [old]   (prints "listening PORT" when ready)
//   dual   (the SDK default) serves 2026-07-28 and falls back to stateless 2025-11-25
//   modern (legacy: 'reject') serves 2026-07-28 only
//   paged  serves tools/list five tools a page. McpServer's own list handlers return every
//          tool in one page and ignore `cursor` (the SDK has no page-size option), so this
//          mode registers the tools on the SDK's low-level Server instead: its
//          setRequestHandler('tools/list') handler (../paged-tools.mjs, shared with the
//          1.x peer) pages by cursor and refuses a cursor it did not issue with
//          ProtocolError(InvalidParams), i.e. JSON-RPC -32602. Everything else
//          (resources, the template, prompts, subscriptions/listen) stays McpServer's.
//   old    an older backend: `lookup` gone, `legacy_report` added, `add` described otherwise
//          (the region suite's stale edge)
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  McpServer,
  originValidationResponse,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { registerPagedTools } from '../paged-tools.mjs';
import { registerControlResources } from '../resources.mjs';

const port = Number(process.argv[2] ?? 0);
const mode = process.argv[3] ?? 'dual';
const flags = new Set(process.argv.slice(4));
const paged = flags.has('paged');
const old = flags.has('old');
const PAGE = 5;

const text = (t) => ({ content: [{ type: 'text', text: String(t) }] });

// Sixteen tools (with `old`: the older backend's set), in a stable order.
function tools() {
  const t = [
    ['add', old ? 'Add numbers' : 'Add two numbers', { a: z.number(), b: z.number() }, ({ a, b }) => text(a + b)],
    ['echo', 'Echo the input', { text: z.string().max(4096) }, ({ text: s }) => text(s)],
    ['time_now', 'The server clock', {}, () => text(new Date().toISOString())],
  ];
  if (!old) {
    t.push(['lookup', 'Look an item up', { region: z.enum(['eu', 'us', 'ap']), id: z.number().int() }, () => text('{}')]);
  } else {
    t.push(['legacy_report', 'A report the old backend still serves', { id: z.string().max(64) }, () => text('{}')]);
  }
  for (let i = 0; i < 12; i++) {
    const name = `records_${String(i).padStart(2, '0')}`;
    t.push([name, `Records of kind ${i}, by id`, { id: z.string().max(64), limit: z.number().int().min(1).max(100).optional() }, () => text('[]')]);
  }
  return t;
}

function factory() {
  const server = new McpServer({ name: 'vantage-control-ts', version: '1.0.0' });
  if (paged) {
    registerPagedTools(server.server, {
      methods: ['tools/list', 'tools/call'],
      tools, pageSize: PAGE, z,
      invalidParams: (message) => new ProtocolError(ProtocolErrorCode.InvalidParams, message),
    });
  } else {
    for (const [name, description, shape, run] of tools()) {
      server.registerTool(name, { description, inputSchema: z.object(shape) }, run);
    }
  }
  registerControlResources(server, ResourceTemplate);
  server.registerResource('status', 'vantage-control://status', { mimeType: 'application/json' }, async (uri) => ({
    contents: [{ uri: uri.href, text: '{"ok":true}' }],
  }));
  server.registerPrompt('summarize', { description: 'Summarize a text', argsSchema: z.object({ text: z.string() }) }, ({ text: s }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${s}` } }],
  }));
  server.registerPrompt('greet', { description: 'Say hello' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'Hello' } }],
  }));
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
