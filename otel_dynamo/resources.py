"""``TorchrunResourceDetector``: torchrun's ranks as OpenTelemetry resource attributes.

Registered under the SDK's ``opentelemetry_resource_detector`` entry point as
``torchrun``, so any application (not only otel_dynamo's own providers) can put
``torch.distributed.rank`` and friends on its resource::

    OTEL_EXPERIMENTAL_RESOURCE_DETECTORS=otel,torchrun torchrun --nproc-per-node 8 app.py

The public face of ``otel_dynamo._providers.resources``, which builds the resource of
otel_dynamo's own providers.
"""

from __future__ import annotations

from otel_dynamo._providers.resources import TorchrunResourceDetector

__all__ = ["TorchrunResourceDetector"]
