"""Frames to messages and back: field checking, the two registries, msgpack and JSON.

Decoding never raises: input that does not parse or does not fit a message becomes one
`Unexpected` value carrying an `ErrorCode` and a readable message.
"""

from __future__ import annotations

import dataclasses
import json
import reprlib
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

import msgpack

from protocol.client_to_server import ClientToServer
from protocol.codes import PROTOCOL_VERSION, ErrorCode
from protocol.message import Message, set_slots_directly
from protocol.server_to_client import Error, ServerToClient

__all__ = [
    "CLIENT_TO_SERVER",
    "SERVER_TO_CLIENT",
    "NotJson",
    "Registry",
    "Unexpected",
    "decode_json",
    "decode_msgpack",
    "encode_json",
    "encode_msgpack",
    "error_for",
    "from_wire",
    "pack_map",
    "parse_json",
    "to_wire",
]


# A frame whose value nests deeper than its decoder goes: no message nests more than a few
# levels, and a client that sends such a frame is told why it was not read.
NESTED_TOO_DEEPLY = "a value is nested too deeply"


@dataclass(frozen=True, slots=True)
class Unexpected:
    """Input that is not a valid message. Not a `Message`: it is never sent as is."""

    code: ErrorCode
    message: str
    type: str | None = None  # the "type" field, when there was one
    seq: int | None = None  # the "seq" and "id" fields, when they were readable integers
    id: int | None = None

    def to_error(self) -> Error:
        return Error(
            code=self.code.value, message=self.message, request=self.type, seq=self.seq, id=self.id
        )


def error_for(request: Message | Unexpected | None, code: str, message: str) -> Error:
    """An `error` that names the request it answers (its type, and its seq or id)."""
    if isinstance(request, Unexpected):
        return dataclasses.replace(request.to_error(), code=code, message=message)
    if request is None:
        return Error(code=code, message=message)
    return Error(
        code=code,
        message=message,
        request=request.TYPE,
        seq=getattr(request, "seq", None),
        id=getattr(request, "id", None),
    )


# ---------------------------------------------------------------- field checking

Check = Callable[[Any], bool]


def _is_int(x: Any) -> bool:
    # 64-bit, as msgpack carries: a bigger one (JSON allows any) could not be stored or
    # answered (a seq of 2**70 failed in the move's Redis write: error internal).
    return isinstance(x, int) and not isinstance(x, bool) and -(2**63) <= x < 2**63


