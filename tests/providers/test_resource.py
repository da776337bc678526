"""build_resource: OTel's Resource.create plus host, process and torchrun attributes."""

from __future__ import annotations

import os
import socket

import pytest
from _export_support import clear_otel_environ

from otel_dynamo import names
from otel_dynamo._providers.resources import build_resource


@pytest.fixture(autouse=True)
def _no_stray_otel_variables(monkeypatch):
    clear_otel_environ(monkeypatch)


def test_default_service_name_is_torch_compile():
    """With neither OTEL_SERVICE_NAME nor service.name in attributes: "torch-compile"."""
    assert build_resource({}).attributes["service.name"] == "torch-compile"


def test_otel_service_name_wins():
    """OTEL_SERVICE_NAME sets service.name, over OTEL_RESOURCE_ATTRIBUTES' service.name."""
    environ = {"OTEL_SERVICE_NAME": "trainer", "OTEL_RESOURCE_ATTRIBUTES": "service.name=other"}
    assert build_resource(environ).attributes["service.name"] == "trainer"


def test_resource_attributes_are_honoured_and_url_decoded():
    """OTEL_RESOURCE_ATTRIBUTES items become attributes, values URL-decoded."""
    environ = {"OTEL_RESOURCE_ATTRIBUTES": "service.name=svc,team=ml%20infra,deployment=dev"}
    attributes = build_resource(environ).attributes
    assert (attributes["service.name"], attributes["team"], attributes["deployment"]) == (
        "svc",
        "ml infra",
        "dev",
    )


def test_torchrun_variables_become_int_attributes():
    """RANK, LOCAL_RANK, WORLD_SIZE, GROUP_RANK become int attributes under our names."""
    environ = {"RANK": "5", "LOCAL_RANK": "1", "WORLD_SIZE": "8", "GROUP_RANK": "2"}
    attributes = build_resource(environ).attributes
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


def test_run_id_is_a_string_attribute():
    """TORCHELASTIC_RUN_ID becomes torch.distributed.run_id, a string."""
    attributes = build_resource({"TORCHELASTIC_RUN_ID": "0042"}).attributes
    assert attributes[names.RESOURCE_RUN_ID] == "0042"


def test_malformed_rank_is_left_out():
    """A RANK that is not an integer adds no attribute (and does not fail)."""
    attributes = build_resource({"RANK": "zero", "WORLD_SIZE": "4"}).attributes
    assert names.RESOURCE_RANK not in attributes
    assert attributes[names.RESOURCE_WORLD_SIZE] == 4


def test_without_torchrun_no_rank_attributes():
    """Outside torchrun there are no torch.distributed.* attributes at all."""
    attributes = build_resource({}).attributes
    assert not [key for key in attributes if key.startswith("torch.distributed.")]


def test_host_and_process_attributes():
    """host.name is the host name and process.pid this process's id."""
    attributes = build_resource({}).attributes
    assert (attributes["host.name"], attributes["process.pid"]) == (
        socket.gethostname(),
        os.getpid(),
    )


def test_sdk_attributes_are_kept():
    """Resource.create's own attributes (SDK name, language) are present."""
    attributes = build_resource({}).attributes
    assert (attributes["telemetry.sdk.name"], attributes["telemetry.sdk.language"]) == (
        "opentelemetry",
        "python",
    )


def test_user_attribute_overrides_detected_one():
    """OTEL_RESOURCE_ATTRIBUTES takes precedence over what we detect (e.g. host.name)."""
    attributes = build_resource({"OTEL_RESOURCE_ATTRIBUTES": "host.name=node-7"}).attributes
    assert attributes["host.name"] == "node-7"
