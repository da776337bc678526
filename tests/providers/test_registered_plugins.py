"""Samplers, id generators and resource detectors found by name in the SDK's entry points,
built into otel_dynamo's own providers (and ours offered to every application)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _export_support import child_environ
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import sampling
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

from otel_dynamo import names
from otel_dynamo._config.otel_env import SamplerChoice
from otel_dynamo._providers.ids import IsolatedRandomIdGenerator
from otel_dynamo._providers.sampling import build_id_generator, build_sampler
from otel_dynamo.resources import TorchrunResourceDetector

REGISTERED = Path(__file__).parents[1] / "data" / "registered_exporter"


PLUGIN_APP = """
from otel_dynamo._config.settings import Settings
from otel_dynamo._providers.setup import setup_providers
import sys
telemetry = setup_providers(Settings(output_dir=sys.argv[1]))
provider = telemetry.tracer_provider
span = provider.get_tracer("t").start_span("s")
print(provider.sampler.get_description())
print(span.get_span_context().span_id, span.get_span_context().trace_id)
span.end()
telemetry.shutdown(2.0)
"""


def test_a_sampler_and_an_id_generator_registered_by_another_package_are_used(tmp_path):
    """OTEL_TRACES_SAMPLER=fake_ratio with OTEL_TRACES_SAMPLER_ARG=0.25 and
    OTEL_PYTHON_ID_GENERATOR=counting, names only a test package's entry points know: our
    provider samples with that factory's sampler (given the arg's text) and draws ids from
    that generator."""
    env = child_environ(
        OTEL_TRACES_SAMPLER="fake_ratio",
        OTEL_TRACES_SAMPLER_ARG="0.25",
        OTEL_PYTHON_ID_GENERATOR="counting",
    )
    env["PYTHONPATH"] = os.pathsep.join([str(REGISTERED), env["PYTHONPATH"]])
    done = subprocess.run(
        [sys.executable, "-c", PLUGIN_APP, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    description, ids = done.stdout.splitlines()
    assert description == "TraceIdRatioBased{0.25}"
    span_id, trace_id = map(int, ids.split())
    assert (span_id, trace_id) == (2, (1 << 64) + 1)


def test_a_sampler_that_fails_to_build_falls_back_to_the_default():
    """A registered factory that raises on its arg: the SDK default, not an exception."""
    sampler = build_sampler(SamplerChoice("parentbased_traceidratio_", arg="x"))
    assert sampler is sampling.DEFAULT_ON


def test_id_generator_random_is_ours_and_other_names_are_loaded():
    """random: the isolated generator (Dynamo's random-state restores cannot repeat ids);
    an unknown name at build time: the same, never an exception."""
    assert type(build_id_generator("random")) is IsolatedRandomIdGenerator
    assert type(build_id_generator("nowhere")) is IsolatedRandomIdGenerator
    assert not isinstance(build_id_generator("random"), RandomIdGenerator)


def test_torchrun_detector_reads_the_torchrun_variables(monkeypatch):
    """RANK, LOCAL_RANK, WORLD_SIZE, GROUP_RANK and TORCHELASTIC_RUN_ID become the rank
    attributes; nothing else."""
    for variable, value in {
        "RANK": "3",
        "LOCAL_RANK": "1",
        "WORLD_SIZE": "8",
        "GROUP_RANK": "1",
        "TORCHELASTIC_RUN_ID": "job-7",
    }.items():
        monkeypatch.setenv(variable, value)
    assert dict(TorchrunResourceDetector().detect().attributes) == {
        names.RESOURCE_RANK: 3,
        names.RESOURCE_LOCAL_RANK: 1,
        names.RESOURCE_WORLD_SIZE: 8,
        names.RESOURCE_NODE_RANK: 1,
        names.RESOURCE_RUN_ID: "job-7",
    }


SDK_APP = """
from opentelemetry.sdk.resources import Resource
print(Resource.create().attributes.get("torch.distributed.rank"))
"""


def test_any_application_gets_the_ranks_through_the_entry_point(tmp_path: Path):
    """A plain SDK application (no otel_dynamo import) with
    OTEL_EXPERIMENTAL_RESOURCE_DETECTORS=otel,torchrun under RANK=5: its resource has
    torch.distributed.rank 5 (the installed entry point)."""
    env = child_environ(OTEL_EXPERIMENTAL_RESOURCE_DETECTORS="otel,torchrun", RANK="5")
    done = subprocess.run(
        [sys.executable, "-c", SDK_APP],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "5"
    assert Resource  # the SDK type the app used
