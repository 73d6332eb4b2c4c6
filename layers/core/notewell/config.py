"""Settings, read once from the environment (or built by the CLI), typed and failing loudly."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping

Backend = Literal["sqlite", "dynamodb"]


class ConfigError(ValueError):
    """The configuration is missing or wrong; the message names the variable to set."""


def default_data_dir(environ: Mapping[str, str]) -> Path:
    home = environ.get("NOTEWELL_HOME")
    return Path(home).expanduser() if home else Path.home() / ".notewell"


@dataclass(frozen=True, slots=True)
class Settings:
    backend: Backend = "sqlite"
    data_dir: Path = Path(".notewell")
    table_name: str | None = None
    aws_region: str | None = None
    dynamodb_endpoint: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    cursor_secret: str | None = None
    feed_horizon_seconds: float | None = None  # None: the store's default (see bootstrap.py)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        backend = environ.get("NOTEWELL_BACKEND", "sqlite").strip().lower()
        if backend not in ("sqlite", "dynamodb"):
            raise ConfigError(f"NOTEWELL_BACKEND is {backend!r}; set it to 'sqlite' or 'dynamodb'.")
        table = environ.get("NOTEWELL_TABLE") or None
        if backend == "dynamodb" and not table:
            raise ConfigError("NOTEWELL_TABLE is missing; set it to the DynamoDB table name of the stack.")
        hosts = tuple(h.strip() for h in environ.get("NOTEWELL_ALLOWED_HOSTS", "").split(",") if h.strip())
        return cls(
            backend="dynamodb" if backend == "dynamodb" else "sqlite",
            data_dir=default_data_dir(environ),
            table_name=table,
            aws_region=environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or None,
            dynamodb_endpoint=environ.get("NOTEWELL_DYNAMODB_ENDPOINT") or None,
            allowed_hosts=hosts,
            cursor_secret=environ.get("NOTEWELL_CURSOR_SECRET") or None,
            feed_horizon_seconds=_float(environ, "NOTEWELL_FEED_HORIZON_SECONDS"),
        )


def _float(environ: Mapping[str, str], name: str) -> float | None:
    raw = environ.get(name)
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} is {raw!r}; set it to a number of seconds.") from exc
