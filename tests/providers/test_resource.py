"""build_resource: the SDK's Resource.create over host, process and torchrun attributes."""

from __future__ import annotations

import importlib.machinery
import logging
import os
import socket
import subprocess
import sys
import types

import pytest
from _export_support import child_environ, clear_otel_environ

from otel_dynamo import names
from otel_dynamo._providers.resources import (
    DEFAULT_SERVICE_NAME,
    build_resource,
    program_service_name,
)


@pytest.fixture(autouse=True)
def _no_stray_otel_variables(monkeypatch):
    clear_otel_environ(monkeypatch)
    for variable in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "GROUP_RANK", "TORCHELASTIC_RUN_ID"):
        monkeypatch.delenv(variable, raising=False)


def _resource_with(monkeypatch, **variables):
    for variable, value in variables.items():
        monkeypatch.setenv(variable, value)
    return build_resource().attributes


def test_default_service_name_is_the_programs(monkeypatch):
    """With neither OTEL_SERVICE_NAME nor service.name in attributes: the job's program
    (this process's, whatever runs the tests), else "torch-compile"."""
    expected = program_service_name() or DEFAULT_SERVICE_NAME
    assert _resource_with(monkeypatch)["service.name"] == expected


def test_default_service_name_can_be_given(monkeypatch):
    """``default_service_name`` replaces the program's name, and only when none is
    configured."""
    assert build_resource(default_service_name="demo").attributes["service.name"] == "demo"
    monkeypatch.setenv("OTEL_SERVICE_NAME", "trainer")
    assert build_resource(default_service_name="demo").attributes["service.name"] == "trainer"


def _main(**attributes: object) -> types.ModuleType:
    module = types.ModuleType("__main__")
    module.__spec__ = None
    for name, value in attributes.items():
        setattr(module, name, value)
    return module


def test_a_script_names_the_service_by_its_stem():
    """``python /jobs/train.py`` (and each rank of ``torchrun /jobs/train.py``): "train"."""
    assert program_service_name(_main(__file__="/jobs/train.py")) == "train"


def test_a_module_run_with_dash_m_names_the_service():
    """``python -m pkg.train``: "pkg.train"; ``python -m pkg`` (its ``__main__``): "pkg"."""
    spec = importlib.machinery.ModuleSpec("pkg.train", None)
    assert program_service_name(_main(__spec__=spec, __file__="/x/pkg/train.py")) == "pkg.train"
    package = importlib.machinery.ModuleSpec("pkg.__main__", None)
    assert program_service_name(_main(__spec__=package)) == "pkg"


def test_no_program_leaves_torch_compile():
    """``python -c`` and the REPL (no file) and stdin (``<stdin>``): no program name, so the
    service is "torch-compile"."""
    assert program_service_name(_main()) is None
    assert program_service_name(_main(__file__="<stdin>")) is None
    assert DEFAULT_SERVICE_NAME == "torch-compile"


PRINT_SERVICE_NAME = (
    "from otel_dynamo._providers.resources import build_resource\n"
    "print(build_resource().attributes['service.name'])\n"
)


