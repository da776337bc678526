"""``otel-dynamo report`` and ``diff`` on a Jaeger address, against small HTTP servers on
loopback (real sockets) that play a Jaeger that is down, slow, wrong or strict: each
failure is one line on stderr and a non-zero exit, never a traceback or a report;
headers and TLS come from the environment, and no header value is ever printed. Also
what the reader undoes of a v1-model store (Badger's arrays as text). The real Jaeger's
happy paths are in tests/report/test_report_jaeger.py."""

from __future__ import annotations

import contextlib
import dataclasses
import http.server
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _report_support import write_small

from otel_dynamo import cli, names
from otel_dynamo.report import JaegerSettings, fetch_run
from otel_dynamo.report.read.jaeger import (
    ENV_CERTIFICATE,
    ENV_CLIENT_CERTIFICATE,
    ENV_CLIENT_KEY,
    ENV_HEADERS,
    ENV_TIMEOUT,
    JaegerAddress,
    JaegerError,
)

TOKEN = "s3cr3t-t0ken-value-4711"
SERVICE = "train"
WINDOW = "start=2026-12-05T10:00:00Z&end=2026-12-05T11:00:00Z"


@dataclasses.dataclass
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    delay_s: float = 0.0
    headers: dict[str, str] = dataclasses.field(default_factory=dict)


Route = Callable[[str, dict[str, str]], Answer]
"""The answer to a path, given the request's headers."""


def _json(status: int, value: object) -> Answer:
    return Answer(status, json.dumps(value).encode())


def _services(*names: str) -> Answer:
    return _json(200, {"services": list(names)})


def _traces_of(directory: Path) -> Answer:
    """A file reader's whole input as one api_v3 answer."""
    entries = []
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entries += json.loads(line)["resourceSpans"]
    return _json(200, {"result": {"resourceSpans": entries}})


@dataclasses.dataclass
class Served:
    url: str
    requests: list[tuple[str, dict[str, str]]]


@contextlib.contextmanager
def serving(
    routes: dict[str, Route],
    *,
    tls: tuple[Path, Path] | None = None,
    client_ca: Path | None = None,
) -> Iterator[Served]:
    """A server on loopback answering each path of ``routes`` (404 elsewhere); with
    ``tls`` (certificate, key) over https, asking for a client certificate ``client_ca``
    signed where given."""
    served = Served("", [])

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = urllib.parse.urlsplit(self.path).path
            headers = dict(self.headers.items())
            served.requests.append((self.path, headers))
            route = routes.get(path)
            answer = (
                route(path, headers) if route else Answer(404, b"<html>404</html>", "text/html")
            )
            time.sleep(answer.delay_s)
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
                for key, value in answer.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(answer.body)
            except OSError:  # the client gave up (the slow server's case)
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    scheme = "http"
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tls[0]), str(tls[1]))
        if client_ca is not None:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(str(client_ca))
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    served.url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()


