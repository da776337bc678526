"""The OpenTelemetry Resource every signal of this process carries.

The SDK builds it: ``Resource.create`` runs its detectors (``service_instance``, any named
in OTEL_EXPERIMENTAL_RESOURCE_DETECTORS, and last ``otel``, which reads
OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME) over its own ``telemetry.sdk.*``
attributes. Under all of that lie our detected attributes (``host.name``,
``process.pid``, the torchrun ranks), so the user's configuration wins over them; and our
default service name (the job's program, ``program_service_name``, else
``torch-compile``) replaces the SDK's ``unknown_service`` fallback only.

Like the SDK, this reads the process environment (``os.environ``). The SDK's parser of
OTEL_RESOURCE_ATTRIBUTES is the one that makes the attributes; the configuration check
(``otel_dynamo._config.otel_env``) only reports malformed items, once, naming the variable,
so the SDK's own warning about them is quieted while our resource is built.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import os
import socket
import sys
import types
from collections.abc import Iterator, Mapping
from pathlib import PurePath
from typing import Any

from opentelemetry.sdk.resources import Resource, ResourceDetector

from otel_dynamo import names
from otel_dynamo._providers import sdk_private

ENV_RANK = "RANK"
ENV_LOCAL_RANK = "LOCAL_RANK"
ENV_WORLD_SIZE = "WORLD_SIZE"
ENV_GROUP_RANK = "GROUP_RANK"
ENV_RUN_ID = "TORCHELASTIC_RUN_ID"
TORCH_DISTRIBUTION = "torch"

DEFAULT_SERVICE_NAME = "torch-compile"
"""``service.name`` where nobody named the service and there is no program to name it by
(``python -c``, the REPL)."""
MAIN_MODULE_SUFFIX = ".__main__"
SDK_FALLBACK_SERVICE_NAME = "unknown_service"
"""What the specification has the SDK call a service nobody named (``unknown_service``,
or ``unknown_service:<executable>``): the only service name our default replaces."""
SERVICE_NAME = names.RESOURCE_SERVICE_NAME
HOST_NAME = names.RESOURCE_HOST_NAME
PROCESS_PID = names.RESOURCE_PROCESS_PID
SDK_RESOURCE_LOGGER = "opentelemetry.sdk.resources"

_INT_ATTRIBUTES = (
    (ENV_RANK, names.RESOURCE_RANK),
    (ENV_LOCAL_RANK, names.RESOURCE_LOCAL_RANK),
    (ENV_WORLD_SIZE, names.RESOURCE_WORLD_SIZE),
    (ENV_GROUP_RANK, names.RESOURCE_NODE_RANK),
)

_log = logging.getLogger(__name__)


def build_resource(*, default_service_name: str | None = None) -> Resource:
    """The SDK's ``Resource.create`` over our detected attributes; when neither
    OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names the service,
    ``default_service_name``, else the job's program (``program_service_name``), else
    ``DEFAULT_SERVICE_NAME``."""
    if default_service_name is None:
        default_service_name = program_service_name() or DEFAULT_SERVICE_NAME
    with _sdk_pair_warnings_quieted():
        created = Resource.create()
    resource = Resource(detected_attributes(os.environ)).merge(created)
    service_name = str(resource.attributes.get(SERVICE_NAME, ""))
    if service_name.startswith(SDK_FALLBACK_SERVICE_NAME):
        resource = resource.merge(Resource({SERVICE_NAME: default_service_name}))
    return resource


def program_service_name(main: types.ModuleType | None = None) -> str | None:
    """The job's program, as a service name: ``python -m pkg.train`` gives ``pkg.train``,
    ``python train.py`` (and each rank of ``torchrun train.py``) ``train``, an installed
    command its name; None where no program names the job (``python -c``, the REPL,
    stdin). ``main`` is the ``__main__`` module (this process's by default)."""
    if main is None:
        main = sys.modules.get("__main__")
    spec_name = getattr(getattr(main, "__spec__", None), "name", None)
    if isinstance(spec_name, str) and spec_name:
        return spec_name.removesuffix(MAIN_MODULE_SUFFIX) or None
    path = getattr(main, "__file__", None)
    if not isinstance(path, str) or path.startswith("<"):
        return None
    return PurePath(path).stem or None


def detected_attributes(environ: Mapping[str, str]) -> dict[str, Any]:
    """host.name, process.pid, torch.version and the torchrun variables that are set and
    well formed."""
    attributes: dict[str, Any] = {HOST_NAME: socket.gethostname(), PROCESS_PID: os.getpid()}
    attributes.update(torch_version_attributes())
    attributes.update(torchrun_attributes(environ))
    return attributes


def torch_version_attributes() -> dict[str, str]:
    """``torch.version``: of the torch this process imported, else of the one installed
    (read from its package metadata: this layer never imports torch); none without one."""
    version = getattr(sys.modules.get("torch"), "__version__", None)
    if version is None:
        try:
            version = importlib.metadata.version(TORCH_DISTRIBUTION)
        except importlib.metadata.PackageNotFoundError:
            return {}
    return {names.RESOURCE_TORCH_VERSION: str(version)}


def of_this_process(resource: Resource, pid: int) -> Resource:
    """``resource`` with ``process.pid`` set to ``pid`` where it names another process:
    what a forked child exports where the SDK cannot update its providers' resource after
    the fork (1.38: no ``_update_resource``); where it can, or in the parent, the same
    object."""
    named = resource.attributes.get(PROCESS_PID)
    if named is None or named == pid:
        return resource
    return resource.merge(Resource({PROCESS_PID: pid}))


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


class _NoPairWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(sdk_private.RESOURCE_PAIR_WARNING_PREFIX)


@contextlib.contextmanager
def _sdk_pair_warnings_quieted() -> Iterator[None]:
    """The SDK's warning about a malformed OTEL_RESOURCE_ATTRIBUTES item, left out while
    inside: our configuration check has said it, naming the variable. A logger filter,
    not a per-thread one, because the SDK runs its detectors on a thread pool (joined
    before ``Resource.create`` returns)."""
    quiet = _NoPairWarnings()
    logger = logging.getLogger(SDK_RESOURCE_LOGGER)
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def _int_or_none(raw: str | None, variable: str) -> int | None:
    if raw is None or not raw.strip():
        return None
    try:
        return int(raw.strip())
    except ValueError:
        _log.debug("ignoring %s=%r: not an integer", variable, raw)
        return None
