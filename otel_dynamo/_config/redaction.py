"""Secrets out of text otel_dynamo writes: the one redaction, applied where text leaves.

Known values (OTLP header values, the endpoints' user-info and query values) and
anything shaped like a secret in a URL (``user:password@host``, ``user@`` after ``//``,
the values of a path's query string: ``/v1/metrics?api_key=***``) become ``***``. It
runs on our own messages (configuration problems, export warnings), on library text we
quote or relay (exporter errors, SDK log records), on every string of the structured log
lines (``OTEL_DYNAMO_LOG``), and at the exporters on every string of every span and log
record, so exception messages recorded on spans are covered too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "***"
MIN_SECRET_LENGTH = 6
"""Known values shorter than this are not replaced wherever they appear (a value like
"1" or "json" would garble every text); shapes still catch them in URLs."""

_USER_INFO = re.compile(
    r"(?<=//)[^/?#\s]{0,512}@"  # after a scheme: any user-info, to its last @
    r"|(?<![\w.%+-])[\w.%+-]{1,256}:[^\s/@]{0,256}@(?=[\w\[])"  # user:password@host bare
)
_URL_QUERY = re.compile(r"(/[^\s?#]*\?)([^\s#\"'<>]*)")
"""A path and its query string (``/v1/metrics?api_key=...&x=1``)."""
_QUERY_VALUE = re.compile(r"([^=&;]*)=[^&;]*")
_MARKS = ("@", "?")
"""Text without any of these (or a known value) has no shaped secret: left as it is."""


class Redactor:
    """Replaces secrets in text by ``***``: known values, and URL shapes."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret containing another is replaced whole.
        found = {s for s in secrets if len(s) >= MIN_SECRET_LENGTH}
        self._secrets = sorted(found, key=len, reverse=True)

    def finds(self, text: str) -> bool:
        """Whether ``text`` may hold something to redact (a cheap test before ``__call__``)."""
        return any(mark in text for mark in _MARKS) or any(s in text for s in self._secrets)

    def __call__(self, text: str) -> str:
        if not self.finds(text):
            return text
        text = _USER_INFO.sub(f"{REDACTED}@", text)
        text = _URL_QUERY.sub(lambda m: m[1] + _QUERY_VALUE.sub(rf"\1={REDACTED}", m[2]), text)
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text


REDACT_SHAPES = Redactor()
"""Redaction by shape only, where no secret values are known."""


def redacted_url(url: str) -> str:
    """The URL to print: user-info and query values replaced by ``***`` (text that is not
    a valid URL too)."""
    return REDACT_SHAPES(url)