def _too_big(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and not _is_int(x)


def _checker(annotation: Any) -> Check:
    """A predicate for the annotations used above (kept deliberately small)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is str:
        return lambda x: isinstance(x, str)
    if annotation is bool:
        return lambda x: isinstance(x, bool)
    if annotation is int:
        return _is_int
    if annotation is float:
        return lambda x: isinstance(x, float) or _is_int(x)
    if annotation is Any:
        return lambda x: True
    if typing.is_typeddict(annotation):  # a typed map (the room, a result): a map
        return lambda x: isinstance(x, dict) and all(isinstance(k, str) for k in x)
    if origin in (Union, types.UnionType):
        inner = [_checker(a) for a in args if a is not type(None)]
        nullable = type(None) in args
        return lambda x: (nullable and x is None) or any(c(x) for c in inner)
    if origin is list:
        item = _checker(args[0])
        return lambda x: isinstance(x, list) and all(item(i) for i in x)
    if origin is dict:
        key, value = _checker(args[0]), _checker(args[1])
        return lambda x: isinstance(x, dict) and all(key(k) and value(v) for k, v in x.items())
    raise TypeError(f"protocol: unsupported annotation {annotation!r}")


# Shows a client's value in an error message: a few levels and items of it, never the
# whole (repr of a list nested a thousand deep raised RecursionError and closed the socket).
_SHOW = reprlib.Repr()
_SHOW.maxlevel = 3
_SHOW.maxstring = 40
_SHOW.maxother = 40


@dataclass(frozen=True, slots=True)
class _Spec:
    cls: type[Message]
    fields: tuple[tuple[str, Check, bool], ...]  # name, check, required


def _unexpected(
    data: dict[str, Any], code: ErrorCode, message: str, spec: _Spec | None
) -> Unexpected:
    """An `Unexpected` naming the request it came from: its type, and its seq and id when
    they can be read (built only on failure: the hot path of every move stays as it was).
    Only the fields its type has (`spec`): a `seq` on a `ready` is an unknown field, as
    ignored here as when the message is read; a type this side does not know (`spec`
    None) keeps both, a newer peer's request. A type that could not be sent back as it
    came (too long, a lone surrogate) is left out."""
    type_name = data["type"]
    ok = len(type_name) <= 40 and type_name.isprintable()
    names = ("seq", "id") if spec is None else tuple(name for name, _, _ in spec.fields)
    seq = data.get("seq") if "seq" in names else None
    id_ = data.get("id") if "id" in names else None
    return Unexpected(
        code,
        message,
        type_name if ok else None,
        seq if _is_int(seq) else None,
        id_ if _is_int(id_) else None,
    )


class Registry:
    """The messages of one direction, by wire name."""

    def __init__(self, name: str, classes: tuple[type[Message], ...]) -> None:
        self.name = name
        self._specs: dict[str, _Spec] = {}
        for cls in classes:
            hints = typing.get_type_hints(cls)
            specs = []
            for f in dataclasses.fields(cls):
                required = (
                    f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                )
                specs.append((f.name, _checker(hints[f.name]), required))
            assert cls.TYPE and cls.TYPE not in self._specs, cls
            self._specs[cls.TYPE] = _Spec(cls, tuple(specs))
            set_slots_directly(cls)

    def build_trusted(self, data: dict[str, Any]) -> Message | Unexpected:
        """A message from a map this server wrote itself (e.g. read back from Redis):
        fields are not type-checked (the hot path of every event); never raises."""
        spec = self._specs.get(data.get("type", ""))
        if spec is not None and data.get("v") == PROTOCOL_VERSION:
            fields = dict(data)  # a copy less two keys: twice as fast as a comprehension
            del fields["type"], fields["v"]
            try:
                return spec.cls(**fields)
            except TypeError:
                pass
        return self.build(data)

    def build(self, data: Any) -> Message | Unexpected:
        """A message from a decoded map; never raises (a value nested deeper than the
        interpreter's recursion limit allows is a bad frame, not a crashed socket)."""
        try:
            return self._build(data)
        except RecursionError:
            return Unexpected(ErrorCode.BAD_FRAME, NESTED_TOO_DEEPLY)

    def _build(self, data: Any) -> Message | Unexpected:
        if not isinstance(data, dict):
            return Unexpected(ErrorCode.BAD_FRAME, "a message must be a map")
        type_name = data.get("type")
        version = data.get("v")
        # The version first (docs/protocol.md section 7): a map of another protocol
        # version need not name its type as this one does.
        if type(version) is not int or version != PROTOCOL_VERSION:  # not True, nor 1.0
            wrong = f'"v" must be {PROTOCOL_VERSION}, got {_SHOW.repr(version)}'[:200]
            if not isinstance(type_name, str):
                return Unexpected(ErrorCode.BAD_VERSION, wrong)
            return _unexpected(data, ErrorCode.BAD_VERSION, wrong, self._specs.get(type_name))
        if not isinstance(type_name, str):
            if type_name is None:
                return Unexpected(ErrorCode.UNKNOWN_TYPE, 'missing "type"')
            shown = _SHOW.repr(type_name)
            return Unexpected(ErrorCode.UNKNOWN_TYPE, f'"type" must be a string, got {shown}')
        spec = self._specs.get(type_name)
        if spec is None:
            return _unexpected(
                data, ErrorCode.UNKNOWN_TYPE, f"unknown message type {type_name[:40]!r}", None
            )
        kwargs: dict[str, Any] = {}
        for name, check, required in spec.fields:
            if name not in data or data[name] is None:
                if required:
                    return _unexpected(
                        data, ErrorCode.BAD_MESSAGE, f"{type_name}: missing field {name!r}", spec
                    )
                continue
            value = data[name]
            if not check(value):
                # A whole number of any length is valid JSON: say that its size is the fault.
                wrong = "has the wrong type"
                if _too_big(value):
                    wrong = "is beyond 64 bits (-2**63 .. 2**63-1)"
                return _unexpected(
                    data, ErrorCode.BAD_MESSAGE, f"{type_name}: field {name!r} {wrong}", spec
                )
            kwargs[name] = value
        try:
            return spec.cls(**kwargs)
        except Exception as exc:  # a dataclass refusing its input must not kill a socket
            return _unexpected(data, ErrorCode.BAD_MESSAGE, f"{type_name}: {exc}", spec)


CLIENT_TO_SERVER = Registry("client_to_server", typing.get_args(ClientToServer))
SERVER_TO_CLIENT = Registry("server_to_client", typing.get_args(ServerToClient))


# ---------------------------------------------------------------- codecs

_FIELD_NAMES: dict[type[Message], tuple[str, ...]] = {}


def to_wire(msg: Message) -> dict[str, Any]:
    """The map sent on the wire: `type`, `v`, then every field that is not None."""
    cls = type(msg)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    out: dict[str, Any] = {"type": cls.TYPE, "v": PROTOCOL_VERSION}
    for name in names:
        value = getattr(msg, name)
        if value is not None:
            out[name] = value
    return out


def from_wire(data: Any, registry: Registry = CLIENT_TO_SERVER) -> Message | Unexpected:
    return registry.build(data)


# One packer reused: msgpack.packb builds a Packer per call, half the cost of a small map.
_packer = msgpack.Packer(use_bin_type=True)


def pack_map(wire: dict[str, Any]) -> bytes:
    """A wire map as msgpack (what `msgpack.packb(wire, use_bin_type=True)` gives)."""
    return _packer.pack(wire)  # type: ignore[no-any-return]


def encode_msgpack(msg: Message) -> bytes:
    return pack_map(to_wire(msg))


def encode_json(msg: Message) -> str:
    return json.dumps(to_wire(msg), separators=(",", ":"), ensure_ascii=False)


def decode_msgpack(data: bytes, registry: Registry = CLIENT_TO_SERVER) -> Message | Unexpected:
    """Decode a binary frame; `registry` is CLIENT_TO_SERVER on the server,
    SERVER_TO_CLIENT in clients."""
    try:
        obj = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except msgpack.StackError:  # deeper than its 1024 levels (a ValueError too: first)
        return Unexpected(ErrorCode.BAD_FRAME, NESTED_TOO_DEEPLY)
    except Exception:  # msgpack raises many kinds (ExtraData, ValueError, ...)
        return Unexpected(ErrorCode.BAD_FRAME, "not a msgpack map of string keys")
    return registry.build(obj)


def decode_json(text: str | bytes, registry: Registry = CLIENT_TO_SERVER) -> Message | Unexpected:
    """Decode a text frame (the same maps as JSON)."""
    try:
        obj = parse_json(text)
    except NotJson as err:
        return Unexpected(ErrorCode.BAD_FRAME, str(err))
    except ValueError:
        return Unexpected(ErrorCode.BAD_FRAME, "not a JSON object")
    except RecursionError:  # deeper than the interpreter's recursion limit lets json go
        return Unexpected(ErrorCode.BAD_FRAME, NESTED_TOO_DEEPLY)
    return registry.build(obj)


def parse_json(text: str | bytes) -> Any:
    """JSON text as Python, an integer of more digits than Python converts being a value
    no field's check accepts (`_TooLong`), not a parse error: the request is refused for
    that field, as any integer out of range is. ValueError or RecursionError: no JSON."""
    if isinstance(text, bytes):  # as json.loads reads bytes
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    try:
        return _DECODER.decode(text)
    except NotJson:
        raise
    except (ValueError, RecursionError):
        # Only after a failure: the usual path keeps json's own integer parsing.
        return _DECODER_LONG.decode(text)


class NotJson(ValueError):
    """A constant Python's json reads and JSON (RFC 8259) does not have: NaN, Infinity."""


def _not_json(constant: str) -> Any:
    raise NotJson(f"{constant} is not JSON (RFC 8259 has no NaN or Infinity)")


class _TooLong:
    """A JSON integer of more digits than Python converts (`sys.get_int_max_str_digits()`,
    4,300): valid JSON, so the frame is read, and no field's check accepts it, so the
    message is refused `bad_message` like any integer out of range."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<integer too long>"


_TOO_LONG = _TooLong()


def _int_or_too_long(digits: str) -> int | _TooLong:
    try:
        return int(digits)
    except ValueError:
        return _TOO_LONG


_DECODER = json.JSONDecoder(parse_constant=_not_json)
_DECODER_LONG = json.JSONDecoder(parse_constant=_not_json, parse_int=_int_or_too_long)
