"""How a frame was asked to be compiled, read from what torch keeps of ``torch.compile``'s
arguments.

``torch.compile(model, backend=..., mode=..., options=..., dynamic=..., fullgraph=...)``
wraps the backend (``torch._TorchCompileInductorWrapper`` for inductor, keeping the
options its mode stands for merged with the user's in ``config``;
``torch._TorchCompileWrapper`` for any other, keeping ``mode`` and ``options`` in
``kwargs``; both keep ``dynamic``) and hands it to Dynamo, whose ``ConvertFrameAssert``
keeps it and ``fullgraph`` (``_one_graph``). The router reads both when a frame compile
starts (``routing.FrameCompileRouter``); this module turns them into ``CompileSettings``.
Public API only for the modes (``torch._inductor.list_mode_options``); anything
unexpected gives no settings, with one warning, never an error.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from otel_dynamo import names
from otel_dynamo._recording.stream_events import CompileSettings
from otel_dynamo._sources.torch_version import torch_version

_log = logging.getLogger(__name__)

WRAPPER_TYPES = (
    "_TorchCompileInductorWrapper",
    "_TorchCompileAOTInductorWrapper",
    "_TorchCompileWrapper",
)
"""The ``torch`` classes ``torch.compile`` wraps a backend in."""
CHAIN_ATTRIBUTES = ("_torchdynamo_orig_backend", "_torchdynamo_orig_callable", "inner")
"""Followed from the backend Dynamo holds to ``torch.compile``'s wrapper: Dynamo's debug
wrapper (``WrapBackendDebug``, which also copies the wrapper's attributes), a traced
backend (``inner``)."""
MAX_CHAIN = 8


class SettingsReader:
    """Reads ``CompileSettings``; switches itself off, with one warning, on a torch whose
    wrappers it does not understand."""

    def __init__(self) -> None:
        self._off = False

    def settings_of(self, convert: object, compiler: object) -> CompileSettings | None:
        """The settings of a compile by ``compiler`` under ``convert`` (Dynamo's
        ``ConvertFrameAssert``)."""
        if self._off:
            return None
        try:
            return _read(convert, compiler)
        except Exception:
            self._off = True
            _log.warning(
                "otel_dynamo: could not read how a frame was compiled (torch %s); frame "
                "spans do not carry torch.compile's mode, options, dynamic and fullgraph",
                torch_version(),
                exc_info=True,
            )
            return None


def _read(convert: object, compiler: object) -> CompileSettings:
    one_graph = getattr(convert, "_one_graph", None)
    fullgraph = one_graph if isinstance(one_graph, bool) else None
    wrapper = _compile_wrapper(compiler)
    if wrapper is None:
        return CompileSettings(fullgraph=fullgraph)
    given = getattr(wrapper, "dynamic", None)
    dynamic = given if isinstance(given, bool) else None
    config = getattr(wrapper, "config", None)
    if isinstance(config, dict):
        mode, options = _inductor_mode(config, dynamic)
    else:
        kwargs = getattr(wrapper, "kwargs", None) or {}
        mode = str(kwargs.get("mode") or names.COMPILE_MODE_DEFAULT)
        options = dict(kwargs.get("options") or {})
    return CompileSettings(
        mode=mode,
        options=_as_json(options) if options else None,
        dynamic=dynamic,
        fullgraph=fullgraph,
    )


def _compile_wrapper(compiler: object) -> object | None:
    """``torch.compile``'s wrapper down the chain from ``compiler``, or None."""
    import torch

    types = tuple(t for name in WRAPPER_TYPES if isinstance(t := getattr(torch, name, None), type))
    for _ in range(MAX_CHAIN):
        if compiler is None:
            return None
        if isinstance(compiler, types):
            return compiler
        compiler = next(
            (inner for name in CHAIN_ATTRIBUTES if (inner := getattr(compiler, name, None))),
            None,
        )
    return None


def _inductor_mode(config: dict[str, Any], dynamic: bool | None) -> tuple[str, dict[str, Any]]:
    """The mode whose options inductor's ``config`` holds (the one with most of them), and
    the options beyond it."""
    from torch._inductor import list_mode_options

    best = names.COMPILE_MODE_DEFAULT
    best_options: dict[str, Any] = {}
    for mode, options in list_mode_options(None, dynamic).items():
        held = all(key in config and config[key] == value for key, value in options.items())
        if held and len(options) > len(best_options):
            best, best_options = mode, options
    return best, {key: value for key, value in config.items() if key not in best_options}


def _as_json(options: dict[str, Any]) -> str:
    named = {str(key): value for key, value in options.items()}
    return json.dumps(named, sort_keys=True, default=lambda value: type(value).__name__)


reader = SettingsReader()