def _service_name_of(tmp_path, *command: str) -> str:
    """The service.name a real process started as ``python COMMAND`` builds."""
    done = subprocess.run(
        [sys.executable, *command],
        env=child_environ(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_python_dash_c_job_is_torch_compile(tmp_path):
    """A real ``python -c`` process builds its resource with "torch-compile"."""
    assert _service_name_of(tmp_path, "-c", PRINT_SERVICE_NAME) == "torch-compile"


def test_a_script_job_is_named_by_its_script(tmp_path):
    """A real ``python train.py`` process: "train"."""
    script = tmp_path / "train.py"
    script.write_text(PRINT_SERVICE_NAME)
    assert _service_name_of(tmp_path, str(script)) == "train"


def test_otel_service_name_wins(monkeypatch):
    """OTEL_SERVICE_NAME sets service.name, over OTEL_RESOURCE_ATTRIBUTES' service.name."""
    attributes = _resource_with(
        monkeypatch, OTEL_SERVICE_NAME="trainer", OTEL_RESOURCE_ATTRIBUTES="service.name=other"
    )
    assert attributes["service.name"] == "trainer"


def test_resource_attributes_are_honoured_and_url_decoded(monkeypatch):
    """OTEL_RESOURCE_ATTRIBUTES items become attributes, values URL-decoded."""
    attributes = _resource_with(
        monkeypatch, OTEL_RESOURCE_ATTRIBUTES="service.name=svc,team=ml%20infra,deployment=dev"
    )
    assert (attributes["service.name"], attributes["team"], attributes["deployment"]) == (
        "svc",
        "ml infra",
        "dev",
    )


def test_a_malformed_item_is_left_out_without_the_sdk_warning(monkeypatch, caplog):
    """A malformed OTEL_RESOURCE_ATTRIBUTES item is left out and the well-formed ones kept;
    the SDK's own warning about it is not repeated (the configuration check names it)."""
    caplog.set_level(logging.WARNING)
    attributes = _resource_with(monkeypatch, OTEL_RESOURCE_ATTRIBUTES="team=ml,broken")
    assert attributes["team"] == "ml"
    assert "broken" not in attributes
    assert [r.getMessage() for r in caplog.records if "broken" in r.getMessage()] == []


def test_sdk_detectors_named_in_the_environment_are_run(monkeypatch):
    """OTEL_EXPERIMENTAL_RESOURCE_DETECTORS adds the SDK's detectors (here ``os``)."""
    attributes = _resource_with(monkeypatch, OTEL_EXPERIMENTAL_RESOURCE_DETECTORS="os")
    assert attributes["os.type"] == "linux"


def test_torchrun_variables_become_int_attributes(monkeypatch):
    """RANK, LOCAL_RANK, WORLD_SIZE, GROUP_RANK become int attributes under our names."""
    attributes = _resource_with(
        monkeypatch, RANK="5", LOCAL_RANK="1", WORLD_SIZE="8", GROUP_RANK="2"
    )
    assert {
        key: attributes[key]
        for key in (
            names.RESOURCE_RANK,
            names.RESOURCE_LOCAL_RANK,
            names.RESOURCE_WORLD_SIZE,
            names.RESOURCE_NODE_RANK,
        )
    } == {
        "torch.distributed.rank": 5,
        "torch.distributed.local_rank": 1,
        "torch.distributed.world_size": 8,
        "torch.distributed.node_rank": 2,
    }


def test_run_id_is_a_string_attribute(monkeypatch):
    """TORCHELASTIC_RUN_ID becomes torch.distributed.run_id, a string."""
    attributes = _resource_with(monkeypatch, TORCHELASTIC_RUN_ID="0042")
    assert attributes[names.RESOURCE_RUN_ID] == "0042"


def test_malformed_rank_is_left_out(monkeypatch):
    """A RANK that is not an integer adds no attribute (and does not fail)."""
    attributes = _resource_with(monkeypatch, RANK="zero", WORLD_SIZE="4")
    assert names.RESOURCE_RANK not in attributes
    assert attributes[names.RESOURCE_WORLD_SIZE] == 4


def test_without_torchrun_no_rank_attributes(monkeypatch):
    """Outside torchrun there are no torch.distributed.* attributes at all."""
    attributes = _resource_with(monkeypatch)
    assert not [key for key in attributes if key.startswith("torch.distributed.")]


def test_host_and_process_attributes(monkeypatch):
    """host.name is the host name and process.pid this process's id."""
    attributes = _resource_with(monkeypatch)
    assert (attributes["host.name"], attributes["process.pid"]) == (
        socket.gethostname(),
        os.getpid(),
    )


def test_torch_version_is_the_imported_torchs(monkeypatch):
    """torch.version is the version of the torch this process imported."""
    import torch

    assert _resource_with(monkeypatch)[names.RESOURCE_TORCH_VERSION] == torch.__version__


def test_torch_version_read_from_metadata_before_torch_is_imported(monkeypatch):
    """Before torch is imported, torch.version comes from its package metadata (the
    provider layer never imports torch); without torch installed there is none."""
    import importlib.metadata

    monkeypatch.delitem(sys.modules, "torch")
    assert _resource_with(monkeypatch)[names.RESOURCE_TORCH_VERSION] == importlib.metadata.version(
        "torch"
    )
    assert "torch" not in sys.modules

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert names.RESOURCE_TORCH_VERSION not in _resource_with(monkeypatch)


def test_sdk_attributes_are_kept(monkeypatch):
    """Resource.create's own attributes (SDK name and language, and the service instance
    where the installed SDK makes one: 1.39 on) are present."""
    from opentelemetry.sdk.resources import Resource

    attributes = _resource_with(monkeypatch)
    assert (attributes["telemetry.sdk.name"], attributes["telemetry.sdk.language"]) == (
        "opentelemetry",
        "python",
    )
    sdk_made = Resource.create({}).attributes
    assert set(sdk_made) - {"service.name"} <= set(attributes)
    if "service.instance.id" in sdk_made:
        assert isinstance(attributes["service.instance.id"], str)


def test_user_attribute_overrides_detected_one(monkeypatch):
    """OTEL_RESOURCE_ATTRIBUTES takes precedence over what we detect (e.g. host.name)."""
    attributes = _resource_with(monkeypatch, OTEL_RESOURCE_ATTRIBUTES="host.name=node-7")
    assert attributes["host.name"] == "node-7"


def test_a_resource_of_another_process_is_given_this_ones_pid():
    """of_this_process: a resource naming another pid gets this one, its other attributes
    kept; one naming this pid, or none, is returned as the same object."""
    from opentelemetry.sdk.resources import Resource

    from otel_dynamo._providers.resources import PROCESS_PID, of_this_process

    parents = Resource({PROCESS_PID: 100, "service.name": "job"})
    childs = of_this_process(parents, 101)
    assert dict(childs.attributes) == {PROCESS_PID: 101, "service.name": "job"}
    assert of_this_process(childs, 101) is childs
    unnamed = Resource({"service.name": "job"})
    assert of_this_process(unnamed, 101) is unnamed
