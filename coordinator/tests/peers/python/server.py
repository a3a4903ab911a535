"""A control peer: an MCP server built on the official Python SDK (`mcp`), served over
Streamable HTTP on loopback with the SDK's defaults.

Usage: python server.py PORT [stateless] [paged]   (prints "listening PORT" when ready)

Default: `MCPServer` with sixteen tools, two resources, a resource template and two prompts.
Its list handlers return everything in one page and ignore `cursor` (MCPServer has no page
size), so `paged` serves the same surface from the SDK's low-level `Server` instead, whose
`on_list_tools` / `on_list_resources` / `on_list_prompts` handlers receive the cursor: five
items a page, and a cursor it did not issue refused with `MCPError(INVALID_PARAMS)`
(JSON-RPC -32602).
"""

import sys

import mcp.types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

port = int(sys.argv[1])
flags = set(sys.argv[2:])
stateless = "stateless" in flags
paged = "paged" in flags
PAGE = 5


def records(i: int):
    def run(id: str, limit: int = 10) -> str:
        return "[]"

    run.__name__ = f"records_{i:02d}"
    run.__doc__ = f"Records of kind {i}, by id."
    return run


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def echo(text: str) -> str:
    """Echo the input."""
    return text


def time_now() -> str:
    """The server clock."""
    return "2026-11-30T00:00:00Z"


def lookup(region: str, id: int) -> str:
    """Look an item up."""
    return "{}"


FUNCTIONS = [add, echo, time_now, lookup] + [records(i) for i in range(12)]


def default_app():
    mcp = MCPServer("vantage-control-py")
    for f in FUNCTIONS:
        mcp.tool()(f)

    @mcp.resource("vantage-control://readme", mime_type="text/markdown")
    def readme() -> str:
        return "# control peer"

    @mcp.resource("vantage-control://status", mime_type="application/json")
    def status() -> str:
        return '{"ok": true}'

    @mcp.resource("vantage-control://items/{id}", mime_type="application/json")
    def item(id: str) -> str:
        return "{}"

    @mcp.prompt()
    def summarize(text: str) -> str:
        """Summarize a text."""
        return f"Summarize: {text}"

    @mcp.prompt()
    def greet() -> str:
        """Say hello."""
        return "Hello"

    return mcp.streamable_http_app(stateless_http=stateless, host="127.0.0.1")


def page(items, params):
    """One page of `items` for the request's cursor, and the next cursor."""
    cursor = params.cursor if params is not None else None
    start = 0
    if cursor is not None:
        if not cursor.startswith("page-") or not cursor[5:].isdigit() or int(cursor[5:]) * PAGE >= len(items):
            raise MCPError(code=types.INVALID_PARAMS, message="Invalid cursor")
        start = int(cursor[5:]) * PAGE
    end = min(start + PAGE, len(items))
    return items[start:end], (f"page-{end // PAGE}" if end < len(items) else None)


def paged_app():
    tools = [
        types.Tool(
            name=f.__name__,
            description=(f.__doc__ or "").strip(),
            input_schema={
                "type": "object",
                "properties": {n: {"type": "string", "maxLength": 256} for n in f.__code__.co_varnames[: f.__code__.co_argcount]},
                "additionalProperties": False,
            },
        )
        for f in FUNCTIONS
    ]
    resources = [
        types.Resource(name="readme", uri="vantage-control://readme", mime_type="text/markdown"),
        types.Resource(name="status", uri="vantage-control://status", mime_type="application/json"),
    ]
    prompts = [types.Prompt(name="summarize", description="Summarize a text"), types.Prompt(name="greet", description="Say hello")]

    async def list_tools(ctx, params):
        items, nxt = page(tools, params)
        return types.ListToolsResult(tools=items, next_cursor=nxt)

    async def call_tool(ctx, params):
        if params.name not in {t.name for t in tools}:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    async def list_resources(ctx, params):
        items, nxt = page(resources, params)
        return types.ListResourcesResult(resources=items, next_cursor=nxt)

    async def list_prompts(ctx, params):
        items, nxt = page(prompts, params)
        return types.ListPromptsResult(prompts=items, next_cursor=nxt)

    server = Server(
        "vantage-control-py-paged",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_prompts=list_prompts,
    )
    return server.streamable_http_app(stateless_http=stateless, host="127.0.0.1")


app = paged_app() if paged else default_app()


class Ready(uvicorn.Server):
    async def startup(self, sockets=None):
        await super().startup(sockets=sockets)
        print(f"listening {port}", flush=True)


Ready(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")).run()
