"""API keys: issued once, stored hashed, scoped to a workspace and optionally one project or read-only."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell.domain import rules
from notewell.domain.errors import InvalidArgumentError, NotFoundError
from notewell.domain.model import ApiKey, Plan, Principal, Project, Workspace
from notewell.domain.plans import limits_for
from notewell.ports import AuthRecords
from notewell.services.oauth import revoke_grants_of_key

if TYPE_CHECKING:
    from notewell.services.access import Deps

KEY_PREFIX = "nwk_"
SCOPE_READ = "notes:read"
SCOPE_WRITE = "notes:write"


def hash_secret(secret: str) -> str:
    # Secrets are 256-bit random strings, so a fast unsalted hash is enough: there is nothing to brute-force.
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class IssuedKey:
    key: ApiKey
    secret: str  # shown once, never stored
    project: str | None


class AuthService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    def authenticate(self, token: str) -> Principal | None:
        """The principal behind a bearer token, or None for an unknown, malformed or revoked one."""
        if not token.startswith(KEY_PREFIX) or len(token) > 200:
            return None
        key = self._deps.store.find_key(hash_secret(token))
        if key is None or key.revoked_at is not None:
            return None
        if not hmac.compare_digest(key.secret_hash, hash_secret(token)):
            return None
        return self.principal_of(key)

    @staticmethod
    def principal_of(key: ApiKey) -> Principal:
        """Who acts with `key` (live: the caller has checked it is not revoked)."""
        scopes = {SCOPE_READ} if key.read_only else {SCOPE_READ, SCOPE_WRITE}
        return Principal(
            workspace_id=key.workspace_id,
            actor=f"key:{key.id}",
            project_id=key.project_id,
            read_only=key.read_only,
            scopes=frozenset(scopes),
        )

    def create_workspace(self, name: str, plan: Plan = Plan.FREE) -> Workspace:
        workspace = Workspace(
            id=self._deps.ids.new_id("ws"),
            name=name.strip() or "workspace",
            created_at=rules.format_ts(self._deps.clock.now()),
            plan=plan,
            revision_cap=limits_for(plan).revisions_per_note,
        )
        self._deps.store.create_workspace(workspace)
        return workspace

    def default_workspace(self, name: str = "local", plan: Plan = Plan.FREE) -> tuple[Workspace, bool]:
        """The only workspace of a single-tenant store, created (on `plan`) when none exists yet (True when created)."""
        workspaces = self._deps.store.list_workspaces()
        if len(workspaces) > 1:
            raise InvalidArgumentError(
                "This store holds several workspaces; name one with --workspace (see 'notewell keys list')."
            )
        if workspaces:
            return workspaces[0], False
        return self.create_workspace(name, plan), True

    def create_key(
        self, workspace_id: str, *, name: str = "", project: str | None = None, read_only: bool = False
    ) -> IssuedKey:
        if self._deps.store.get_workspace(workspace_id) is None:
            raise NotFoundError(f"No workspace {workspace_id}; 'notewell keys list' shows the workspace id.")
        project_id = None
        if project is not None:
            project_id = self._project(workspace_id, project).id
        secret = KEY_PREFIX + self._deps.ids.secret()
        key = ApiKey(
            id=self._deps.ids.new_id("key"),
            workspace_id=workspace_id,
            name=name.strip(),
            secret_hash=hash_secret(secret),
            created_at=rules.format_ts(self._deps.clock.now()),
            project_id=project_id,
            read_only=read_only,
            hint=secret[-4:],
        )
        self._deps.store.put_key(key)
        return IssuedKey(key, secret, project)

    def list_keys(self, workspace_id: str) -> list[ApiKey]:
        return sorted(self._deps.store.list_keys(workspace_id), key=lambda k: k.created_at)

    def revoke_key(self, workspace_id: str, key_id: str) -> ApiKey:
        revoked = self._deps.store.revoke_key(workspace_id, key_id, rules.format_ts(self._deps.clock.now()))
        if revoked is None:
            raise NotFoundError(f"No key {key_id} in this workspace; 'notewell keys list' shows the key ids.")
        if isinstance(self._deps.store, AuthRecords):  # the OAuth grants it approved end with it
            revoke_grants_of_key(self._deps.store, workspace_id, key_id)
        return revoked

    def project_slug(self, workspace_id: str, project_id: str | None) -> str | None:
        if project_id is None:
            return None
        project = self._deps.store.get_project_by_id(workspace_id, project_id)
        return project.slug if project else project_id

    def _project(self, workspace_id: str, slug: str) -> Project:
        rules.check_project_slug(slug)
        existing = self._deps.store.get_project(workspace_id, slug)
        if existing is not None:
            return existing
        now = rules.format_ts(self._deps.clock.now())
        return self._deps.store.create_project(
            Project(
                id=self._deps.ids.new_id("prj"), workspace_id=workspace_id, slug=slug, created_at=now, updated_at=now
            )
        )
