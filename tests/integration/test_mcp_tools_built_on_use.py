"""Tools built on first use (entrypoints/mcp_tools.py) under concurrent first calls: each is built once, and no
caller finds it missing while another builds it."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.tools import Tool

from notewell.entrypoints.mcp_tools import build_server

if TYPE_CHECKING:
    import pytest

    from notewell.bootstrap import Services


def test_concurrent_first_calls_of_a_tool_build_it_once_and_all_find_it(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    from_function = Tool.from_function
    gate = threading.Barrier(8)

    def counting(fn: Any, name: str | None = None, **options: Any) -> Tool:
        built.append(name or fn.__name__)
        return from_function(fn, name=name, **options)

    monkeypatch.setattr(Tool, "from_function", counting)
    manager = build_server(services)._tool_manager
    found: list[Tool | None] = []

    def first_call() -> None:
        gate.wait()  # all eight ask at once
        found.append(manager.get_tool("search_notes"))

    threads = [threading.Thread(target=first_call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert built == ["search_notes"]
    assert len(found) == 8 and all(tool is not None and tool.name == "search_notes" for tool in found)
