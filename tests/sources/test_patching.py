"""The one way the taps patch: wrapt FunctionWrappers, recognised by their wrapper,
undone exactly."""

from __future__ import annotations

import sys
import types

import pytest
import wrapt

from otel_dynamo._sources import patching


def _calls_plus_ten(wrapped, _instance, args, kwargs):
    return wrapped(*args, **kwargs) + 10


def _someone_elses(wrapped, _instance, args, kwargs):
    return wrapped(*args, **kwargs) * 2


def _module():
    module = types.ModuleType("patched_for_test")
    module.add = lambda a, b=1: a + b
    return module


class Holder:
    @staticmethod
    def combine(a, b=1):
        return a + b

    def use(self):
        return self.combine(1)


def test_patch_wraps_with_wrapt_and_unpatch_puts_the_original_back():
    """patch makes a wrapt FunctionWrapper calling the wrapper; unpatch restores the
    very object that was there."""
    module = _module()
    original = module.add
    patching.patch(module, "add", _calls_plus_ten)
    assert isinstance(module.add, wrapt.FunctionWrapper)
    assert module.add(1, b=2) == 13
    assert patching.patched(module, "add", _calls_plus_ten) is True
    patching.unpatch(module, "add", _calls_plus_ten)
    assert module.add is original
    assert patching.patched(module, "add", _calls_plus_ten) is False


def test_a_second_patch_with_the_same_wrapper_changes_nothing():
    """Installing twice wraps once."""
    module = _module()
    first = patching.patch(module, "add", _calls_plus_ten)
    assert patching.patch(module, "add", _calls_plus_ten) is first
    assert module.add(1) == 12


def test_a_staticmethod_keeps_its_binding_and_comes_back_as_the_same_descriptor():
    """A class's staticmethod is wrapped as the descriptor it is: called through the
    class or an instance it gets no instance; unpatch restores the staticmethod object."""
    descriptor = vars(Holder)["combine"]
    patching.patch(Holder, "combine", _calls_plus_ten)
    try:
        assert Holder.combine(1, b=2) == 13
        assert Holder().use() == 12
    finally:
        patching.unpatch(Holder, "combine", _calls_plus_ten)
    assert vars(Holder)["combine"] is descriptor


def test_someone_elses_later_patch_is_kept_and_ours_under_it_switched_off():
    """A patch laid over ours by someone else is not taken for ours: unpatch leaves theirs
    in place and turns ours into a pass-through; a new install wraps afresh."""
    module = _module()
    patching.patch(module, "add", _calls_plus_ten)
    theirs = patching.patch(module, "add", _someone_elses)
    assert patching.patched(module, "add", _calls_plus_ten) is False
    patching.unpatch(module, "add", _calls_plus_ten)
    assert module.add is theirs
    assert module.add(1) == 4  # (1 + 1) * 2: their wrapper runs, ours no longer
    patching.patch(module, "add", _calls_plus_ten)
    assert module.add(1) == 14


def test_a_patched_function_copies_and_pickles_as_itself():
    """copy, deepcopy and pickle of a patched module function give the patch itself, as
    they give a plain function (a bare wrapt proxy raises NotImplementedError)."""
    import copy
    import pickle

    module = types.ModuleType("pickled_patch_test")
    module.add = _module().add
    module.add.__module__, module.add.__qualname__ = module.__name__, "add"
    sys.modules[module.__name__] = module
    try:
        made = patching.patch(module, "add", _calls_plus_ten)
        assert copy.copy(made) is made
        assert copy.deepcopy({"f": made})["f"] is made
        assert pickle.loads(pickle.dumps(made)) is made
    finally:
        del sys.modules[module.__name__]


def test_patching_what_is_not_there_raises_attribute_error():
    """An attribute the owner does not hold itself (inherited, absent) is refused."""
    with pytest.raises(AttributeError, match="no attribute 'missing' of its own"):
        patching.patch(_module(), "missing", _calls_plus_ten)
    with pytest.raises(AttributeError, match="'use' of its own"):
        patching.patch(type("Child", (Holder,), {}), "use", _calls_plus_ten)


def test_rebind_replaces_the_name_only_where_a_module_bound_the_old_object(monkeypatch):
    """Modules under the prefix holding the old object get the new one; others do not."""
    old, new, other = object(), object(), object()
    bound = types.ModuleType("rebind_test.bound")
    bound.f = old
    elsewhere = types.ModuleType("rebind_test.elsewhere")
    elsewhere.f = other
    outside = types.ModuleType("outside_test")
    outside.f = old
    for module in (bound, elsewhere, outside):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    patching.rebind(old, new, "f", ("rebind_test.",))
    assert (bound.f, elsewhere.f, outside.f) == (new, other, old)
