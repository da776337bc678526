"""Failures raise exactly what the untraced backend raises; traced twins behave the same."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest
import torch
from _spans import named, one

import otel_dynamo
from otel_dynamo import names


def relu_plus_one(x):
    return torch.relu(x) + 1


def _raised(backend, *args):
    torch._dynamo.reset()
    with pytest.raises(Exception) as info:
        torch.compile(relu_plus_one, backend=backend)(*args)
    return info.value


def test_compile_error_is_reraised_unchanged_and_marks_spans(provider, exporter):
    """relu_compile_error: same type and message as untraced; graph span ERROR with error.type;
    the frame span's error.type is the qualified name of what Dynamo raised."""
    plain = _raised("relu_compile_error_TESTING_ONLY", torch.randn(3))
    traced = _raised(
        otel_dynamo.traced("relu_compile_error_TESTING_ONLY", tracer_provider=provider),
        torch.randn(3),
    )
    assert type(traced) is type(plain)
    assert str(traced) == str(plain)
    spans = exporter.get_finished_spans()
    graph = one(spans, names.SPAN_GRAPH)
    assert graph.status.status_code.name == "ERROR"
    assert graph.attributes[names.ATTR_ERROR_TYPE].endswith("ReluCompileError")
    frame = one(spans, names.SPAN_FRAME)
    assert frame.attributes[names.ATTR_OUTCOME] == names.OUTCOME_FAILURE
    assert frame.status.status_code.name == "ERROR"
    assert frame.attributes[names.ATTR_ERROR_TYPE] == "torch._dynamo.exc.BackendCompilerFailed"


def test_runtime_error_is_reraised_unchanged_and_marks_run_span(provider, exporter):
    """relu_runtime_error: the AssertionError reaches the user; the run span is ERROR."""
    plain = _raised("relu_runtime_error_TESTING_ONLY", torch.randn(3))
    traced = _raised(
        otel_dynamo.traced("relu_runtime_error_TESTING_ONLY", tracer_provider=provider),
        torch.randn(3),
    )
    assert type(traced) is type(plain) is AssertionError
    assert str(traced) == str(plain)
    run = one(exporter.get_finished_spans(), names.SPAN_RUN_INFERENCE)
    assert run.status.status_code.name == "ERROR"
    assert run.attributes[names.ATTR_ERROR_TYPE] == "AssertionError"
    assert one(exporter.get_finished_spans(), names.SPAN_GRAPH).status.status_code.name == "UNSET"


def test_restart_analysis_is_not_recorded_as_failure(provider, exporter, capsys):
    """A graph break mid-function restarts analysis: no span has status ERROR."""

    def with_print(x):
        x = x + 1
        print("restart")
        return x * 2

    torch.compile(with_print, backend=otel_dynamo.traced("eager", tracer_provider=provider))(
        torch.randn(2)
    )
    spans = exporter.get_finished_spans()
    assert spans and all(s.status.status_code.name != "ERROR" for s in spans)


def test_twins_are_registered_through_entry_points_without_import():
    """A fresh process selects backend='otel_aot_eager' without importing otel_dynamo."""
    code = (
        "import sys, torch\n"
        "f = torch.compile(lambda x: x.relu() + 1, backend='otel_aot_eager')\n"
        "print(f(torch.ones(2)).tolist())\n"
        "print('otel_dynamo.backends' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=240
    )
    assert out.stdout.split() == ["[2.0,", "2.0]", "True"]


