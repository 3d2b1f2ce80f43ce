"""What the server's error bodies become: one exception, carrying the API's code."""

from __future__ import annotations

from typing import Any


class OctopusError(Exception):
    """The server refused a request, or failed it.

    ``code`` is the API's stable error code (``agent_not_found``,
    ``invalid_request``, ...), ``field`` the offending field's path when the
    server names one, and ``status`` the HTTP status (0 when the error came
    inside a stream that had already begun with 200).
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        field: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}" + (f" ({field})" if field else ""))
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.body = body

    @classmethod
    def from_body(cls, status: int, body: Any, fallback: str) -> OctopusError:
        """From an error body, ``{"error": {"code", "message", "field"}}``;
        a body of any other shape keeps its text in the message."""
        detail = body.get("error") if isinstance(body, dict) else None
        if isinstance(detail, dict) and isinstance(detail.get("code"), str):
            return cls(
                status,
                detail["code"],
                str(detail.get("message", "")),
                detail.get("field"),
                body,
            )
        return cls(status, "unexpected_response", fallback, None, body)
