"""Settings, read once from the environment (or built by the CLI), typed and failing loudly."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

Backend = Literal["sqlite", "dynamodb"]
MetricsChoice = Literal["emf", "none"]
EmbedderChoice = Literal["local", "hash", "bedrock", "none"]


class ConfigError(ValueError):
    """The configuration is missing or wrong; the message names the variable to set."""


def default_data_dir(environ: Mapping[str, str]) -> Path:
    home = environ.get("NOTEWELL_HOME")
    return Path(home).expanduser() if home else Path.home() / ".notewell"


def default_model_cache(environ: Mapping[str, str]) -> Path:
    """Per user and machine, where other tools keep model caches: $XDG_CACHE_HOME/notewell or ~/.cache/notewell."""
    base = environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "notewell"


@dataclass(frozen=True, slots=True)
class Settings:
    backend: Backend = "sqlite"
    data_dir: Path = Path(".notewell")
    table_name: str | None = None
    aws_region: str | None = None
    dynamodb_endpoint: str | None = None
    allowed_hosts: tuple[str, ...] = ()  # Host header names served (each with any port, unless one is given)
    allowed_origins: tuple[str, ...] = ()  # browser origins accepted besides those on an allowed host
    cursor_secret: str | None = None
    feed_horizon_seconds: float | None = None  # None: the store's default (see bootstrap.py)
    # local: the model packaged with Notewell (the default from the environment on SQLite); none: keywords only
    # (DynamoDB's default until its search index); hash: a deterministic stand-in that knows words, not meaning.
    embedder: EmbedderChoice = "none"
    model_cache: Path | None = None  # the local model, prepared once per machine (adapters/onnx_embedder.py)
    # The OAuth issuer (https://host, or http on loopback): set, /mcp's 401 points clients at the discovery
    # documents served under it. One fixed string, never derived from a request's Host header.
    issuer: str | None = None
    # The OpenSearch Serverless collection endpoint (https://…aoss.amazonaws.com): set, search and remember's
    # candidates use its index; unset, DynamoDB ranks a bounded window of recent notes in process.
    search_endpoint: str | None = None
    embed_model: str = "amazon.titan-embed-text-v2:0"  # with embedder "bedrock"
    embed_dimensions: int = 1024
    # A Bedrock text model remember asks about close notes no detector settles (empty: no judge, the agent reviews).
    judge_model: str = ""
    # emf: one CloudWatch embedded-metric line per tool call on stdout (Lambda); none: no metrics (local runs).
    metrics: MetricsChoice = "none"
    metrics_namespace: str = "Notewell"

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        backend = environ.get("NOTEWELL_BACKEND", "sqlite").strip().lower()
        if backend not in ("sqlite", "dynamodb"):
            raise ConfigError(f"NOTEWELL_BACKEND is {backend!r}; set it to 'sqlite' or 'dynamodb'.")
        table = environ.get("NOTEWELL_TABLE") or None
        if backend == "dynamodb" and not table:
            raise ConfigError("NOTEWELL_TABLE is missing; set it to the DynamoDB table name of the stack.")
        hosts = allowed_hosts(_list(environ, "NOTEWELL_ALLOWED_HOSTS"), "NOTEWELL_ALLOWED_HOSTS")
        origins = allowed_origins(_list(environ, "NOTEWELL_ALLOWED_ORIGINS"), "NOTEWELL_ALLOWED_ORIGINS")
        return cls(
            backend="dynamodb" if backend == "dynamodb" else "sqlite",
            data_dir=default_data_dir(environ),
            table_name=table,
            aws_region=environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or None,
            dynamodb_endpoint=environ.get("NOTEWELL_DYNAMODB_ENDPOINT") or None,
            allowed_hosts=hosts,
            allowed_origins=origins,
            cursor_secret=environ.get("NOTEWELL_CURSOR_SECRET") or None,
            feed_horizon_seconds=_float(environ, "NOTEWELL_FEED_HORIZON_SECONDS"),
            embedder=_embedder(environ, "none" if backend == "dynamodb" else "local"),
            model_cache=default_model_cache(environ),
            issuer=_issuer(environ.get("NOTEWELL_ISSUER")),
            search_endpoint=_endpoint(environ.get("NOTEWELL_SEARCH_ENDPOINT")),
            embed_model=environ.get("NOTEWELL_EMBED_MODEL", "").strip() or "amazon.titan-embed-text-v2:0",
            embed_dimensions=_dimensions(environ.get("NOTEWELL_EMBED_DIMENSIONS")),
            judge_model=environ.get("NOTEWELL_JUDGE_MODEL", "").strip(),
            metrics=_metrics(environ.get("NOTEWELL_METRICS")),
            metrics_namespace=environ.get("POWERTOOLS_METRICS_NAMESPACE", "").strip() or "Notewell",
        )


def _metrics(value: str | None) -> MetricsChoice:
    choice = (value or "none").strip().lower()
    if choice == "emf":
        return "emf"
    if choice == "none":
        return "none"
    raise ConfigError(f"NOTEWELL_METRICS is {value!r}; set it to 'emf' (CloudWatch metrics in the logs) or 'none'.")


def _endpoint(value: str | None) -> str | None:
    if not value or not value.strip():
        return None
    endpoint = value.strip().rstrip("/")
    if not re.fullmatch(r"https://[A-Za-z0-9.-]+(:\d{1,5})?|http://(127\.0\.0\.1|localhost)(:\d{1,5})?", endpoint):
        raise ConfigError(
            f"NOTEWELL_SEARCH_ENDPOINT is {endpoint[:100]!r}; set it to the collection endpoint, "
            "https://<id>.<region>.aoss.amazonaws.com, without a path."
        )
    return endpoint


def _dimensions(value: str | None) -> int:
    if not value or not value.strip():
        return 1024
    if value.strip() not in ("256", "512", "1024"):
        raise ConfigError(f"NOTEWELL_EMBED_DIMENSIONS is {value!r}; set it to 256, 512 or 1024.")
    return int(value)


def _issuer(value: str | None) -> str | None:
    from notewell.domain.errors import InvalidArgumentError
    from notewell.domain.oauth import canonical_issuer

    if not value or not value.strip():
        return None
    try:
        return canonical_issuer(value)
    except InvalidArgumentError as exc:
        raise ConfigError(f"NOTEWELL_ISSUER: {exc.message}") from None


def _embedder(environ: Mapping[str, str], default: EmbedderChoice) -> EmbedderChoice:
    value = environ.get("NOTEWELL_EMBEDDER", default).strip().lower()
    if value == "local":
        return "local"
    if value == "hash":
        return "hash"
    if value == "bedrock":
        return "bedrock"
    if value == "none":
        return "none"
    raise ConfigError(f"NOTEWELL_EMBEDDER is {value!r}; set it to 'local', 'bedrock', 'hash' or 'none'.")


def _list(environ: Mapping[str, str], name: str) -> list[str]:
    return [item.strip() for item in environ.get(name, "").split(",") if item.strip()]


_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::\d{1,5})?")
_ORIGIN = re.compile(r"https?://" + _HOST.pattern)


def allowed_hosts(values: Iterable[str], source: str) -> tuple[str, ...]:
    """Host names as clients send them in the Host header: `notes.example.com`, `10.0.0.5:8765`, `[::1]`."""
    hosts = tuple(value.strip().lower() for value in values)
    for host in hosts:
        if not _HOST.fullmatch(host):
            raise ConfigError(
                f"{source} has {host!r}, which is not a host name; give names like notes.example.com or "
                "notes.example.com:8443, without a scheme or path."
            )
    return hosts


def allowed_origins(values: Iterable[str], source: str) -> tuple[str, ...]:
    """Browser origins: `https://app.example.com`, `http://localhost:3000` (scheme, host, optional port)."""
    origins = tuple(value.strip().lower().rstrip("/") for value in values)
    for origin in origins:
        if not _ORIGIN.fullmatch(origin):
            raise ConfigError(
                f"{source} has {origin!r}, which is not an origin; give origins like https://app.example.com, "
                "without a path."
            )
    return origins


def _float(environ: Mapping[str, str], name: str) -> float | None:
    raw = environ.get(name)
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} is {raw!r}; set it to a number of seconds.") from exc
