"""Scalars out of `Event` protos (tensorboard's `event_pb2`), in both encodings writers use.

torch's SummaryWriter (what Relax uses) and tensorboardX by default write `simple_value`; newer
writers (tensorboardX `new_style=True`, TensorFlow 2, tensorboard's own) write a rank-0 tensor:
its value in `float_val`/`double_val`/`int_val`/`int64_val`, or packed in `tensor_content`.
A tensor of another plugin (text, histograms, hparams) or of rank > 0 is not a scalar.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from typing import Any

# DataType enum values (tensorboard/compat/proto/types.proto) -> struct format of one value.
_PACKED = {1: "<f", 2: "<d", 3: "<i", 9: "<q", 4: "<B", 6: "<b", 5: "<h", 17: "<H", 19: "<e"}
_FIELDS = ("float_val", "double_val", "int_val", "int64_val", "half_val")

Scalar = tuple[str, int, float, float]  # tag, step, value, wall time


def _parser() -> Callable[[bytes], Any]:
    from tensorboard.compat.proto import event_pb2

    return event_pb2.Event.FromString


def decode_scalars(records: Iterable[bytes]) -> Iterator[Scalar]:
    """Every scalar in the serialized events; records that are not events are skipped."""
    parse = _parser()
    from google.protobuf.message import DecodeError

    for record in records:
        try:
            event = parse(record)
        except DecodeError:
            continue  # a record of something else: TensorBoard skips it too
        values = event.summary.value  # empty for events of another kind
        if not values:
            continue
        step, wall = event.step, event.wall_time
        for value in values:
            kind = value.WhichOneof("value")
            if kind == "simple_value":
                yield value.tag, step, float(value.simple_value), wall
            elif kind == "tensor":
                number = _tensor_scalar(value)
                if number is not None:
                    yield value.tag, step, number, wall


def _tensor_scalar(value: Any) -> float | None:
    plugin = value.metadata.plugin_data.plugin_name if value.HasField("metadata") else ""
    if plugin not in ("", "scalars"):
        return None
    tensor = value.tensor
    if len(tensor.tensor_shape.dim) and any(d.size != 1 for d in tensor.tensor_shape.dim):
        return None
    for name in _FIELDS:
        values = getattr(tensor, name)
        if len(values) == 1:
            if name == "half_val":  # 16-bit floats travel as their bits in an int
                return float(struct.unpack("<e", struct.pack("<H", values[0] & 0xFFFF))[0])
            return float(values[0])
    packed = _PACKED.get(tensor.dtype)
    if packed is not None and len(tensor.tensor_content) == struct.calcsize(packed):
        return float(struct.unpack(packed, tensor.tensor_content)[0])
    return None
