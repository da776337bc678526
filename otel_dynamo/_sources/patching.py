"""How every tap patches torch: with wrapt, as opentelemetry-python-contrib's
instrumentations do (``wrapt.wrap_function_wrapper`` and ``unwrap``).

A patch replaces one attribute with a ``wrapt.FunctionWrapper`` around what was there
(a class's own descriptor, a staticmethod included, so that binding is torch's own);
``wrapper(wrapped, instance, args, kwargs)`` is wrapt's calling convention. ``patched``
recognises our own patch by its wrapper, so a second install is a no-op and someone
else's later patch is never taken for ours; ``unpatch`` puts back ``__wrapped__``, as
contrib's ``opentelemetry.instrumentation.utils.unwrap`` does (not imported: that module
loads the propagators, an entry-point scan at every traced start).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

import wrapt

Wrapper = Callable[[Callable[..., Any], Any, tuple[Any, ...], dict[str, Any]], Any]
"""wrapt's wrapper: ``(wrapped, instance, args, kwargs)``, returns what the call returns."""


def own_attribute(owner: Any, attribute: str) -> Any:
    """What ``owner`` itself holds under ``attribute``: a class's own descriptor (not the
    bound or inherited one), a module's object; None if it holds nothing there."""
    namespace = vars(owner) if isinstance(owner, type) else getattr(owner, "__dict__", {})
    return namespace.get(attribute)


def patched(owner: Any, attribute: str, wrapper: Wrapper) -> bool:
    """Whether ``owner.attribute`` is our patch made with ``wrapper``."""
    return _ours(own_attribute(owner, attribute), wrapper)


def patch(owner: Any, attribute: str, wrapper: Wrapper) -> Any:
    """Replace ``owner.attribute`` with a FunctionWrapper calling ``wrapper`` (once: an
    attribute already patched with ``wrapper`` is left as it is). Raises AttributeError
    if ``owner`` has no such attribute of its own."""
    current = own_attribute(owner, attribute)
    if current is None:
        raise AttributeError(f"{owner!r} has no attribute {attribute!r} of its own")
    if _ours(current, wrapper):
        return current
    function_wrapper = wrapt.FunctionWrapper(current, wrapper)
    setattr(owner, attribute, function_wrapper)
    return function_wrapper


def unpatch(owner: Any, attribute: str, wrapper: Wrapper) -> None:
    """Put back what our patch with ``wrapper`` replaced (nothing if it is not ours)."""
    current = own_attribute(owner, attribute)
    if _ours(current, wrapper):
        setattr(owner, attribute, current.__wrapped__)


def rebind(old: Any, new: Any, attribute: str, prefixes: Iterable[str]) -> None:
    """Every imported module named with one of ``prefixes`` that holds ``old`` under
    ``attribute`` (bound by name at its import: ``from x import f``) now holds ``new``."""
    starts = tuple(prefixes)
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith(starts):
            continue
        namespace = getattr(module, "__dict__", None)
        if namespace is not None and namespace.get(attribute) is old:
            setattr(module, attribute, new)


def _ours(value: Any, wrapper: Wrapper) -> bool:
    return isinstance(value, wrapt.FunctionWrapper) and bool(
        getattr(value, "_self_wrapper", None) == wrapper
    )
