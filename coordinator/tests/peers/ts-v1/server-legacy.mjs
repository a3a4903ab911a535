// A control peer: a legacy-only MCP server on the official TypeScript SDK 1.x
// (@modelcontextprotocol/sdk, which speaks 2025-11-25 and older only), served with its
// Node.js StreamableHTTPServerTransport in stateful mode (a session per initialize, as the
// SDK's README shows), with the transport's DNS-rebinding protection on loopback.
//
// Usage: node server-legacy.mjs PORT [paged]   (prints "listening PORT" when ready)
//   paged  serves tools/list five tools a page: McpServer's handlers return every tool in
//          one page and ignore `cursor`, so this mode sets the low-level Server's
//          ListToolsRequestSchema handler (../paged-tools.mjs, shared with the v2 peer),
//          which pages by cursor and refuses a cursor it did not issue with
//          McpError(InvalidParams), i.e. JSON-RPC -32602.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { registerPagedTools } from '../paged-tools.mjs';
import { registerControlResources } from '../resources.mjs';

const port = Number(process.argv[2] ?? 0);
const paged = process.argv.slice(3).includes('paged');
const PAGE = 5;

const text = (t) => ({ content: [{ type: 'text', text: String(t) }] });

function tools() {
  const t = [
    ['add', 'Add two numbers', { a: z.number(), b: z.number() }, ({ a, b }) => text(a + b)],
    ['echo', 'Echo the input', { text: z.string().max(4096) }, ({ text: s }) => text(s)],
    ['lookup', 'Look an item up', { region: z.enum(['eu', 'us', 'ap']), id: z.number().int() }, () => text('{}')],
  ];
  for (let i = 0; i < 9; i++) {
    t.push([`records_${String(i).padStart(2, '0')}`, `Records of kind ${i}, by id`, { id: z.string().max(64) }, () => text('[]')]);
  }
  return t;
}

function build() {
  const server = new McpServer({ name: 'vantage-control-ts-v1', version: '1.0.0' });
  if (paged) {
    registerPagedTools(server.server, {
      methods: [ListToolsRequestSchema, CallToolRequestSchema],
      tools, pageSize: PAGE, z,
      invalidParams: (message) => new McpError(ErrorCode.InvalidParams, message),
    });
  } else {
    for (const [name, description, shape, run] of tools()) {
      server.registerTool(name, { description, inputSchema: shape }, run);
    }
  }
  registerControlResources(server, ResourceTemplate);
  server.registerPrompt('summarize', { description: 'Summarize a text', argsSchema: { text: z.string() } }, ({ text: s }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${s}` } }],
  }));
  return server;
}

const sessions = new Map();

async function body(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const raw = Buffer.concat(chunks).toString('utf8');
  try {
    return raw ? JSON.parse(raw) : undefined;
  } catch {
    return undefined;
  }
}

const http = createServer(async (req, res) => {
  const sid = req.headers['mcp-session-id'];
  const parsed = req.method === 'POST' ? await body(req) : undefined;
  let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
  if (!transport && req.method === 'POST' && sid === undefined && isInitializeRequest(parsed)) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, transport),
      enableDnsRebindingProtection: true,
      allowedHosts: [`127.0.0.1:${http.address().port}`, `localhost:${http.address().port}`],
      allowedOrigins: [`http://127.0.0.1:${http.address().port}`, `http://localhost:${http.address().port}`],
    });
    transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
    await build().connect(transport);
  }
  if (!transport) {
    // What the SDK's own examples answer without a session: one stateless transport
    // that refuses the request the way the 1.x transport does.
    const refuse = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await build().connect(refuse);
    await refuse.handleRequest(req, res, parsed);
    return;
  }
  await transport.handleRequest(req, res, parsed);
});
http.listen(port, '127.0.0.1', () => {
  console.log(`listening ${http.address().port}`);
});
process.on('SIGTERM', () => http.close(() => process.exit(0)));
