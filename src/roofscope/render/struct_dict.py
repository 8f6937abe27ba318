"""A result object as a dict, as ``dataclasses.asdict`` made it before results became
``msgspec.Struct``: nested results, lists, tuples and dicts are converted all the way down
(``msgspec.structs.asdict`` converts the top level only); leaves are kept as they are."""

from __future__ import annotations

from typing import Any

import msgspec


def asdict(obj: msgspec.Struct) -> dict[str, Any]:
    """``obj``'s fields by name, in their order, every nested result a dict too."""
    return {name: _value(getattr(obj, name)) for name in obj.__struct_fields__}


def _value(value: object) -> object:
    if isinstance(value, msgspec.Struct):
        return asdict(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        named: Any = type(value)
        return named(*(_value(v) for v in value))
    if isinstance(value, list | tuple):
        return type(value)(_value(v) for v in value)
    if isinstance(value, dict):
        return {_value(k): _value(v) for k, v in value.items()}
    return value
