"""The OpenTelemetry Resource every signal of this process carries.

Precedence, lowest first: our default service name, what we detect (host, process,
torchrun ranks), OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME. Values are read from the
``environ`` passed in, so a test (or a launcher) can describe another process's
environment; ``Resource.create`` adds the SDK's own attributes (telemetry.sdk.*,
service.instance.id).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping
from typing import Any

from opentelemetry.sdk.environment_variables import OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME
from opentelemetry.sdk.resources import Resource, ResourceDetector

from otel_dynamo import names
from otel_dynamo._config.pairs import parse_pairs

ENV_RANK = "RANK"
ENV_LOCAL_RANK = "LOCAL_RANK"
ENV_WORLD_SIZE = "WORLD_SIZE"
ENV_GROUP_RANK = "GROUP_RANK"
ENV_RUN_ID = "TORCHELASTIC_RUN_ID"

DEFAULT_SERVICE_NAME = "torch-compile"
SERVICE_NAME = names.RESOURCE_SERVICE_NAME
HOST_NAME = names.RESOURCE_HOST_NAME
PROCESS_PID = names.RESOURCE_PROCESS_PID

_INT_ATTRIBUTES = (
    (ENV_RANK, names.RESOURCE_RANK),
    (ENV_LOCAL_RANK, names.RESOURCE_LOCAL_RANK),
    (ENV_WORLD_SIZE, names.RESOURCE_WORLD_SIZE),
    (ENV_GROUP_RANK, names.RESOURCE_NODE_RANK),
)

_log = logging.getLogger(__name__)


def build_resource(environ: Mapping[str, str] | None = None) -> Resource:
    """Resource.create with our defaults, host/process and torchrun attributes."""
    env = os.environ if environ is None else environ
    attributes: dict[str, Any] = {SERVICE_NAME: DEFAULT_SERVICE_NAME}
    attributes.update(detected_attributes(env))
    attributes.update(configured_attributes(env))
    return Resource.create(attributes)


def detected_attributes(environ: Mapping[str, str]) -> dict[str, Any]:
    """host.name, process.pid and the torchrun variables that are set and well formed."""
    attributes: dict[str, Any] = {HOST_NAME: socket.gethostname(), PROCESS_PID: os.getpid()}
    attributes.update(torchrun_attributes(environ))
    return attributes


class TorchrunResourceDetector(ResourceDetector):
    """The torchrun rank, local rank, world size, node rank and run id of this process,
    from the variables torchrun sets. Registered as the ``opentelemetry_resource_detector``
    entry point ``torchrun``: any application gets them with
    ``OTEL_EXPERIMENTAL_RESOURCE_DETECTORS=otel,torchrun``."""

    def detect(self) -> Resource:
        return Resource(torchrun_attributes(os.environ))


def torchrun_attributes(environ: Mapping[str, str]) -> dict[str, Any]:
    """The torchrun variables that are set and well formed, as resource attributes."""
    attributes: dict[str, Any] = {}
    for variable, key in _INT_ATTRIBUTES:
        value = _int_or_none(environ.get(variable), variable)
        if value is not None:
            attributes[key] = value
    run_id = environ.get(ENV_RUN_ID, "").strip()
    if run_id:
        attributes[names.RESOURCE_RUN_ID] = run_id
    return attributes


def configured_attributes(environ: Mapping[str, str]) -> dict[str, str]:
    """OTEL_RESOURCE_ATTRIBUTES then OTEL_SERVICE_NAME, parsed as the SDK parses them."""
    attributes = parse_resource_attributes(environ.get(OTEL_RESOURCE_ATTRIBUTES, ""))
    service_name = environ.get(OTEL_SERVICE_NAME, "").strip()
    if service_name:
        attributes[SERVICE_NAME] = service_name
    return attributes


def parse_resource_attributes(raw: str) -> dict[str, str]:
    """``key=value,key2=value2`` with URL-encoded values; malformed items are skipped (the
    configuration's problem names them)."""
    items, _malformed = parse_pairs(raw)
    return dict(items)


def _int_or_none(raw: str | None, variable: str) -> int | None:
    if raw is None or not raw.strip():
        return None
    try:
        return int(raw.strip())
    except ValueError:
        _log.debug("ignoring %s=%r: not an integer", variable, raw)
        return None
