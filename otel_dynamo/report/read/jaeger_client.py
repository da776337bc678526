"""The HTTP side of reading Jaeger: GET JSON from its query API, every failure one
``JaegerError`` that names the address and never a credential.

Its own module, imported only when a Jaeger address is read: the report of files never
loads the standard library's HTTP, TLS and e-mail parsing machinery.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping

from otel_dynamo.report.read.jaeger import (
    DEFAULT_TIMEOUT_S,
    ENV_CERTIFICATE,
    ENV_CLIENT_CERTIFICATE,
    ENV_CLIENT_KEY,
    ENV_HEADERS,
    ENV_TIMEOUT,
    MAX_ANSWER_BYTES,
    MAX_ERROR_BYTES,
    PARAM_LIMIT,
    JaegerAddress,
    JaegerError,
    JaegerSettings,
)

_NO_TRACES = "No traces found"
"""api_v3's message in its 404 when nothing matched: an empty slice, not a failure."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect stays the HTTP error it is (``_http_problem`` says so)."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class Client:
    """GETs JSON from the query API; every failure becomes one ``JaegerError``."""

    def __init__(self, address: JaegerAddress, settings: JaegerSettings) -> None:
        self._address = address
        self._settings = settings
        self._secrets = settings.secrets()
        # No redirect is followed: it would carry the headers (credentials) elsewhere, and
        # a query API that redirects is a login page's, not Jaeger's.
        handlers: list[urllib.request.BaseHandler] = [_NoRedirects()]
        if address.base.startswith("https:"):
            handlers.append(urllib.request.HTTPSHandler(context=self._tls()))
        self._opener = urllib.request.build_opener(*handlers)
        self.queries = 0

    def _tls(self) -> ssl.SSLContext:
        settings = self._settings
        try:
            context = ssl.create_default_context(cafile=settings.certificate)
            if settings.client_certificate is not None:
                context.load_cert_chain(settings.client_certificate, settings.client_key)
        except (ssl.SSLError, OSError) as failed:
            variable = ENV_CERTIFICATE
            if settings.client_certificate is not None and "cert" not in str(failed).lower():
                variable = ENV_CLIENT_CERTIFICATE
            raise JaegerError(
                f"cannot use the TLS files {ENV_CERTIFICATE}/{ENV_CLIENT_CERTIFICATE}/"
                f"{ENV_CLIENT_KEY} ({variable}?): {_reason(failed)}"
            ) from None
        return context

    def get(self, path: str, query: Mapping[str, str]) -> object | None:
        """The JSON answer of ``path``; None where Jaeger says it found no traces."""
        url = f"{self._address.base}{path}?{urllib.parse.urlencode(query)}"
        request = urllib.request.Request(url, headers=dict(self._settings.headers))
        request.add_header("Accept", "application/json")
        self.queries += 1
        try:
            with self._opener.open(request, timeout=self._settings.timeout_s) as response:
                body = response.read(MAX_ANSWER_BYTES + 1)
                content_type = response.headers.get_content_type()
        except urllib.error.HTTPError as failed:
            body = _read_error(failed)
            if failed.code == 404 and _no_traces(body):
                return None
            raise self.error(_http_problem(failed.code, failed.reason, body)) from None
        except urllib.error.URLError as failed:
            raise self.error(self._unreachable(failed.reason)) from None
        except TimeoutError:
            raise self.error(self._slow()) from None
        except ssl.SSLError as failed:  # after the handshake: a client certificate refused
            raise self.error(self._unreachable(failed)) from None
        except (http.client.HTTPException, OSError) as failed:
            raise self.error(f"the connection failed: {_reason(failed)}") from None
        if len(body) > MAX_ANSWER_BYTES:
            raise self.error(
                f"an answer larger than {MAX_ANSWER_BYTES // 2**20} MiB: ask for fewer traces "
                f"per query ({PARAM_LIMIT}= in the address)"
            )
        try:
            answer: object = json.loads(body)
        except (ValueError, RecursionError):
            raise self.error(
                f"the answer is not JSON ({content_type}): is this Jaeger's query address "
                "(its UI's port, 16686 by default)?"
            ) from None
        return answer

    def _unreachable(self, reason: object) -> str:
        if isinstance(reason, ssl.SSLCertVerificationError):
            why = reason.verify_message or _reason(reason)
            return (
                f"its TLS certificate is not trusted ({why}): set {ENV_CERTIFICATE} to the "
                "CA certificates that signed it"
            )
        if isinstance(reason, ssl.SSLError):
            said = f"TLS failed ({_reason(reason)})"
            # a server that wants a client certificate may only close the connection
            if self._settings.client_certificate is None:
                said += f"; a client certificate, if it asks for one: {ENV_CLIENT_CERTIFICATE}"
            return said
        if isinstance(reason, TimeoutError):
            return self._slow()
        if isinstance(reason, ConnectionRefusedError):
            return "connection refused: is Jaeger's query service running there?"
        if isinstance(reason, socket.gaierror):
            return "unknown host"
        if isinstance(reason, BaseException):
            return f"cannot connect: {_reason(reason)}"
        return f"cannot connect: {reason}"

    def _slow(self) -> str:
        return (
            f"no answer within {self._settings.timeout_s:g} s ({ENV_TIMEOUT}, default "
            f"{DEFAULT_TIMEOUT_S:g}; or fewer traces per query: {PARAM_LIMIT}= in the address)"
        )

    def error(self, problem: str) -> JaegerError:
        message = f"Jaeger at {self._address.base}: {problem}"
        for secret in self._secrets:
            message = message.replace(secret, "***")
        return JaegerError(message)


def _reason(failed: BaseException) -> str:
    reason = getattr(failed, "reason", None) or getattr(failed, "strerror", None)
    text = str(reason or failed or type(failed).__name__)
    return text.splitlines()[0] if text.strip() else type(failed).__name__


def _read_error(failed: urllib.error.HTTPError) -> bytes:
    try:
        return failed.read(MAX_ERROR_BYTES)
    except (OSError, http.client.HTTPException):
        return b""


def _no_traces(body: bytes) -> bool:
    return _error_message(body) == _NO_TRACES


def _error_message(body: bytes) -> str | None:
    """The message of api_v3's error answer ``{"error": {"message": ...}}``."""
    try:
        answer = json.loads(body)
    except (ValueError, RecursionError):
        return None
    error = answer.get("error") if isinstance(answer, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else None


def _http_problem(code: int, reason: object, body: bytes) -> str:
    message = _error_message(body)
    said = f": {_one_line(message)}" if message else ""
    status = f"HTTP {code} {reason}".strip()
    if code in (401, 403):
        return f"{status}{said}: the request was refused; {ENV_HEADERS} gives its credentials"
    if 300 <= code < 400:
        return f"{status}: it redirects elsewhere (a login page?); redirects are not followed"
    if code == 404 and message is None:
        return f"{status}: no query API there (Jaeger's query port? the right prefix?)"
    if code == 500 and message and "max" in message.lower():
        return f"{status}{said} (ask for fewer traces per query: {PARAM_LIMIT}= in the address)"
    return f"{status}{said}"


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
