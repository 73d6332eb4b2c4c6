"""The web console as a person uses it, on both stores: sign in with a key, read what the agents remember, and tend
it (settle a conflict, edit with a stale page, supersede, delete and restore), with the same tenant rules as MCP.
Requests go through the app `notewell serve` runs; the browser tests drive the same pages in Chromium."""

from __future__ import annotations

import re

import pytest

from notewell.bootstrap import Services
from notewell.domain.model import NoteStatus, NoteType
from notewell.domain.refs import note_ref
from notewell.services.notes import NoteChanges
from tests.support.console import console
from tests.support.mcp_harness import Keys, make_keys

pytestmark = pytest.mark.anyio


@pytest.fixture
def keys(services: Services) -> Keys:
    return make_keys(services)


def writer(services: Services, keys: Keys):  # type: ignore[no-untyped-def]
    principal = services.auth.authenticate(keys.full)
    assert principal is not None
    return principal


async def test_a_person_signs_in_with_a_key_and_sees_the_projects_with_counts(services: Services, keys: Keys) -> None:
    me = writer(services, keys)
    services.notes.create(me, "alpha", title="Use SAM", body="We deploy with SAM.", type=NoteType.DECISION)
    services.notes.create(me, "alpha", title="Retry writes", body="Retry throttled writes.")
    services.notes.create(me, "beta", title="Beta note", body="Something else.")
    async with console(services) as browser:
        first = await browser.get("/")
        assert first.status == 200 and "Sign in to the Notewell console" in first.text
        assert first.parsed.forms[0].fields.keys() >= {"csrf", "api_key"}
        wrong = await browser.submit(first.form("Sign in"), api_key="nwk_not-a-key")
        assert wrong.status_code == 401 and "unknown or revoked" in wrong.text
        signed = await browser.sign_in(keys.full)
        assert signed.status_code == 303 and signed.headers["location"] == "/"
        assert (
            "httponly" in signed.headers["set-cookie"].lower()
            and "samesite=strict" in signed.headers["set-cookie"].lower()
        )
        home = await browser.get("/")
    assert home.status == 200
    rows = re.findall(r'<th scope="row"><a href="/console/p/(\w+)"><bdi>\w+</bdi></a></th><td>(\d+)</td>', home.html)
    assert rows == [("alpha", "2"), ("beta", "1")]
    assert "Signed in with key full" in home.text


async def test_every_page_forbids_framing_scripts_and_caching(services: Services, keys: Keys) -> None:
    me = writer(services, keys)
    note = services.notes.create(me, "alpha", title="A", body="B").note
    paths = ["/", "/console/usage", "/console/p/alpha", "/console/p/alpha/changes", "/console/p/alpha/conflicts",
             "/console/p/alpha/search?q=B", f"/console/n/{note.id}", f"/console/n/{note.id}/edit"]  # fmt: skip
    async with console(services, keys.full) as browser:
        for path in paths:
            page = await browser.get(path)
            policy = page.headers["content-security-policy"]
            assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy, path
            assert "script-src" not in policy and "unsafe-inline" not in policy, path
            assert page.headers["x-frame-options"] == "DENY" and page.headers["cache-control"] == "no-store", path
            assert "script" not in page.parsed.tags, path
            assert not [a for a in page.parsed.attributes if a[1] == "style" or a[1].startswith("on")], path
            unlabelled = [i for i in page.parsed.ids_needing_labels if i not in page.parsed.labels and i != "canonical"]
            assert not [i for i in unlabelled if not i.startswith("<input name=canonical")], (path, unlabelled)
        assert (await browser.get("/console/p/zzz")).status == 404


async def test_a_page_asked_for_before_signing_in_comes_back_after_it_and_never_leaves_the_site(
    services: Services, keys: Keys
) -> None:
    async with console(services) as browser:
        asked = await browser.http.get("/console/usage")
        assert asked.status_code == 303 and asked.headers["location"] == "/console/sign-in?next=%2Fconsole%2Fusage"
        page = await browser.get(asked.headers["location"])
        signed = await browser.http.post(
            "/console/sign-in?next=%2Fconsole%2Fusage", data={**page.form("Sign in").fields, "api_key": keys.full}
        )
        assert signed.headers["location"] == "/console/usage"
        for target in ("//evil.example/", "https://evil.example/", "/console/..//evil", "/\\evil.example"):
            browser.http.cookies.clear()
            again = await browser.get("/console/sign-in")
            response = await browser.http.post(
                "/console/sign-in",
                params={"next": target},
                data={**again.parsed.forms[-1].fields, "api_key": keys.full},
            )
            assert response.headers["location"] in ("/",), target