def test_every_debug_backend_selectable_by_name_has_a_twin():
    """Each backend torch registers in debugging.py (usable by name) has an otel_ twin,
    registered where this torch has the original and hidden where it lacks it."""
    # A twin built first (as torch builds one used by name) wraps the registry's
    # list_backends, looked up after: the test no longer depends on what ran before it.
    from otel_dynamo.backends import TWINNED_BACKENDS, twin

    twin("eager")
    list_backends = importlib.import_module("torch._dynamo.backends.registry").list_backends
    registered = set(list_backends(exclude_tags=()))
    needs_argument = {"aot_eager_decomp_partition_with_mode"}  # requires mode=
    torch_names = {n for n in registered if not n.startswith("otel_")} - needs_argument
    debugging = {
        n for n in torch_names if n in TWINNED_BACKENDS or "TESTING_ONLY" in n or "eager" in n
    }
    assert debugging <= set(TWINNED_BACKENDS)
    assert {f"otel_{n}" for n in TWINNED_BACKENDS if n in registered} <= registered
    missing = {n for n in TWINNED_BACKENDS if n not in registered}  # invoke_subgraph on 2.8
    assert not {f"otel_{n}" for n in missing} & registered


def _outcome(backend, x):
    """("returned", result) or ("raised", exception) of one fresh compile and call."""
    torch._dynamo.reset()
    try:
        return "returned", torch.compile(relu_plus_one, backend=backend)(x)
    except Exception as error:
        return "raised", error


@pytest.mark.parametrize("name", ["ts", "aot_ts"])
def test_twin_behaves_exactly_like_original(name):
    """ts/aot_ts: where the original fails (torch before 2.14, lazy graph modules on) the
    twin fails the same way; where it works (2.14 on) the twin returns the same result.

    Torch names the backend the user selected in the message, so only that name differs.
    """
    x = torch.randn(3)
    plain_kind, plain = _outcome(name, x)
    twin_kind, twin = _outcome(f"otel_{name}", x)
    assert twin_kind == plain_kind
    if plain_kind == "raised":
        assert type(twin) is type(plain)
        assert str(twin) == str(plain).replace(f"backend='{name}'", f"backend='otel_{name}'")
    else:
        assert torch.equal(twin, plain)
        assert torch.equal(plain, relu_plus_one(x))


@pytest.mark.parametrize(
    "name", ["eager_noexcept", "aot_eager_decomp_partition", "pre_dispatch_eager"]
)
def test_twin_computes_what_original_computes(name, capsys):
    """A twin's result equals the original backend's, bitwise."""
    x = torch.randn(5)
    torch._dynamo.reset()
    plain = torch.compile(relu_plus_one, backend=name)(x)
    torch._dynamo.reset()
    twin = torch.compile(relu_plus_one, backend=f"otel_{name}")(x)
    assert torch.equal(plain, twin)


def test_mode_and_options_reach_inductor(provider, exporter):
    """options= passed through torch.compile reach the wrapped inductor backend."""
    backend = otel_dynamo.traced("inductor", tracer_provider=provider)
    compiled = torch.compile(relu_plus_one, backend=backend, options={"trace.enabled": False})
    assert torch.equal(compiled(torch.ones(3)), torch.full((3,), 2.0))
    assert named(exporter.get_finished_spans(), names.SPAN_GRAPH)
    with pytest.raises(RuntimeError, match="Unexpected optimization option"):
        torch._dynamo.reset()
        torch.compile(relu_plus_one, backend=backend, options={"no_such_option": 1})(torch.ones(3))


LISTING = (
    "import sys, torch\n"
    "from otel_dynamo._sources.backend_registry import TWINNED_BACKENDS as T\n"
    "def twins(listed):\n"
    "    return sorted(n for n in listed if n.startswith('otel_') and n[5:] in T)\n"
    "def originals(listed):\n"
    "    return sorted('otel_' + n for n in listed if n in T)\n"
    "def check(label):\n"
    "    for tags in ((), ('debug',), ('debug', 'experimental')):\n"
    "        listed = torch._dynamo.list_backends(exclude_tags=tags)\n"
    "        print(label, tags, twins(listed) == originals(listed), len(twins(listed)))\n"
    "    print(label, twins(torch.compiler.list_backends()))\n"
)
"""Prints, for each exclude_tags, whether the twins listed are exactly those whose
originals are listed, and how many; then the twins torch.compiler.list_backends() shows."""


