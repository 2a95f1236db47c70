"""TensorBoard event files written by the tests themselves, with tensorboardX (a test extra).

Scalars in both encodings: `simple_value` (torch's SummaryWriter, which Relax uses, and
tensorboardX's `add_scalar`) and a rank-0 tensor (newer writers: `float_val`, or the value packed
in `tensor_content` as TensorFlow 2 writes it). Raw records too, for files cut or damaged by hand.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DT_FLOAT, DT_DOUBLE = 1, 2


def writer(directory: Path, suffix: str = "") -> Any:
    """A tensorboardX SummaryWriter into `directory` (one new event file)."""
    from tensorboardX import SummaryWriter

    return SummaryWriter(str(directory), filename_suffix=suffix, flush_secs=3600)


def tensor_summary(tag: str, value: float, packed: bool = False, double: bool = False) -> Any:
    """A Summary holding `value` as a rank-0 tensor of the scalars plugin."""
    from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboardX.proto.tensor_pb2 import TensorProto
    from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto

    dtype = DT_DOUBLE if double else DT_FLOAT
    if packed:
        content = struct.pack("<d" if double else "<f", value)
        tensor = TensorProto(dtype=dtype, tensor_content=content, tensor_shape=TensorShapeProto())
    elif double:
        tensor = TensorProto(dtype=dtype, double_val=[value], tensor_shape=TensorShapeProto())
    else:
        tensor = TensorProto(dtype=dtype, float_val=[value], tensor_shape=TensorShapeProto())
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=metadata)])


def write_scalars(
    directory: Path,
    scalars: Iterable[tuple[str, int, float]],
    style: str = "simple",
    suffix: str = "",
) -> Path:
    """One event file of (tag, step, value), written as `style` ("simple", "tensor",
    "packed"); returns its path."""
    w = writer(directory, suffix)
    for tag, step, value in scalars:
        if style == "simple":
            w.add_scalar(tag, value, step)
        else:
            w.file_writer.add_summary(tensor_summary(tag, value, packed=style == "packed"), step)
    w.close()
    return event_file(directory, suffix)


def event_file(directory: Path, suffix: str = "") -> Path:
    found = sorted(p for p in directory.iterdir() if p.name.startswith("events.out.tfevents."))
    found = [p for p in found if p.name.endswith(suffix)] if suffix else found
    return found[-1]


def record(data: bytes) -> bytes:
    """`data` framed as one TFRecord (the checksums as tensorboard computes them)."""
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    header = struct.pack("<Q", len(data))
    return (
        header
        + struct.pack("<I", masked_crc32c(header))
        + data
        + struct.pack("<I", masked_crc32c(data))
    )


def scalar_event(tag: str, step: int, value: float, wall: float = 1.0) -> bytes:
    """One serialized Event holding a simple_value scalar."""
    from tensorboardX.proto.event_pb2 import Event
    from tensorboardX.proto.summary_pb2 import Summary

    summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
    return bytes(Event(step=step, wall_time=wall, summary=summary).SerializeToString())
