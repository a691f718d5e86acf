"""Every registered message's constructor (protocol/message.py's `set_slots_directly`)
behaves as the frozen dataclass's own: fields, defaults, errors, immutability."""

from __future__ import annotations

import dataclasses

import pytest

import protocol as p
from protocol.message import set_slots_directly


def _classes() -> list[type[p.Message]]:
    found: list[type[p.Message]] = []
    for registry in (p.CLIENT_TO_SERVER, p.SERVER_TO_CLIENT):
        found += [spec.cls for spec in registry._specs.values()]
    return found


def test_the_hot_messages_get_the_direct_constructor() -> None:
    # The dataclass's own __init__ has the same name: tell them apart by what they call.
    for cls in (p.Move, p.Progress, p.Accepted):
        setters = {f"_set_{f.name}" for f in dataclasses.fields(cls)}
        assert setters <= set(cls.__init__.__globals__), cls


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.TYPE)
def test_a_message_is_built_as_the_dataclass_builds_it(cls: type[p.Message]) -> None:
    fields = dataclasses.fields(cls)
    values = {f.name: f"value of {f.name}" for f in fields}
    message = cls(**values)
    assert {f.name: getattr(message, f.name) for f in fields} == values
    for f in fields:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(message, f.name, None)
    with pytest.raises(TypeError):
        cls(**values, not_a_field=1)
    required = [f.name for f in fields if f.default is dataclasses.MISSING]
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    if required:
        with pytest.raises(TypeError):
            cls(**{k: v for k, v in values.items() if k != required[0]})
    built = cls(**{k: values[k] for k in required})
    assert {k: getattr(built, k) for k in defaults} == defaults
    assert built == cls(**{k: values[k] for k in required})
    assert dataclasses.replace(message, **{k: values[k] for k in required}) == message


def test_a_field_outside_the_constructor_keeps_the_dataclass_own() -> None:
    # The generated __init__ sets only what it is passed: a field with init=False (set by
    # the dataclass's own __init__ from its default) would be left empty.
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Odd(p.Message):
        a: int
        b: int = dataclasses.field(default=2, init=False)

    own = Odd.__init__
    set_slots_directly(Odd)
    assert Odd.__init__ is own and Odd(a=1).b == 2
