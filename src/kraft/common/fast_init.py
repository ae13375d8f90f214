"""Faster ``__init__`` for the frozen, slotted dataclasses built on every message (interpreted only).

A frozen dataclass's generated ``__init__`` stores each field through ``object.__setattr__`` (its
own ``__setattr__`` refuses), about three times the cost of storing it through the field's slot
descriptor. ``speed_up_inits`` gives such classes an ``__init__`` with the same parameters
(names, order, keyword-only marks, defaults) that stores through the slot descriptors; instances
stay frozen (assignment still raises). Compiled by mypyc (the long sweeps' build), a frozen
dataclass keeps the dataclass-generated ``__init__`` and its fields are getset descriptors: those
are used the same way, which makes construction there about 40% cheaper. Classes with a
``__post_init__``, ``init=False`` fields or default factories are left alone.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from typing import Any


def speed_up_inits(*classes: type) -> None:
    for cls in classes:
        init = _slot_init(cls)
        if init is not None:
            cls.__init__ = init  # type: ignore[misc]


def _slot_init(cls: type) -> Any:
    fields = getattr(cls, "__dataclass_fields__", None)
    if not fields or hasattr(cls, "__post_init__"):
        return None
    names = [f.name for f in dataclasses.fields(cls)]
    if any(f.default_factory is not dataclasses.MISSING for f in dataclasses.fields(cls)):
        return None
    if any(not f.init for f in dataclasses.fields(cls)):
        return None
    setters = []
    for name in names:
        descriptor = cls.__dict__.get(name)
        if not isinstance(descriptor, (types.MemberDescriptorType, types.GetSetDescriptorType)):
            return None  # not a slotted (or compiled) class: keep the dataclass's own
        setters.append(descriptor.__set__)
    generated: Any = cls.__dict__["__init__"]  # the dataclass-generated one
    if not isinstance(generated, types.FunctionType):
        return None  # a native __init__ (mypyc's, for a class that is not frozen): already fast
    params = list(inspect.signature(generated).parameters.values())[1:]  # (self)
    if [p.name for p in params] != names:
        return None
    env: dict[str, Any] = {}
    source: list[str] = []
    keyword_only = False
    for i, p in enumerate(params):
        if p.kind is inspect.Parameter.KEYWORD_ONLY and not keyword_only:
            source.append("*")
            keyword_only = True
        elif p.kind not in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            return None
        if p.default is inspect.Parameter.empty:
            source.append(p.name)
        else:
            env[f"_d{i}"] = p.default
            source.append(f"{p.name}=_d{i}")
        env[f"_s{i}"] = setters[i]
    body = "\n".join(f"    _s{i}(self, {name})" for i, name in enumerate(names))
    exec(f"def __init__(self, {', '.join(source)}):\n{body}\n", env)  # names checked: dataclass fields
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init