def _address(url: str, extra: str = "") -> str:
    return f"{url}/?service={SERVICE}&{WINDOW}{extra}"


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["report", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_failure_line(code: int, out: str, err: str) -> str:
    """The one error line of a failed report (exit 1, nothing on stdout, no traceback)."""
    assert (code, out) == (1, "")
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err.strip()


def test_a_jaeger_that_is_down_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens at the address: one line saying the connection was refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    line = _one_failure_line(*_report(capsys, _address(f"http://127.0.0.1:{port}")))
    assert line == (
        f"otel-dynamo: Jaeger at http://127.0.0.1:{port}: connection refused: "
        "is Jaeger's query service running there?"
    )


def test_a_slow_jaeger_times_out_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer slower than OTEL_DYNAMO_JAEGER_TIMEOUT: one line naming the variable."""
    monkeypatch.setenv(ENV_TIMEOUT, "0.3")
    slow = Answer(200, b'{"services": ["train"]}', delay_s=2.0)
    with serving({"/api/v3/services": lambda *_: slow}) as served:
        line = _one_failure_line(*_report(capsys, _address(served.url)))
    assert "no answer within 0.3 s (OTEL_DYNAMO_JAEGER_TIMEOUT" in line


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (
            _json(500, {"error": {"httpCode": 500, "message": "storage is on fire"}}),
            "HTTP 500 Internal Server Error: storage is on fire",
        ),
        (Answer(200, b"<html><body>login</body></html>", "text/html"), "the answer is not JSON"),
        (_json(200, {"data": []}), 'is not {"result": {"resourceSpans": [...]}}'),
        (
            _json(200, {"result": {"resourceSpans": [{"scopeSpans": [{"spans": [{}]}]}]}}),
            "no traceId",
        ),
    ],
    ids=["http-500", "html", "wrong-shape", "span-without-trace-id"],
)
def test_a_wrong_answer_is_one_line(
    capsys: pytest.CaptureFixture[str], answer: Answer, said: str
) -> None:
    """A 500, an HTML page, JSON of another shape: one line saying what came back."""
    routes: dict[str, Route] = {
        "/api/v3/services": lambda *_: _services(SERVICE),
        "/api/v3/traces": lambda *_: answer,
    }
    with serving(routes) as served:
        line = _one_failure_line(*_report(capsys, _address(served.url)))
    assert line.startswith(f"otel-dynamo: Jaeger at {served.url}: ") and said in line


def test_an_address_that_is_not_the_query_api_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A web server with no query API (an HTML 404): one line asking for the right port."""
    with serving({}) as served:
        line = _one_failure_line(*_report(capsys, _address(served.url)))
    assert "HTTP 404 Not Found: no query API there" in line


def test_an_unknown_service_lists_the_services_jaeger_knows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """service= names no service: one line listing the ones there."""
    with serving({"/api/v3/services": lambda *_: _services("web", "eval")}) as served:
        line = _one_failure_line(*_report(capsys, _address(served.url)))
    assert line.endswith("no service 'train'; the services it knows: eval, web")


def test_no_traces_in_the_window_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Jaeger's 404 "No traces found": one line naming the service and the window."""
    routes: dict[str, Route] = {
        "/api/v3/services": lambda *_: _services(SERVICE),
        "/api/v3/traces": lambda *_: _json(
            404, {"error": {"httpCode": 404, "message": "No traces found"}}
        ),
    }
    with serving(routes) as served:
        line = _one_failure_line(*_report(capsys, _address(served.url)))
    assert line.endswith(
        "no traces of service 'train' between 2026-12-05T10:00:00Z and 2026-12-05T11:00:00Z "
        "(a wider window: start= or lookback=)"
    )


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("?service=train&from=2026", "unknown parameter 'from' (accepted: service, start, end"),
        ("?start=2026-12-05T10:00:00Z", "service= is required"),
        ("?service=train&start=yesterday", "start='yesterday' is not an RFC 3339 time"),
        ("?service=train&start=2026-12-05T10:00:00", "is not an RFC 3339 time with its zone"),
        (
            "?service=train&start=2026-12-05T11:00:00Z&end=2026-12-05T10:00:00Z",
            "start=2026-12-05T11:00:00Z is not before end=2026-12-05T10:00:00Z",
        ),
        ("?service=train&lookback=2 hours", "lookback='2 hours' is not a duration"),
        ("?service=train&lookback=1h&start=2026-12-05T10:00:00Z", "both given"),
        ("?service=train&limit=1", "limit='1' is not a whole number of 2 or more"),
    ],
)
def test_a_bad_address_parameter_is_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], query: str, said: str
) -> None:
    """A wrong parameter: one line naming it, its value and what is accepted; no query."""
    line = _one_failure_line(*_report(capsys, f"http://127.0.0.1:9/{query}"))
    assert said in line


def test_credentials_in_the_address_are_refused_and_not_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """user:password@ in the address: refused, pointing at the headers variable; the
    password is not printed."""
    line = _one_failure_line(*_report(capsys, f"http://admin:{TOKEN}@127.0.0.1:9/?service=x"))
    assert ENV_HEADERS in line and TOKEN not in line


def test_the_address_defaults_and_its_prefix() -> None:
    """Without start= the window is lookback (1h by default) before end (now by default);
    a path prefix is kept for the API."""
    now = 1_796_000_000 * 10**9
    address = JaegerAddress.parse("https://h:1/jaeger/?service=s&run_id=r", now_ns=now)
    assert (address.base, address.start_ns, address.end_ns) == (
        "https://h:1/jaeger",
        now - 3600 * 10**9,
        now,
    )
    assert (address.run_id, address.limit) == ("r", 500)
    with pytest.raises(JaegerError):
        JaegerAddress.parse("https://h:1/?service=s&service=t")


def _strict_routes(directory: Path) -> dict[str, Route]:
    """A Jaeger that answers only requests carrying the token, and otherwise echoes the
    Authorization header it got in its error (as a careless proxy might)."""

    def checked(answer: Answer) -> Route:
        def route(_: str, headers: dict[str, str]) -> Answer:
            given = headers.get("Authorization", "")
            if given != f"Bearer {TOKEN}":
                return _json(401, {"error": {"message": f"bad credentials {given!r}"}})
            return answer

        return route

    return {
        "/api/v3/services": checked(_services(SERVICE)),
        "/api/v3/traces": checked(_traces_of(directory)),
    }


