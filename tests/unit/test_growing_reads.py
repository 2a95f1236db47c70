"""A step that grows while it is read is never taken for a rewritten one: the growth check
reads the last scan's offset and bytes as one, never a new offset with the old bytes."""

from __future__ import annotations

import json
import sys
import threading

from rollouts.store.errors import StepChanged
from rollouts.store.index import StepIndex

APPENDS = 600
READS = 20000


def test_reads_while_the_file_grows_and_is_rescanned_never_see_a_rewrite(tmp_path):
    path = tmp_path / "0.jsonl"
    line = (json.dumps({"response": "x" * 300}) + "\n").encode()
    path.write_bytes(line * 2)
    index = StepIndex.build(path, "train/0.jsonl")
    done = threading.Event()

    def grow() -> None:
        try:
            with path.open("ab") as f:
                for _ in range(APPENDS):
                    f.write(line)
                    f.flush()
                    index.refresh()  # the same index, extended: a scan from its last offset
        finally:
            done.set()

    changed: list[str] = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: any window shows
    try:
        writer = threading.Thread(target=grow)
        writer.start()
        for n in range(READS):
            try:
                index.read(n % 2)
            except StepChanged as exc:
                changed.append(str(exc))
            if done.is_set() and n > READS // 2:
                break
        writer.join()
    finally:
        sys.setswitchinterval(interval)
    assert changed == []
    assert index.refresh() is index and len(index) == APPENDS + 2
