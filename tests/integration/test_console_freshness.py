"""The console's freshness view, on both stores, through the app `notewell serve` runs: a person sees the anchored
notes whose code changed or went at their last check (title, id, verdict, the stale files, when it was found, what
to do) and how many are fresh or not checked; an edit takes a note off the list; the view keeps to the key's
workspace and project, and answers broken input with a page or a 4xx."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.model import Anchor, NoteType, Principal
from notewell.ports import Store
from notewell.services.notes import NoteChanges
from tests.integration.test_console_fuzz import REQUESTS_PER_ROUTE, SERVE, Route, fuzzing, generate
from tests.support.console import console
from tests.support.mcp_harness import Keys, make_keys

pytestmark = pytest.mark.anyio
COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"
RECHECK = "What to do: re-check the note against the code, then update or re-anchor it"


def digest(n: int) -> str:
    return f"{n:064x}"


def anchor(path: str, n: int) -> Anchor:
    return Anchor("github.com/acme/api", path, COMMIT, digest(n + 1000), digest(n))


@pytest.fixture
def keys(services: Services) -> Keys:
    return make_keys(services)


def writer(services: Services, keys: Keys) -> Principal:
    principal = services.auth.authenticate(keys.full)
    assert principal is not None
    return principal


def rows(html: str) -> list[tuple[str, str, str]]:
    """(note link, verdict, files) of each row of the to-re-check table."""
    found = re.findall(r'<tr><td><a href="(/console/n/\w+)">.*?</td><td class="verdict">(\w+)</td><td>(.*?)</td>', html)
    return [(link, verdict, re.sub(r"<[^>]+>", " ", files).split()[0]) for link, verdict, files in found]


async def test_a_person_sees_which_anchored_notes_to_re_check_and_how_the_others_stand(
    services: Services, keys: Keys
) -> None:
    me = writer(services, keys)
    notes = services.notes
    changed = notes.create(me, "alpha", title="Retries <b>back</b> off", body="Backoff doubles.",
                           type=NoteType.DECISION, anchors=[anchor("src/retry.py", 1)]).note  # fmt: skip
    gone = notes.create(
        me, "alpha", title="Old queue drained", body="Drain first.", anchors=[anchor("src/q.py", 2)]
    ).note
    notes.create(me, "alpha", title="Tokens opaque", body="Opaque tokens.", anchors=[anchor("src/tokens.py", 3)])
    notes.create(me, "alpha", title="Docs nightly", body="Built nightly.", anchors=[anchor("docs/build.md", 4)])
    notes.create(me, "alpha", title="Logs are JSON", body="JSON logs.")
    # An agent's session judges the files it has: the code of two notes changed or went.
    hashes = {"src/retry.py": digest(99), "src/q.py": None, "src/tokens.py": digest(3)}
    services.context.get_context(me, "alpha", check_freshness=hashes)

    async with console(services, keys.full) as browser:
        project = await browser.get("/console/p/alpha")
        assert "/console/p/alpha/freshness" in project.parsed.links
        page = await browser.get("/console/p/alpha/freshness")
        assert page.status == 200 and "Freshness of alpha" in page.text
        assert rows(page.html) == [(f"/console/n/{gone.id}", "gone", "src/q.py"),
                                   (f"/console/n/{changed.id}", "changed", "src/retry.py")]  # fmt: skip
        assert "To re-check (2)" in page.text and page.text.count(RECHECK) == 1
        assert changed.id in page.text and gone.id in page.text and page.html.count("<time datetime=") == 2
        assert "Retries &lt;b&gt;back&lt;/b&gt; off" in page.html  # an agent's text stays text
        assert (
            "4 anchored notes: 2 to re-check, 1 fresh, 0 moved (the same code, elsewhere), 1 not checked since "
            "their last edit." in page.text
        )
        notes.update(me, changed.id, NoteChanges(body="Backoff doubles, up to 60 s."))  # someone re-checked it
        after = await browser.get("/console/p/alpha/freshness")
        assert rows(after.html) == [(f"/console/n/{gone.id}", "gone", "src/q.py")]
        assert "1 to re-check, 1 fresh, 0 moved (the same code, elsewhere), 2 not checked" in after.text
        empty = await browser.get("/console/p/beta/freshness")
        assert empty.status == 404  # no such project yet
        notes.create(me, "beta", title="Plain", body="No anchors.")
        empty = await browser.get("/console/p/beta/freshness")
        assert "To re-check (0)" in empty.text and "No note of this project is anchored to code yet." in empty.text
        usage = await browser.get("/console/usage")
        assert "console:freshness" in usage.text


async def test_the_freshness_view_keeps_to_the_keys_workspace_and_project(services: Services, keys: Keys) -> None:
    me = writer(services, keys)
    hidden = services.notes.create(me, "secret", title="Hidden plan", body="b", anchors=[anchor("src/s.py", 5)]).note
    services.notes.create(me, "alpha", title="Visible", body="b", anchors=[anchor("src/a.py", 6)])
    services.context.get_context(me, "secret", check_freshness={"src/s.py": None})
    services.context.get_context(me, "alpha", check_freshness={"src/a.py": None})
    async with console(services, keys.scoped) as scoped:  # a key of project alpha only
        refused = await scoped.get("/console/p/secret/freshness")
        assert refused.status == 404 and "Hidden plan" not in refused.text and hidden.id not in refused.text
        assert (await scoped.get("/console/p/alpha/freshness")).status == 200
    async with console(services, keys.other_workspace) as rival:
        for slug in ("alpha", "secret"):
            page = await rival.get(f"/console/p/{slug}/freshness")
            assert page.status == 404 and "Visible" not in page.text and "Hidden" not in page.text
    async with console(services, keys.read_only) as reader:
        page = await reader.get("/console/p/secret/freshness")
        assert page.status == 200 and rows(page.html) == [(f"/console/n/{hidden.id}", "gone", "src/s.py")]
        assert page.writing_forms == []


def test_the_freshness_view_answers_generated_and_broken_input_with_a_page_or_a_4xx(
    store: Store, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    kind = request.node.callspec.params["store"]
    services = bootstrap(Settings(data_dir=tmp_path, issuer=SERVE), store=store)
    route = Route("GET", "/console/p/{project}/freshness", ("done",))
    with fuzzing(services) as run:
        generate(REQUESTS_PER_ROUTE[kind], functools.partial(run.step, route))
    assert run.by_route["GET /console/p/{project}/freshness"] >= REQUESTS_PER_ROUTE[kind]
    assert run.outcomes["4xx"] > 0 and run.outcomes["2xx"] > 0, run.outcomes
