"""The top-level package: cheap to import, and ConfigError reachable from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import otel_dynamo
from otel_dynamo.instrumentation import TorchCompileInstrumentor

pytestmark = pytest.mark.torch_facing  # entry points and backends torch looks up


def test_importing_the_package_loads_only_its_version():
    """``import otel_dynamo`` loads no other otel_dynamo module, no torch, no OpenTelemetry
    (run with ``-S``: otel_dynamo.pth's start-up hook, which loads a few, is not the
    package's import)."""
    root = str(Path(otel_dynamo.__file__).resolve().parent.parent)
    code = (
        f"import sys; sys.path.insert(0, {root!r}); import json, otel_dynamo; "
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.startswith(('otel_dynamo', 'torch', 'opentelemetry')))))"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == ["otel_dynamo", "otel_dynamo.version"]


def test_config_error_is_the_error_a_bad_option_raises():
    """otel_dynamo.ConfigError is the class traced() raises for a bad option value."""
    import otel_dynamo

    with pytest.raises(otel_dynamo.ConfigError, match="run_spans"):
        otel_dynamo.traced("eager", run_spans="sometimes")


PROVIDERS = ("tracer_provider", "meter_provider", "logger_provider")


@pytest.mark.parametrize("name", ["traced", "instrument", "instrument_export"])
def test_options_are_keyword_only_and_typed_by_backend_options(name):
    """Each way in takes its providers keyword-only and its options as
    ``**options: Unpack[BackendOptions]``, nothing else but ``traced``'s backend."""
    import inspect

    parameters = inspect.signature(getattr(otel_dynamo, name)).parameters
    kinds = {key: parameter.kind for key, parameter in parameters.items()}
    assert [key for key in kinds if key not in ("backend", "options")] == list(PROVIDERS)
    assert all(kinds[key] is inspect.Parameter.KEYWORD_ONLY for key in PROVIDERS)
    assert kinds["options"] is inspect.Parameter.VAR_KEYWORD
    assert parameters["options"].annotation == "Unpack[BackendOptions]"


def test_every_option_is_a_settings_field_named_in_the_docstring_and_the_docs():
    """BackendOptions' names are Settings fields, and traced()'s docstring and
    docs/python-api.md name every one."""
    import dataclasses

    from otel_dynamo._config.options import OPTION_NAMES
    from otel_dynamo._config.settings import Settings

    assert {field.name for field in dataclasses.fields(Settings)} >= OPTION_NAMES
    docs = (Path(__file__).parents[1] / "docs" / "python-api.md").read_text(encoding="utf-8")
    for option in sorted(OPTION_NAMES):
        assert f"``{option}``" in (otel_dynamo.traced.__doc__ or ""), option
        assert f"`{option}`" in docs, option


def test_an_unknown_option_is_a_type_error_listing_the_accepted():
    """traced(unknown_option=1) raises TypeError naming it and every accepted option."""
    from otel_dynamo._config.options import OPTION_NAMES

    with pytest.raises(TypeError) as raised:
        otel_dynamo.traced("eager", no_such_option=1)  # type: ignore[call-arg]
    assert "no_such_option" in str(raised.value)
    assert all(option in str(raised.value) for option in OPTION_NAMES)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda **kw: otel_dynamo.traced("eager", **kw), "otel_dynamo.traced()"),
        (otel_dynamo.instrument, "otel_dynamo.instrument()"),
        (otel_dynamo.instrument_export, "otel_dynamo.instrument_export()"),
        (
            lambda **kw: TorchCompileInstrumentor().instrument(**kw),
            "TorchCompileInstrumentor().instrument()",
        ),
    ],
)
def test_an_unknown_option_names_the_function_called(call: Any, name: str) -> None:
    """Each public function refuses an unknown option at the call, naming itself."""
    with pytest.raises(TypeError) as raised:
        call(bogus=1)
    assert str(raised.value).startswith(f"{name} got unexpected option(s) ['bogus']; accepted: ")


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"run_spans": 5},
            TypeError,
            "otel_dynamo.instrument(): option run_spans=5 is not valid (of type int); "
            "accepted: off, all, auto, auto:N or first:N (N a positive integer)",
        ),
        (
            {"max_list_length": True},
            TypeError,
            "otel_dynamo.instrument(): option max_list_length=True is not valid (of type bool); "
            "accepted: a positive integer",
        ),
        (
            {"max_list_length": 0},
            otel_dynamo.ConfigError,
            "otel_dynamo.instrument(): option max_list_length=0 is not valid; "
            "accepted: a positive integer",
        ),
        (
            {"tracer_provider": "collector:4317"},
            TypeError,
            "otel_dynamo.instrument(): tracer_provider='collector:4317' is not valid; "
            "accepted: an opentelemetry.trace.TracerProvider or None",
        ),
    ],
)
def test_a_bad_option_is_refused_at_the_call(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    """A wrong type or value is refused when passed (never at the first compile), naming
    the function, the option, the value and what is accepted; nothing is instrumented."""
    from otel_dynamo._enablement.instrument import is_instrumented

    with pytest.raises(error) as raised:
        otel_dynamo.instrument(**options)
    assert (str(raised.value), is_instrumented()) == (message, False)


@pytest.mark.parametrize("backend", [5, None, b"inductor"])
def test_a_backend_neither_named_nor_callable_is_refused_at_the_call(backend: object) -> None:
    """traced() with a backend that is neither a name nor a callable raises TypeError at
    the call, naming the function, the value, its type and what is accepted."""
    with pytest.raises(TypeError) as raised:
        otel_dynamo.traced(backend)  # type: ignore[arg-type]
    assert str(raised.value) == (
        f"otel_dynamo.traced(): backend={backend!r} is not valid (of type "
        f"{type(backend).__name__}); accepted: a registered backend's name "
        "(torch._dynamo.list_backends()) or a callable"
    )


def test_the_instrumentor_checks_its_options_before_patching() -> None:
    """TorchCompileInstrumentor().instrument(run_spans=5) is refused in _instrument,
    naming the method, and leaves the process uninstrumented."""
    from otel_dynamo._enablement.instrument import is_instrumented

    instrumentor = TorchCompileInstrumentor()
    with pytest.raises(
        TypeError, match=r"^TorchCompileInstrumentor\(\)\.instrument\(\): option run_spans=5"
    ):
        instrumentor.instrument(run_spans=5)
    assert is_instrumented() is False