async def test_a_form_posted_without_the_sessions_token_is_refused_and_changes_nothing(
    services: Services, keys: Keys
) -> None:
    me = writer(services, keys)
    note = services.notes.create(me, "alpha", title="Keep", body="Keep this.").note
    async with console(services, keys.full) as browser:
        page = await browser.get(f"/console/n/{note.id}")
        delete = page.form("Delete")
        forged = await browser.submit(delete, csrf="guessed")
        assert forged.status_code == 403 and "expired" in forged.text
        missing = await browser.http.post(delete.action, data={"action": "delete", "version": "1"})
        assert missing.status_code == 403
        not_a_form = await browser.http.post(delete.action, json=delete.fields)
        assert not_a_form.status_code == 400
    assert services.notes.get(me, note.id).note.version == 1


async def test_a_read_only_key_sees_no_control_that_writes_and_its_posts_are_refused(
    services: Services, keys: Keys
) -> None:
    me = writer(services, keys)
    disputed = services.notes.create(me, "alpha", title="Disputed", body="Maybe.", status=NoteStatus.DISPUTED).note
    async with console(services, keys.full) as full:
        forms = (await full.get(f"/console/n/{disputed.id}")).writing_forms
        assert forms  # the same page offers changes to a read-write key
    async with console(services, keys.read_only) as browser:
        for path in ("/", "/console/p/alpha", "/console/p/alpha/conflicts", f"/console/n/{disputed.id}"):
            page = await browser.get(path)
            assert page.status == 200 and page.writing_forms == [], path
            assert "(read-only)" in page.text
        assert (await browser.get(f"/console/n/{disputed.id}/edit")).status == 403
        session_csrf = (await browser.get("/")).parsed.forms[-1].fields["csrf"]
        for form in forms:
            refused = await browser.submit(form, csrf=session_csrf)
            assert refused.status_code == 403 and "read-only" in refused.text
    assert services.notes.get(me, disputed.id).note.version == 1


async def test_a_project_scoped_key_cannot_reach_another_project_or_its_notes_by_url(
    services: Services, keys: Keys
) -> None:
    me = writer(services, keys)
    alpha = services.notes.create(me, "alpha", title="Alpha", body="In alpha.").note
    hidden = services.notes.create(me, "secret", title="Hidden", body="In another project.").note
    async with console(services, keys.scoped) as browser:
        own = await browser.get(f"/console/n/{alpha.id}")
        assert own.status == 200 and f"by {me.actor}" in own.text and "full (" not in own.text  # no other key names
        home = await browser.get("/")
        assert "/console/p/alpha" in home.parsed.links and "/console/p/secret" not in home.parsed.links
        project = "/console/p/secret"
        for path in (project, f"{project}/changes", f"{project}/conflicts", f"{project}/search?q=hidden",
                     f"/console/n/{hidden.id}", f"/console/n/{hidden.id}/edit"):  # fmt: skip
            page = await browser.get(path)
            assert page.status == 404 and "Hidden" not in page.text and "another project" not in page.text, path
        csrf = home.parsed.forms[-1].fields["csrf"]
        refused = await browser.http.post(f"/console/n/{hidden.id}/resolve", data={"csrf": csrf, "action": "delete"})
        assert refused.status_code == 404
    assert not services.notes.get(me, hidden.id).note.is_deleted
    async with console(services, keys.other_workspace) as rival:
        assert (await rival.get("/console/p/alpha")).status == 404
        assert (await rival.get(f"/console/n/{hidden.id}")).status == 404


async def test_a_note_opens_by_the_ref_an_agent_named_it_by_and_shows_that_ref(services: Services, keys: Keys) -> None:
    me = writer(services, keys)
    alpha = services.notes.create(me, "alpha", title="Retry cap", body="Retries are capped at 3.").note
    hidden = services.notes.create(me, "secret", title="Hidden", body="In another project.").note
    ref = note_ref(alpha.id)
    assert ref is not None
    async with console(services, keys.scoped) as browser:
        page = await browser.get(f"/console/n/{ref.lower()}")  # as a person copies it out of an agent's answer
        assert page.status == 200 and "Retries are capped at 3." in page.text and f"ref {ref}" in page.text
        assert f"/console/n/{alpha.id}/resolve" in [form.action for form in page.writing_forms]
        refused = await browser.get(f"/console/n/{note_ref(hidden.id)}")
        assert refused.status == 404 and "another project" not in refused.text


