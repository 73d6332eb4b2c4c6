"""Errors a caller can act on. Each carries an HTTP-like `status` and a stable `code`.

    NotewellError
    ├── InvalidArgumentError          400  bad_argument
    │   └── InvalidCursorError        400  invalid_cursor
    ├── UnauthenticatedError          401  unauthenticated
    ├── ForbiddenError                403  forbidden
    ├── NotFoundError                 404  not_found
    ├── VersionConflictError          409  version_conflict
    ├── AlreadyExistsError            409  already_exists
    ├── TooLargeError                 413  too_large
    ├── UnprocessableError            422  unprocessable
    │   ├── PatchTargetMissingError   422  patch_target_missing
    │   └── IdempotencyKeyReusedError 422  idempotency_key_reused
    ├── QuotaExceededError            429  quota_exceeded
    ├── UnavailableError              503  unavailable
    └── OutcomeUnknownError           503  outcome_unknown

Messages are one sentence that says what to do next; entrypoints show them verbatim.
"""

from __future__ import annotations


class NotewellError(Exception):
    status: int = 500
    code: str = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def details(self) -> dict[str, object]:
        """Extra structured fields for the wire error (beyond status, code, message)."""
        return {}


class InvalidArgumentError(NotewellError):
    status = 400
    code = "bad_argument"


class InvalidCursorError(InvalidArgumentError):
    code = "invalid_cursor"


class UnauthenticatedError(NotewellError):
    status = 401
    code = "unauthenticated"


class ForbiddenError(NotewellError):
    status = 403
    code = "forbidden"


class NotFoundError(NotewellError):
    status = 404
    code = "not_found"


class VersionConflictError(NotewellError):
    status = 409
    code = "version_conflict"

    def __init__(self, note_id: str, expected: int, current: int) -> None:
        # The wording is fixed by the contract (design.md §2).
        super().__init__(
            f"This note changed since you loaded it (you have v{expected}, current is v{current}). "
            "Reload and reapply your edit."
        )
        self.note_id = note_id
        self.expected = expected
        self.current = current

    def details(self) -> dict[str, object]:
        return {"id": self.note_id, "expectedVersion": self.expected, "currentVersion": self.current}


class AlreadyExistsError(NotewellError):
    status = 409
    code = "already_exists"


class TooLargeError(NotewellError):
    status = 413
    code = "too_large"


class UnprocessableError(NotewellError):
    status = 422
    code = "unprocessable"


class PatchTargetMissingError(UnprocessableError):
    code = "patch_target_missing"


class IdempotencyKeyReusedError(UnprocessableError):
    code = "idempotency_key_reused"


class QuotaExceededError(NotewellError):
    status = 429
    code = "quota_exceeded"

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    def details(self) -> dict[str, object]:
        return {} if self.retry_after is None else {"retryAfter": self.retry_after}


class UnavailableError(NotewellError):
    status = 503
    code = "unavailable"

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    def details(self) -> dict[str, object]:
        return {"retryAfter": self.retry_after}


class OutcomeUnknownError(NotewellError):
    """A write that may or may not have been applied: its reply was lost and checking it failed too.

    Not an UnavailableError: "busy, retry" would invite a blind retry, which writes twice without an
    idempotency key.
    """

    status = 503
    code = "outcome_unknown"

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    def details(self) -> dict[str, object]:
        return {"retryAfter": self.retry_after}