def test_headers_from_the_environment_reach_jaeger_and_are_never_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """OTEL_DYNAMO_JAEGER_HEADERS' Authorization reaches every request; the report is
    made, and neither it nor stderr shows the token."""
    write_small(tmp_path / "files")
    monkeypatch.setenv(ENV_HEADERS, f"Authorization=Bearer%20{TOKEN}")
    with serving(_strict_routes(tmp_path / "files")) as served:
        code, out, err = _report(capsys, _address(served.url), "--json")
    assert (code, err) == (0, "")
    assert all(headers["Authorization"] == f"Bearer {TOKEN}" for _, headers in served.requests)
    assert json.loads(out)["totals"]["frame_compiles"] > 0
    assert TOKEN not in out


def test_a_refused_token_is_one_line_without_the_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrong token: one line saying the request was refused, naming the variable; the
    token the server echoes back is not shown."""
    wrong = "wr0ng-t0ken-value-0815"
    monkeypatch.setenv(ENV_HEADERS, f"Authorization=Bearer%20{wrong}")
    with serving(_strict_routes(Path("/nonexistent"))) as served:
        line = _one_failure_line(*_report(capsys, _address(served.url)))
    assert "HTTP 401 Unauthorized" in line and ENV_HEADERS in line
    assert wrong not in line and "***" in line


def test_a_malformed_headers_variable_is_one_line_without_its_value(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A headers entry that is not key=value: one line naming the variable and the entry's
    number, not its text."""
    monkeypatch.setenv(ENV_HEADERS, f"x-ok=1,Bearer {TOKEN}")
    line = _one_failure_line(*_report(capsys, _address("http://127.0.0.1:9")))
    assert f"{ENV_HEADERS}: entry 2 is not key=value" in line and TOKEN not in line


@dataclasses.dataclass
class PrivateCA:
    """A CA of our own, a server certificate for 127.0.0.1 and a client certificate it
    signed (PEM files)."""

    ca: Path
    server: tuple[Path, Path]
    client: tuple[Path, Path]


def _private_ca(directory: Path) -> PrivateCA:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command to make a private CA")

    def run(command: str) -> None:
        # tmp_path holds no spaces: the words split as written
        subprocess.run([openssl, *command.split()], check=True, capture_output=True, cwd=directory)

    ca_key, ca = directory / "ca.key", directory / "ca.pem"
    run(
        f"req -x509 -newkey rsa:2048 -nodes -keyout {ca_key} -out {ca} -days 2"
        " -subj /CN=otel-dynamo-test-CA -addext basicConstraints=critical,CA:TRUE"
        " -addext keyUsage=critical,keyCertSign,cRLSign"
    )

    def signed(name: str, usage: str, alt: str) -> tuple[Path, Path]:
        key, request, cert = (directory / f"{name}.{kind}" for kind in ("key", "csr", "pem"))
        extensions = directory / f"{name}.ext"
        extensions.write_text(
            f"{alt}basicConstraints=CA:FALSE\nauthorityKeyIdentifier=keyid\n"
            f"keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage={usage}\n",
            encoding="utf-8",
        )
        run(f"req -newkey rsa:2048 -nodes -keyout {key} -out {request} -subj /CN={name}")
        run(
            f"x509 -req -in {request} -CA {ca} -CAkey {ca_key} -CAcreateserial -out {cert}"
            f" -days 2 -extfile {extensions}"
        )
        return cert, key

    server = signed("server", "serverAuth", "subjectAltName=IP:127.0.0.1\n")
    return PrivateCA(ca, server, signed("client", "clientAuth", ""))


def test_a_private_ca_is_trusted_through_the_certificate_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An https Jaeger whose certificate a private CA signed: refused in one line without
    OTEL_DYNAMO_JAEGER_CERTIFICATE (naming it), read with it."""
    private = _private_ca(tmp_path)
    write_small(tmp_path / "files")
    routes: dict[str, Route] = {
        "/api/v3/services": lambda *_: _services(SERVICE),
        "/api/v3/traces": lambda *_: _traces_of(tmp_path / "files"),
    }
    with serving(routes, tls=private.server) as served:
        line = _one_failure_line(*_report(capsys, _address(served.url)))
        assert "its TLS certificate is not trusted" in line and ENV_CERTIFICATE in line
        monkeypatch.setenv(ENV_CERTIFICATE, str(private.ca))
        code, out, err = _report(capsys, _address(served.url), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["source"]["address"].startswith(served.url)


def test_diff_says_which_side_jaeger_failed_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """diff with a Jaeger side that cannot be read: one line naming that side, exit 2."""
    write_small(tmp_path / "files")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = cli.main(["diff", str(tmp_path / "files"), _address(f"http://127.0.0.1:{port}")])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith("otel-dynamo: NEW: Jaeger at ") and len(err.splitlines()) == 1


def test_a_jaeger_address_is_read_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """report with a Jaeger address and a directory: one line saying it is read alone."""
    write_small(tmp_path)
    line = _one_failure_line(*_report(capsys, _address("http://127.0.0.1:9"), str(tmp_path)))
    assert "a Jaeger address is read alone" in line


def test_a_redirect_is_not_followed_and_carries_no_credentials(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query API that redirects (to a login page on another host): one line saying so;
    the other host never sees the headers."""
    monkeypatch.setenv(ENV_HEADERS, f"Authorization=Bearer%20{TOKEN}")
    with serving({"/api/v3/services": lambda *_: _services(SERVICE)}) as elsewhere:
        location = {"Location": f"{elsewhere.url}/api/v3/services"}
        away = Answer(302, b"", "text/html", headers=location)
        with serving({"/api/v3/services": lambda *_: away}) as served:
            line = _one_failure_line(*_report(capsys, _address(served.url)))
    assert "HTTP 302" in line and "redirects are not followed" in line
    assert elsewhere.requests == [] and TOKEN not in line


