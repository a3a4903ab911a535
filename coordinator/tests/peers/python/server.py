"""A control peer: an MCP server built on the official Python SDK (`mcp`, MCPServer),
served over Streamable HTTP on loopback with the SDK's defaults.

Usage: python server.py PORT [stateless]   (prints "listening PORT" when ready)
"""

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

port = int(sys.argv[1])
stateless = len(sys.argv) > 2 and sys.argv[2] == "stateless"

mcp = MCPServer("vantage-control-py")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


app = mcp.streamable_http_app(stateless_http=stateless, host="127.0.0.1")


class Ready(uvicorn.Server):
    async def startup(self, sockets=None):
        await super().startup(sockets=sockets)
        print(f"listening {port}", flush=True)


Ready(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")).run()
