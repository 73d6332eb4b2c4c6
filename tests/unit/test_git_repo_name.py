"""The repository name anchors carry: the same for every clone of a repository, and never a credential."""

from __future__ import annotations

from pathlib import Path

import pytest

from notewell.adapters.git_tree import repo_name
from notewell.domain import rules
from notewell.domain.model import Anchor

TOP = Path("/home/me/work/billing-api")


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/billing-api.git",
        "https://github.com/acme/billing-api",
        "https://me:ghp_secret@GitHub.com/acme/billing-api.git",
        "ssh://git@github.com:22/acme/billing-api.git",
    ],
)
def test_every_clone_url_of_a_repository_gives_one_name_without_user_password_or_port(url: str) -> None:
    name = repo_name(url, TOP)
    assert name == "github.com/acme/billing-api"
    assert "secret" not in name


def test_a_repository_without_a_remote_or_with_a_local_one_is_named_by_its_directory() -> None:
    assert repo_name(None, TOP) == "billing-api"
    assert repo_name("/srv/git/payments.git", TOP) == "payments"
    assert repo_name("file:///srv/git/payments.git", TOP) == "payments"


def test_a_name_is_always_one_the_anchor_rules_accept() -> None:
    for url in ["https://host/a b/c~d.git", "weird@@host:/../x", "", "https://host/../../etc"]:
        name = repo_name(url, Path("/tmp/my repo!"))
        anchor = Anchor(name, "a.py", "0" * 40, "0" * 64, "0" * 64)
        assert rules.check_anchor(anchor).repo == name