def test_what_a_server_says_reaches_the_terminal_printable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An error message with terminal control characters is shown with them escaped."""
    said = _json(500, {"error": {"message": "boom\x1b]0;owned\x07"}})
    routes: dict[str, Route] = {
        "/api/v3/services": lambda *_: _services(SERVICE),
        "/api/v3/traces": lambda *_: said,
    }
    with serving(routes) as served:
        line = _one_failure_line(*_report(capsys, _address(served.url)))
    assert "\x1b" not in line and "\x07" not in line and "boom\\x1b]0;owned\\x07" in line


def test_only_the_keys_written_as_arrays_are_made_arrays_again(tmp_path: Path) -> None:
    """As Badger hands them back, an otel_dynamo array attribute (JSON text) becomes an
    array again; another key whose text looks like an array stays text."""
    looks_like = '["not","an","array"]'
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "torch.compile.frame",
        "startTimeUnixNano": "1796482999391044224",
        "endTimeUnixNano": "1796482999391081682",
        "attributes": [
            {
                "key": names.ATTR_GRAPH_BREAK_REASONS,
                "value": {"stringValue": '["print","x.item()"]'},
            },
            {"key": names.ATTR_RECOMPILE_REASON, "value": {"stringValue": looks_like}},
        ],
    }
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": SERVICE}}]}
    entry = {"resource": resource, "scopeSpans": [{"spans": [span]}]}
    routes: dict[str, Route] = {
        "/api/v3/services": lambda *_: _services(SERVICE),
        "/api/v3/traces": lambda *_: _json(200, {"result": {"resourceSpans": [entry]}}),
    }
    with serving(routes) as served:
        address = JaegerAddress.parse(_address(served.url))
        with fetch_run(address, settings=JaegerSettings(), directory=tmp_path) as run:
            (spooled,) = run.directory.iterdir()
            line = json.loads(spooled.read_text(encoding="utf-8"))
    attributes = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    assert attributes == [
        {
            "key": names.ATTR_GRAPH_BREAK_REASONS,
            "value": {
                "arrayValue": {"values": [{"stringValue": "print"}, {"stringValue": "x.item()"}]}
            },
        },
        {"key": names.ATTR_RECOMPILE_REASON, "value": {"stringValue": looks_like}},
    ]
    assert list(tmp_path.iterdir()) == []  # the private folder is gone


def test_mutual_tls_takes_the_client_certificate_variables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Jaeger that asks for a client certificate: one line without one, read with
    OTEL_DYNAMO_JAEGER_CLIENT_CERTIFICATE and _CLIENT_KEY."""
    private = _private_ca(tmp_path)
    write_small(tmp_path / "files")
    routes: dict[str, Route] = {
        "/api/v3/services": lambda *_: _services(SERVICE),
        "/api/v3/traces": lambda *_: _traces_of(tmp_path / "files"),
    }
    monkeypatch.setenv(ENV_CERTIFICATE, str(private.ca))
    with serving(routes, tls=private.server, client_ca=private.ca) as served:
        line = _one_failure_line(*_report(capsys, _address(served.url)))
        assert line.startswith(f"otel-dynamo: Jaeger at {served.url}: TLS failed")
        assert f"a client certificate, if it asks for one: {ENV_CLIENT_CERTIFICATE}" in line
        monkeypatch.setenv(ENV_CLIENT_CERTIFICATE, str(private.client[0]))
        monkeypatch.setenv(ENV_CLIENT_KEY, str(private.client[1]))
        code, out, err = _report(capsys, _address(served.url), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["totals"]["frame_compiles"] > 0


def test_a_missing_tls_file_is_one_line_naming_its_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A certificate variable naming no file: one line naming the variable and path."""
    monkeypatch.setenv(ENV_CERTIFICATE, "/nonexistent/ca.pem")
    line = _one_failure_line(*_report(capsys, _address("https://127.0.0.1:9")))
    assert line == f"otel-dynamo: {ENV_CERTIFICATE}=/nonexistent/ca.pem: no such file"
