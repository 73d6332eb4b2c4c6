"""Issue 38, item 2: what oversized request bodies cost `notewell serve`, in its peak resident memory.

    python -m tests.bench.big_bodies [--megabytes 400] [--concurrent 3] [--embedder none]

Starts `notewell serve` on loopback, then, for every POST route, sends `--concurrent` bodies of `--megabytes` MB at
once, generated while they are sent (never held), twice: chunked (no length: the server must count as it reads) and
with a declared Content-Length (refused before a byte is read). The /mcp bodies carry an OAuth access token without
notes:write, the case where the bearer check looks into the body. After each route it prints the server's VmHWM
(peak RSS, /proc/<pid>/status); the last lines are the peak over the whole run and what the bodies added to the
idle server's own peak (measured first, once the local embedding model has loaded in the background). Target: under
300 MB. The local model is loaded prepared (adapters/onnx_embedder.py), its weights mapped from the cache: the idle
server with it takes about 185 MB (333 MB before that); `--embedder none` measures without it.
Figures only: nothing here fails.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import httpx2

from tests.bench.local_server import Served, serve

CHUNK = 64 * 1024
TARGET_MB = 300
VERIFIER = "b" * 43
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()
REDIRECT = "http://127.0.0.1:9/cb"
JSON = {"content-type": "application/json"}
FORM = {"content-type": "application/x-www-form-urlencoded"}
MCP = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class Body:
    """`size` bytes produced chunk by chunk as the connection takes them; `sent` counts what was handed over."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunk = b"x" * CHUNK
        while self.sent < self.size:
            piece = chunk[: self.size - self.sent]
            self.sent += len(piece)
            yield piece


async def read_only_token(http: httpx2.AsyncClient, key: str) -> str:
    """An OAuth access token with notes:read only, signed in the way a client and a person do."""
    metadata = {"redirect_uris": [REDIRECT], "client_name": "big-bodies bench"}
    client = (await http.post("/register", content=json.dumps(metadata), headers=JSON)).json()["client_id"]
    query = {"response_type": "code", "client_id": client, "redirect_uri": REDIRECT, "state": "s",
             "code_challenge": CHALLENGE, "code_challenge_method": "S256", "scope": "notes:read"}  # fmt: skip
    page = await http.get("/authorize?" + urlencode(query))
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page.text))
    approved = await http.post("/authorize", data={**fields, "api_key": key, "decision": "approve"})
    code = parse_qs(urlsplit(approved.headers["location"]).query)["code"][0]
    form = {"grant_type": "authorization_code", "code": code, "client_id": client, "code_verifier": VERIFIER,
            "redirect_uri": REDIRECT}  # fmt: skip
    return str((await http.post("/token", data=form)).json()["access_token"])


async def send(base: str, path: str, headers: dict[str, str], size: int, declared: bool) -> str:
    """One oversized body on a connection of its own: the status (or how the connection ended) and bytes sent."""
    body = Body(size)
    sized = {**headers, "content-length": str(size)} if declared else headers
    timeout = httpx2.Timeout(120.0)
    try:
        async with httpx2.AsyncClient(base_url=base, timeout=timeout) as http:
            answer = await http.post(path, content=body, headers=sized)
        outcome = str(answer.status_code)
    except httpx2.HTTPError as exc:  # the server closed the connection while the body was still being sent
        outcome = type(exc).__name__
    return f"{outcome} after {body.sent / 1e6:.1f} MB"


async def burst(base: str, path: str, headers: dict[str, str], size: int, declared: bool, n: int) -> list[str]:
    outcomes: list[str] = []

    async def one() -> None:
        outcomes.append(await send(base, path, headers, size, declared))

    async with anyio.create_task_group() as tasks:
        for _ in range(n):
            tasks.start_soon(one)
    return outcomes


def peak_mb(served: Served) -> float:
    return served.memory_kb()["VmHWM"] / 1024


def settled_peak_mb(served: Served, quiet_s: float = 3.0, limit_s: float = 60.0) -> float:
    """The idle server's peak once it stops growing (the embedding model loads in the background after start)."""
    deadline, last, since = time.monotonic() + limit_s, -1.0, time.monotonic()
    while time.monotonic() < deadline:
        now = peak_mb(served)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            break
        time.sleep(0.2)
    return last


async def run(served: Served, megabytes: int, concurrent: int) -> float:
    base = served.url.removesuffix("/mcp")
    async with httpx2.AsyncClient(base_url=base, timeout=30.0, follow_redirects=False) as http:
        token = await read_only_token(http, served.key)
    routes = [
        ("/register", JSON), ("/token", FORM), ("/authorize", FORM),
        ("/mcp", {**MCP, "authorization": f"Bearer {token}"}), ("/console/sign-in", FORM),
    ]  # fmt: skip
    for path, headers in routes:
        for declared in (False, True):
            outcomes = await burst(base, path, headers, megabytes * 1_000_000, declared, concurrent)
            how = "Content-Length" if declared else "chunked"
            print(f"{path:18} {how:14} {'; '.join(outcomes)}; server VmHWM {peak_mb(served):.0f} MB")
    return peak_mb(served)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=int, default=400)
    parser.add_argument("--concurrent", type=int, default=3)
    parser.add_argument("--embedder", help="NOTEWELL_EMBEDDER for the server (default: serve's own, the local model)")
    args = parser.parse_args()
    if args.embedder:
        os.environ["NOTEWELL_EMBEDDER"] = args.embedder  # the server inherits it
    with (
        tempfile.TemporaryDirectory(prefix="notewell-big-bodies-") as tmp,
        serve(Path(tmp) / "data", Path(tmp) / "home") as served,
    ):
        idle = settled_peak_mb(served)
        print(f"server pid {served.pid}; idle VmHWM {idle:.0f} MB")
        peak = anyio.run(run, served, args.megabytes, args.concurrent)
    verdict = "under" if peak < TARGET_MB else "OVER"
    print(f"peak server RSS (VmHWM): {peak:.0f} MB, {verdict} the {TARGET_MB} MB target")
    print(f"added by the bodies (and one sign-in) to the idle server's {idle:.0f} MB: {peak - idle:.0f} MB")


if __name__ == "__main__":
    main()