def _listing_lines(code, *, enabled):
    env = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    env["OTEL_DYNAMO_ENABLED"] = enabled
    if "OTEL_DYNAMO_OUTPUT_DIR" in os.environ:  # the session's (conftest), not the checkout
        env["OTEL_DYNAMO_OUTPUT_DIR"] = os.environ["OTEL_DYNAMO_OUTPUT_DIR"]
    done = subprocess.run(
        [sys.executable, "-c", LISTING + code],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0 and "otel_dynamo" not in done.stderr, done.stderr
    return done.stdout.splitlines()


def test_list_backends_hides_the_twins_of_hidden_backends_before_any_is_loaded():
    """With tracing on by OTEL_DYNAMO_ENABLED, in a fresh process that has loaded no twin,
    list_backends() lists a twin exactly
    when it lists its original, for every exclude_tags (torch tags its debug backends:
    only otel_inductor stays by default); listing loads no twin; every twin of a backend
    this torch has still compiles by name, as the object otel_dynamo.backends holds."""
    lines = _listing_lines(
        "check('before')\n"
        "print('otel_dynamo.backends' in sys.modules)\n"
        "import otel_dynamo.backends as b\n"
        "from torch._dynamo.backends.registry import lookup_backend\n"
        "print(torch.compile(lambda x: x * 3, backend='otel_eager_debug')(torch.ones(1)).item())\n"
        "known = torch._dynamo.list_backends(exclude_tags=())\n"
        "print(all(lookup_backend('otel_' + n) is b.twin(n) for n in T if n in known))\n"
        "check('after')\n",
        enabled="true",
    )
    before, after = lines[:4], lines[-4:]
    assert [line.split(" True ")[0] for line in before[:3]] == [
        "before ()",
        "before ('debug',)",
        "before ('debug', 'experimental')",
    ]
    every_twin = int(before[0].rsplit(" ", 1)[1])
    assert every_twin >= 15  # invoke_subgraph is missing from torch 2.8 and 2.10
    assert before[3] == "before ['otel_inductor']"
    assert lines[4:7] == ["False", "3.0", "True"]
    assert [line.replace("after", "before") for line in after] == before


def test_with_tracing_off_twins_are_listed_until_the_first_is_built():
    """With tracing off, the .pth line imports nothing (no hook waits for torch's
    registry): torch lists every twin until the first one is built, then a twin exactly
    when its original, so only otel_inductor by default."""
    lines = _listing_lines(
        "print(len(twins(torch.compiler.list_backends())) >= 15)\n"
        "torch.compile(lambda x: x + 1, backend='otel_aot_eager')(torch.ones(1))\n"
        "check('used')\n",
        enabled="false",
    )
    assert lines[0] == "True"
    assert lines[-1] == "used ['otel_inductor']"
    assert all(" True " in line for line in lines[1:4])


def test_a_listing_it_does_not_understand_is_torchs_own():
    """Should list_backends() answer something that is not a list of names, the wrapper
    returns it untouched and warns, never raises."""
    from otel_dynamo._sources import backend_registry

    assert backend_registry._list_twins_as_originals(lambda: None, None, (), {}) is None
    listed = ["eager", "inductor", "otel_eager", "otel_inductor", "otel_mine"]
    kept = backend_registry._list_twins_as_originals(lambda: listed[1:], None, (), {})
    assert kept == ["inductor", "otel_inductor", "otel_mine"]


def test_pth_hook_names_match_the_modules_they_stand_for():
    """site_hook names torch's registry without importing backend_registry (wrapt), and
    the .pth line names site_hook as it is."""
    from otel_dynamo._enablement import site_hook, startup
    from otel_dynamo._sources import backend_registry

    assert site_hook.REGISTRY_MODULE == backend_registry.REGISTRY_MODULE
    assert site_hook.__name__ == startup.SITE_HOOK_MODULE