async def test_settling_a_conflict_from_the_conflicts_page_records_the_person_as_author(
    services: Services, keys: Keys
) -> None:
    me = writer(services, keys)
    keep = services.notes.create(me, "alpha", title="Postgres 16", body="We use PG16.", status=NoteStatus.DISPUTED).note
    drop = services.notes.create(me, "alpha", title="MySQL 8", body="We use MySQL.", status=NoteStatus.DISPUTED).note
    async with console(services, keys.full) as browser:
        page = await browser.get("/console/p/alpha/conflicts")
        assert "Conflicts (2)" in page.text
        keep_form = next(f for f in page.writing_forms if f.action == f"/console/n/{keep.id}/resolve"
                         and f.fields["action"] == "confirm")  # fmt: skip
        drop_form = next(f for f in page.writing_forms if f.action == f"/console/n/{drop.id}/resolve"
                         and f.fields["action"] == "retire")  # fmt: skip
        assert (await browser.submit(keep_form)).status_code == 303
        done = await browser.submit(drop_form)
        assert done.status_code == 303
        shown = await browser.get(done.headers["location"])
        assert "Marked historical." in shown.text
        assert "None open." in (await browser.get("/console/p/alpha/conflicts")).text
    kept, dropped = services.notes.get(me, keep.id).note, services.notes.get(me, drop.id).note
    assert (kept.status, dropped.status) == (NoteStatus.CURRENT, NoteStatus.HISTORICAL)
    assert kept.author == dropped.author == me.actor


async def test_a_button_pressed_on_a_stale_page_is_refused_and_undoes_nothing(services: Services, keys: Keys) -> None:
    me = writer(services, keys)
    note = services.notes.create(me, "alpha", title="Disputed", body="Maybe.", status=NoteStatus.DISPUTED).note
    async with console(services, keys.full) as browser:
        page = await browser.get(f"/console/n/{note.id}")
        services.notes.update(me, note.id, NoteChanges(status=NoteStatus.HISTORICAL))  # an agent settles it first
        stale = await browser.submit(page.form("Keep it: mark current"))
        assert stale.status_code == 409 and "you have v1, current is v2" in stale.text
    assert services.notes.get(me, note.id).note.status is NoteStatus.HISTORICAL


async def test_a_stale_edit_shows_the_other_change_and_saving_again_applies_the_merge(
    services: Services, keys: Keys
) -> None:
    me = writer(services, keys)
    note = services.notes.create(me, "alpha", title="Deploys", body="We deploy with SAM.\nOn Fridays.").note
    async with console(services, keys.full) as browser:
        form = (await browser.get(f"/console/n/{note.id}/edit")).form("Save as v2")
        assert form.fields["body"] == "We deploy with SAM.\nOn Fridays." and form.fields["version"] == "1"
        services.notes.update(me, note.id, NoteChanges(body="We deploy with SAM.\nNever on Fridays."))  # an agent
        response = await browser.submit(form, body="We deploy with SAM and CDK.\nOn Fridays.")
        assert response.status_code == 409
        page = await browser.get(f"/console/n/{note.id}")  # nothing of the person's was saved
        assert "Never on Fridays." in page.text and "SAM and CDK" not in page.text  # (a ULID may hold "CDK")
        from tests.support.console import parse

        conflict = parse(response)
        assert "you started from v1, current is v2" in conflict.text
        assert "The other change (v1 → v2" in conflict.text and "+Never on Fridays." in conflict.text
        merge = conflict.form("Save as v3")
        assert merge.fields["version"] == "2" and "CDK" in merge.fields["body"]
        saved = await browser.submit(merge, body="We deploy with SAM and CDK.\nNever on Fridays.")
        assert saved.status_code == 303
    final = services.notes.get(me, note.id).note
    assert (final.version, final.body) == (3, "We deploy with SAM and CDK.\nNever on Fridays.")
    assert services.notes.revision(me, note.id, 2).body == "We deploy with SAM.\nNever on Fridays."


async def test_an_edit_with_bad_values_shows_the_form_again_with_the_reason_and_writes_nothing(
    services: Services, keys: Keys
) -> None:
    me = writer(services, keys)
    note = services.notes.create(me, "alpha", title="T", body="B").note
    async with console(services, keys.full) as browser:
        form = (await browser.get(f"/console/n/{note.id}/edit")).form("Save as v2")
        refused = await browser.submit(form, title="", body="kept text")
        assert refused.status_code == 400 and "kept text" in refused.text
    assert services.notes.get(me, note.id).note.version == 1


