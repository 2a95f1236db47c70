"""Issue 26, item 11, with real `visualize` processes: a tokenizer path that is a FIFO (or a
directory, or a device) stops `visualize` in one line instead of hanging it, and a FIFO swapped
in for the tokenizer file while the viewer runs leaves the sample page answering, with the ids
and no text.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.data import relax_line, sample
from tests.support.servers import get_json, request, run_manage, run_visualize
from tests.support.tokenizer import encode, train_tokenizer

pytestmark = pytest.mark.e2e

EXIT_S = 60.0  # bound on `visualize` refusing its flags: it does in about half a second
TEXT = "the cat sat on the mat"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    train = tmp_path / "data" / "train"
    train.mkdir(parents=True)
    ids = encode(train_tokenizer(tmp_path / "trained.json"), TEXT)
    line = sample(
        0, response=TEXT, response_token_ids=ids, response_rollout_log_probs=[-0.1] * len(ids)
    )
    (train / "1.jsonl").write_text(relax_line(line))
    return tmp_path / "data"


@pytest.mark.parametrize("kind", ["FIFO", "directory", "character device"])
def test_a_tokenizer_that_is_not_a_regular_file_stops_visualize_in_one_line(
    data_dir: Path, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "tokenizer.json"
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path = Path("/dev/null")
    done = run_manage("visualize", str(data_dir), "--tokenizer", str(path), timeout=EXIT_S)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines == [
        f"CommandError: --tokenizer: {path} is not a regular file (a {kind}): name a tokenizer.json"
    ]


def test_a_fifo_swapped_in_for_the_tokenizer_leaves_the_sample_page_answering(
    data_dir: Path, tmp_path: Path
) -> None:
    path = train_tokenizer(tmp_path / "tokenizer.json")
    with run_visualize(data_dir, "--tokenizer", str(path)) as server:
        status, body = get_json(server.url("/api/view/train/1/sample/0"))
        assert status == 200 and body["tokens"]["tokenizer"] is True
        path.unlink()
        os.mkfifo(path)  # swapped in while the viewer runs
        status, body = get_json(server.url("/api/view/train/1/sample/0"), timeout=EXIT_S)
        assert status == 200
        tokens = body["tokens"]
        assert tokens["tokenizer"] is False and tokens["tokens"] == len(
            encode(tmp_path / "trained.json", TEXT)
        )
        # The card says why the text is gone (by the file's kind, never its path).
        assert (
            "token text is not shown: the tokenizer file is not a regular file (a FIFO)"
            in " ".join(tokens["problems"])
        )
        # The card, as the sample page's script asks for it after the page.
        card_url = server.url("/train/1/sample/0/tokens/")
        status, _, page = request(card_url, headers={"RV-Fragment": "1"}, timeout=EXIT_S)
        assert status == 200 and b"rv-tokens" in page and b"token text is not shown" in page
        assert str(tmp_path).encode() not in page  # the path is in the log, never on a page
        assert "not a regular file (a FIFO)" in server.stderr()
        path.unlink()
        train_tokenizer(path)  # and back: text again
        status, body = get_json(server.url("/api/view/train/1/sample/0"))
        assert status == 200 and body["tokens"]["tokenizer"] is True
