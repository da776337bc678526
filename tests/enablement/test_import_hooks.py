"""Post-import hooks: a callback runs once, right after its module is imported."""

from __future__ import annotations

import sys

from otel_dynamo._enablement import import_hooks


def _module_file(tmp_path, name):
    (tmp_path / f"{name}.py").write_text("VALUE = 7\n")
    return name


def test_callback_runs_right_after_the_module_is_imported(tmp_path, monkeypatch):
    """A callback registered before the import gets the module once it has executed."""
    name = _module_file(tmp_path, "hooked_after_import")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    import_hooks.when_imported(name, lambda module: seen.append(module.VALUE))
    try:
        __import__(name)
    finally:
        sys.modules.pop(name, None)
    assert seen == [7]


def test_the_same_callback_asked_twice_runs_once(tmp_path, monkeypatch):
    """A .pth processed twice (some virtual environments do) registers its hook twice:
    it still runs once, and one cancel takes it back."""
    name = _module_file(tmp_path, "hooked_twice")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: list[int] = []

    def callback(module):
        seen.append(module.VALUE)

    import_hooks.when_imported(name, callback)
    import_hooks.when_imported(name, callback)
    try:
        __import__(name)
    finally:
        sys.modules.pop(name, None)
    assert seen == [7]
    never_imported = name + "_cancelled"
    try:
        import_hooks.when_imported(never_imported, callback)
        import_hooks.when_imported(never_imported, callback)
        import_hooks.cancel(never_imported, callback)
        assert import_hooks._pending[never_imported] == []
    finally:
        import_hooks._pending.pop(never_imported, None)  # process-wide: leave none behind


def test_a_module_already_imported_calls_back_at_once():
    """No waiting for a module that is loaded already."""
    seen = []
    import_hooks.when_imported("json", lambda module: seen.append(module.__name__))
    assert seen == ["json"]
