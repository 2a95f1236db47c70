"""Issue 26, item 11, in-process: only a regular file is read as a tokenizer. A FIFO, a device or
a directory is refused at once (opening a FIFO to read would wait for a writer), and a tokenizer
file swapped for one while the viewer runs leaves the ids without text, not a frozen process.

What touches a FIFO runs in a child process with a timeout: a reader blocked on a FIFO inside
the `tokenizers` library may hold the GIL, and a thread's timeout would then never come.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rollouts.web.tokenizer import load_tokenizer, tokenizer_problem
from tests.support.servers import REPO_ROOT
from tests.support.tokenizer import train_tokenizer

BLOCK_S = 30.0  # bound on a child that must not block; it ends in well under a second


def in_child(code: str, *args: str) -> Any:
    """What the Python `code` prints (JSON) in a child process given `args`; fails on a hang."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=BLOCK_S,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"blocked for more than {BLOCK_S} s")
    return json.loads(done.stdout.strip().splitlines()[-1])


STATE = """
import json, sys
from rollouts.web.tokenizer import tokenizer_problem, tokenizer_state
tokenizer, why = tokenizer_state(sys.argv[1])
print(json.dumps([tokenizer_problem(sys.argv[1]), tokenizer is None, why]))
"""


def special_file(tmp_path: Path, kind: str) -> Path:
    if kind == "FIFO":
        os.mkfifo(tmp_path / "tokenizer.json")
        return tmp_path / "tokenizer.json"
    if kind == "directory":
        (tmp_path / "tokenizer.json").mkdir()
        return tmp_path / "tokenizer.json"
    return Path("/dev/null")  # a character device


@pytest.mark.parametrize("kind", ["FIFO", "directory", "character device"])
def test_a_tokenizer_that_is_not_a_regular_file_is_refused_at_once(tmp_path, kind):
    path = special_file(tmp_path, kind)
    problem, none, why = in_child(STATE, str(path))
    assert problem == f"{path} is not a regular file (a {kind}): name a tokenizer.json"
    assert none is True
    assert why == f"the tokenizer file is not a regular file (a {kind}): name a tokenizer.json"


SWAP = """
import json, logging, os, sys
from pathlib import Path
from rollouts.web.tokenizer import load_tokenizer
from tests.support.tokenizer import train_tokenizer
said = []
logging.getLogger("rollouts").addHandler(logging.Handler())
logging.getLogger("rollouts").handlers[-1].emit = lambda r: said.append(r.getMessage())
path = train_tokenizer(Path(sys.argv[1]))
seen = [load_tokenizer(path) is not None]
path.unlink()
os.mkfifo(path)  # swapped in while the viewer runs
seen += [load_tokenizer(path) is not None, load_tokenizer(path) is not None]
path.unlink()
train_tokenizer(path)  # and back
seen.append(load_tokenizer(path) is not None)
print(json.dumps([seen, said]))
"""


def test_a_fifo_swapped_in_for_the_tokenizer_gives_ids_without_text(tmp_path):
    seen, said = in_child(SWAP, str(tmp_path / "tokenizer.json"))
    assert seen == [True, False, False, True]  # text, ids only (twice), text again
    (line,) = said  # said once, not once per page; the path in the log, never on a page
    assert line.startswith("the tokenizer file is not a regular file (a FIFO)")


def test_the_tokenizer_is_read_once_per_version_of_its_file(tmp_path):
    path = train_tokenizer(tmp_path / "tokenizer.json")
    first = load_tokenizer(path)
    again = load_tokenizer(path)
    assert first is not None and again is not None
    assert first._tokenizer is again._tokenizer  # the same parsed tokenizer
    (tmp_path / "other.json").write_bytes(path.read_bytes())
    os.replace(tmp_path / "other.json", path)  # another version: parsed again
    replaced = load_tokenizer(path)
    assert replaced is not None and replaced._tokenizer is not first._tokenizer


def test_a_tokenizer_file_that_is_not_utf8_is_said_in_one_line(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b"\xff\xfe not json")
    problem = tokenizer_problem(path)
    assert problem is not None and problem.startswith(f"{path} is not a tokenizer.json")
    assert "\n" not in problem
