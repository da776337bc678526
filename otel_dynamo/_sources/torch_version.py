"""The torch version, for the one warning a hook gives when it does not fit this torch.

What differs between torch versions is kept beside each hook, commented with the
versions: where a class lives and how ``post_compile`` is called (``aot``), which signal
says a frame was skipped (``dynamo_stream.gave_up_silently``), whether ``Unsupported``
states its graph-break type (``torch_export_facts.graph_break_type``), where
``ConvertFrameAssert`` keeps its backend (``routing``), which attribute torch's cache
lookup follows down to a backend (``traced_backend.backend_chain_attribute``).
"""

from __future__ import annotations


def torch_version() -> str:
    """``torch.__version__`` as text ("unknown" if torch does not say)."""
    import torch

    return str(getattr(torch, "__version__", "unknown"))
