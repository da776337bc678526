"""How every tap patches torch: with wrapt, as opentelemetry-python-contrib's
instrumentations do (``wrapt.wrap_function_wrapper`` and ``unwrap``).

A patch replaces one attribute with a ``wrapt.FunctionWrapper`` around what was there
(a class's own descriptor, so a staticmethod binds as one); ``wrapper(wrapped, instance,
args, kwargs)`` is wrapt's calling convention. ``patched`` recognises our own live patch
by its wrapper, so a second install is a no-op and someone else's later patch is never
taken for ours. ``unpatch`` puts back ``__wrapped__``, as contrib's
``opentelemetry.instrumentation.utils.unwrap`` does (not imported: that module loads the
propagators, an entry-point scan at every traced start); where someone else has patched
on top of ours since, ours cannot be taken out of their chain, so it is switched off and
passes every call straight through. A patched function copies and pickles as the
function it stands for (a plain wrapt proxy refuses both).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import wrapt

Wrapper = Callable[[Callable[..., Any], Any, tuple[Any, ...], dict[str, Any]], Any]
"""wrapt's wrapper: ``(wrapped, instance, args, kwargs)``, returns what the call returns."""
MAX_CHAIN = 16
"""Patches looked through, outermost first, for ours under someone else's."""
_lock = threading.Lock()


class _Switch:
    """Whether a patch still calls its wrapper (wrapt's ``enabled``): while it is on and,
    if it was given one, its ``when`` says so. Asked by wrapt before the call, from C: when
    it says no, the original is called with no frame of ours on the stack."""

    __slots__ = ("on", "when")

    def __init__(self, when: Callable[[], bool] | None = None) -> None:
        self.on = True
        self.when = when

    def __call__(self) -> bool:
        return self.on and (self.when is None or self.when())


if TYPE_CHECKING:
    _FunctionWrapper = wrapt.FunctionWrapper[..., Any]
else:  # not subscriptable at run time
    _FunctionWrapper = wrapt.FunctionWrapper


class _Patch(_FunctionWrapper):
    """A FunctionWrapper that copies and pickles as the function it stands for."""

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self

    def __reduce_ex__(self, protocol: Any) -> Any:
        # A global found by name, which is this patch (pickle checks that it is).
        return getattr(self.__wrapped__, "__qualname__", None)


def own_attribute(owner: Any, attribute: str) -> Any:
    """What ``owner`` itself holds under ``attribute``: a class's own descriptor (not the
    bound or inherited one), a module's object; None if it holds nothing there."""
    namespace = vars(owner) if isinstance(owner, type) else getattr(owner, "__dict__", {})
    return namespace.get(attribute)


def patched(owner: Any, attribute: str, wrapper: Wrapper) -> bool:
    """Whether ``owner.attribute`` is our live patch made with ``wrapper``."""
    return _ours(own_attribute(owner, attribute), wrapper)


def patch(
    owner: Any, attribute: str, wrapper: Wrapper, *, when: Callable[[], bool] | None = None
) -> Any:
    """Replace ``owner.attribute`` with a FunctionWrapper calling ``wrapper`` and return
    it (once: an attribute already patched with ``wrapper`` is left as it is); with
    ``when``, only calls for which ``when()`` is true reach ``wrapper``, the others go
    straight to the original. Raises AttributeError if ``owner`` has no such attribute of
    its own."""
    with _lock:
        current = own_attribute(owner, attribute)
        if current is None:
            raise AttributeError(f"{owner!r} has no attribute {attribute!r} of its own")
        if _ours(current, wrapper):
            return current
        made = _Patch(current, wrapper, enabled=_Switch(when))
        setattr(owner, attribute, made)
        return made


def unpatch(owner: Any, attribute: str, wrapper: Wrapper) -> None:
    """Take out our patch with ``wrapper``: put back what it replaced if it is outermost,
    else switch it off where it sits in someone else's chain."""
    with _lock:
        current = own_attribute(owner, attribute)
        if _ours(current, wrapper):
            _switch_of(current).on = False
            setattr(owner, attribute, current.__wrapped__)
            return
        for _ in range(MAX_CHAIN):
            current = getattr(current, "__wrapped__", None)
            if current is None:
                return
            if _ours(current, wrapper):
                _switch_of(current).on = False
                return


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
    """A live patch of ours made with ``wrapper``."""
    return (
        isinstance(value, _Patch) and bool(value._self_wrapper == wrapper) and _switch_of(value).on
    )


def _switch_of(made: _Patch) -> _Switch:
    switch = made._self_enabled
    assert isinstance(switch, _Switch)  # every _Patch is made with one
    return switch
