"""A stand-in MCP server's reply, for tests whose server only has to answer one tools/call as a real one would."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler


def reply(handler: BaseHTTPRequestHandler, call_id: object, result: dict[str, object]) -> None:
    """Answer the request `handler` holds with a JSON-RPC result, as a stateless MCP server does over HTTP."""
    body = json.dumps({"jsonrpc": "2.0", "id": call_id, "result": result}).encode()
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