async def test_supersede_delete_and_restore_from_a_notes_page(services: Services, keys: Keys) -> None:
    me = writer(services, keys)
    old = services.notes.create(me, "alpha", title="Vercel", body="We deploy the frontend to Vercel.").note
    new = services.notes.create(me, "alpha", title="Netlify", body="We deploy the frontend to Netlify.").note
    async with console(services, keys.full) as browser:
        page = await browser.get(f"/console/n/{old.id}")
        assert (await browser.submit(page.form("Supersede"), by=note_ref(new.id))).status_code == 303  # as shown
        old_page = await browser.get(f"/console/n/{old.id}")
        assert "superseded" in old_page.text and f"/console/n/{new.id}" in old_page.parsed.links
        assert "Replaced by Netlify" in old_page.text
        new_page = await browser.get(f"/console/n/{new.id}")
        assert "Replaces Vercel" in new_page.text
        deleted = await browser.submit(new_page.form("Delete"))
        assert deleted.status_code == 303
        gone = await browser.get(f"/console/n/{new.id}")
        assert "Deleted" in gone.text and [f.buttons for f in gone.writing_forms] == [["Restore"]]
        assert (await browser.submit(gone.form("Restore"))).status_code == 303
    assert not services.notes.get(me, new.id).note.is_deleted
    assert services.notes.get(me, old.id).note.status is NoteStatus.SUPERSEDED


async def test_the_timeline_filters_changes_by_type_status_and_author(services: Services, keys: Keys) -> None:
    me = writer(services, keys)
    other = services.auth.create_key(keys.workspace, name="bot").secret
    bot = services.auth.authenticate(other)
    assert bot is not None
    services.notes.create(me, "alpha", title="Mine decision", body="d", type=NoteType.DECISION)
    services.notes.create(bot, "alpha", title="Bot decision", body="d", type=NoteType.DECISION)
    services.notes.create(bot, "alpha", title="Bot task", body="t", type=NoteType.TASK, status=NoteStatus.PENDING)
    async with console(services, keys.full) as browser:
        everything = await browser.get("/console/p/alpha/changes?since=all")
        assert all(t in everything.text for t in ("Mine decision", "Bot decision", "Bot task"))
        assert "bot (…" in everything.text and "full (…" in everything.text  # keys by the names people gave them
        decisions = await browser.get("/console/p/alpha/changes?since=all&type=decision")
        assert "Bot task" not in decisions.text and "Mine decision" in decisions.text
        pending = await browser.get("/console/p/alpha/changes?since=all&status=pending")
        assert "Bot task" in pending.text and "Mine decision" not in pending.text and "Bot decision" not in pending.text
        by_bot = await browser.get(f"/console/p/alpha/changes?since=all&author={bot.actor}")
        assert "Mine decision" not in by_bot.text and "Bot decision" in by_bot.text
        assert (await browser.get("/console/p/alpha/changes?since=forever")).status == 400


async def test_search_and_the_current_state_show_what_an_agent_would_see(services: Services, keys: Keys) -> None:
    me = writer(services, keys)
    services.notes.create(me, "alpha", title="Database", body="Orders live in PostgreSQL 16.", type=NoteType.DECISION)
    services.notes.create(me, "alpha", title="No ORMs", body="Plain SQL only.", type=NoteType.CONSTRAINT)
    async with console(services, keys.full) as browser:
        state = await browser.get("/console/p/alpha")
        assert state.text.index("Constraints") < state.text.index("No ORMs") < state.text.index("Decisions")
        assert "What an agent sees first (get_context)" in state.text
        found = await browser.get("/console/p/alpha/search?q=postgresql")
        assert "Database" in found.text and "1 found by" in found.text
        none = await browser.get("/console/p/alpha/search?q=kubernetes")
        assert "0 found by" in none.text


async def test_console_pages_are_metered_and_a_suspended_workspace_is_refused(services: Services, keys: Keys) -> None:
    me = writer(services, keys)
    services.notes.create(me, "alpha", title="T", body="B")
    async with console(services, keys.full) as browser:
        await browser.get("/console/p/alpha")
        usage = await browser.get("/console/usage")
        assert "console:project" in usage.text
        services.workspaces.suspend(keys.workspace)
        refused = await browser.get("/console/p/alpha")
        assert refused.status == 403 and "suspended" in refused.text
    report = services.workspaces.usage(me)
    # Counted as tool calls are: the refused page too, a call refused for the quota would not be.
    assert report.calls_by_tool == {"console:project": 2, "console:usage": 1}


async def test_revoking_the_key_or_signing_out_ends_the_session(services: Services, keys: Keys) -> None:
    async with console(services, keys.full) as browser:
        home = await browser.get("/")
        assert "Projects" in home.text
        out = await browser.submit(home.form("Sign out"))
        assert out.status_code == 303 and "max-age=0" in out.headers["set-cookie"].lower()
        assert "Sign in to the Notewell console" in (await browser.get("/")).text
        await browser.sign_in(keys.full)
        assert (await browser.get("/console/usage")).status == 200
        key_id = next(k.id for k in services.auth.list_keys(keys.workspace) if k.name == "full")
        services.auth.revoke_key(keys.workspace, key_id)
        after = await browser.http.get("/console/usage")
        assert after.status_code == 303 and after.headers["location"].startswith("/console/sign-in")
