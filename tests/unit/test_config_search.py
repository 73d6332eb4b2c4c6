"""The search settings fail loudly and name the variable to fix."""

from __future__ import annotations

import pytest

from notewell.config import ConfigError, Settings

BASE = {"NOTEWELL_BACKEND": "dynamodb", "NOTEWELL_TABLE": "notes"}


def test_the_stack_settings_are_read() -> None:
    settings = Settings.from_env(
        BASE | {"NOTEWELL_SEARCH_ENDPOINT": "https://abc123.eu-west-1.aoss.amazonaws.com/",
                "NOTEWELL_EMBEDDER": "bedrock", "NOTEWELL_EMBED_DIMENSIONS": "512"}
    )  # fmt: skip
    assert settings.search_endpoint == "https://abc123.eu-west-1.aoss.amazonaws.com"
    assert (settings.embedder, settings.embed_model, settings.embed_dimensions) == (
        "bedrock", "amazon.titan-embed-text-v2:0", 512,
    )  # fmt: skip
    assert Settings.from_env(BASE | {"NOTEWELL_SEARCH_ENDPOINT": ""}).search_endpoint is None  # SearchBackend none


@pytest.mark.parametrize(
    ("name", "value", "named"),
    [
        ("NOTEWELL_SEARCH_ENDPOINT", "http://abc.aoss.amazonaws.com", "NOTEWELL_SEARCH_ENDPOINT"),  # not TLS
        ("NOTEWELL_SEARCH_ENDPOINT", "https://abc.aoss.amazonaws.com/notes", "NOTEWELL_SEARCH_ENDPOINT"),  # a path
        ("NOTEWELL_EMBED_DIMENSIONS", "768", "NOTEWELL_EMBED_DIMENSIONS"),
        ("NOTEWELL_EMBEDDER", "titan", "NOTEWELL_EMBEDDER"),
    ],
)
def test_a_wrong_search_setting_names_itself(name: str, value: str, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        Settings.from_env(BASE | {name: value})
