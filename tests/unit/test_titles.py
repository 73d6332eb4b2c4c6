"""A note's title when the writer gave none reads as the writer wrote it: identifiers intact, Markdown gone."""

from __future__ import annotations

from notewell.domain.titles import derive_title


def test_a_derived_title_keeps_the_underscores_of_identifiers_and_drops_emphasis() -> None:
    assert (
        derive_title("Builds target x86_64 only; arm64 is not tested.")
        == "Builds target x86_64 only; arm64 is not tested"
    )
    assert (
        derive_title("Set max_retries to 5 for the **payments** client.")
        == "Set max_retries to 5 for the payments client"
    )
    assert derive_title("_Important_: never call the bank API in a handler") == (
        "Important: never call the bank API in a handler"
    )


def test_a_derived_title_takes_code_spans_as_written_and_skips_a_fence_line() -> None:
    assert derive_title("## Export from `__init__.py` only") == "Export from __init__.py only"
    assert derive_title("```python\nRetries live in client.py") == "Retries live in client.py"


def test_a_derived_title_starting_with_a_file_name_keeps_its_case() -> None:
    assert derive_title("app.py prints x at start: the smoke test greps for it.") == (
        "app.py prints x at start: the smoke test greps for it"
    )
    assert derive_title("k8s manifests live in deploy/") == "k8s manifests live in deploy/"
    assert derive_title("deploys go to staging first") == "Deploys go to staging first"
