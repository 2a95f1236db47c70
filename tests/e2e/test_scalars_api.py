"""TensorBoard scalars through real `visualize` servers (issue 17): `api/scalars`, the `tb.`
series and the KL rule in the trends JSON, the poll's cursor, several runs each with their own
`tensorboard_log/`, `--tensorboard`, the banner, and a viewer without the tensorboard package.
Event files are written here with tensorboardX; expectations come from what was written.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rollouts.install import install_hint
from tests.support.data import relax_line, sample
from tests.support.events import record, scalar_event, tensor_summary, writer
from tests.support.servers import ServerProcess, get_json, run_manage, run_visualize
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

STEPS = 6
KL = [0.01, 0.02, 0.03, 0.04, 0.05, 0.2]  # per step; step 99 then logs 0.0


def write_run(save: Path, kl: list[float], extra_tag: str = "perf/tokens_per_s") -> None:
    """<save>/rollout_result/train/0..5.jsonl and <save>/tensorboard_log/ with both encodings."""
    train = save / "rollout_result" / "train"
    train.mkdir(parents=True)
    for step in range(STEPS):
        lines = [sample(i, rollout_id=step, reward=float((i + step) % 2)) for i in range(4)]
        (train / f"{step}.jsonl").write_text("".join(relax_line(x) for x in lines))
    w = writer(save / "tensorboard_log")
    for step, value in enumerate(kl):
        w.add_scalar("train/kl_loss", value, step)
        w.add_scalar("train/grad_norm", math.nan if step == 2 else 1.0 + step, step)
        w.file_writer.add_summary(tensor_summary(extra_tag, 100.0 * step), step)
    w.add_scalar("train/kl_loss", 0.0, 99)  # a step with no samples: in the API, not the trends
    w.close()


def wait_for_trends(server: ServerProcess, prefix: str = "") -> dict[str, Any]:
    def answer() -> dict[str, Any]:
        status, body = get_json(server.url(f"{prefix}/api/jsonl/train/trends"))
        assert status == 200
        return body

    return wait_for(
        answer,
        f"the trends of {STEPS} steps",
        until=lambda body: body["done"] and len(body["points"]) == STEPS,
    )


@pytest.fixture(scope="module")
def save(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scalars") / "save"
    write_run(root, KL)
    damaged = root / "tensorboard_log" / "events.out.tfevents.9.damaged"
    damaged.write_bytes(record(scalar_event("eval/score", 1, 0.5)) + b"\x00garbage-bytes-here")
    return root


@pytest.fixture(scope="module")
def server(save: Path) -> Iterator[ServerProcess]:
    # The data dir is <save>/rollout_result: its tensorboard_log/ is found one level up.
    with run_visualize(save / "rollout_result") as running:
        yield running


def test_the_banner_says_what_was_found(server: ServerProcess) -> None:
    banner = server.stdout()
    assert "scalars: 2 event files in save/tensorboard_log (beside rollout_result)" in banner


def test_api_scalars_has_every_tag_and_its_points(server: ServerProcess) -> None:
    status, body = get_json(server.url("/api/scalars"))
    assert status == 200
    tags = {t["tag"]: t for t in body["tags"]}
    assert set(tags) == {"train/kl_loss", "train/grad_norm", "perf/tokens_per_s", "eval/score"}
    assert tags["train/kl_loss"] == {
        "tag": "train/kl_loss",
        "points": STEPS + 1,
        "first_step": 0,
        "last_step": 99,
    }
    kl = body["series"]["train/kl_loss"]
    assert [p[0] for p in kl] == [*range(STEPS), 99]
    assert [p[1] for p in kl[:STEPS]] == pytest.approx(KL)
    assert all(isinstance(p[2], float) and p[2] > 1e9 for p in kl)  # wall times
    assert body["series"]["train/grad_norm"][2] == [
        2,
        None,
        body["series"]["train/grad_norm"][2][2],
    ]
    assert [p[1] for p in body["series"]["perf/tokens_per_s"]] == [100.0 * s for s in range(STEPS)]
    source = body["source"]
    assert source["found"] and source["directory"] == "save/tensorboard_log"
    damaged = next(f for f in source["files"] if f["name"].endswith(".damaged"))
    assert damaged["error"] == f"a damaged record header at byte {damaged['bytes']}"
    assert str(server.url("")) not in json.dumps(body) and "/tmp" not in json.dumps(body)


def test_api_scalars_filters_tags_and_cuts_at_after(server: ServerProcess) -> None:
    status, spaced = get_json(server.url("/api/scalars?tags=perf/tokens_per_s%20,%20eval/score"))
    assert [t["tag"] for t in spaced["tags"]] == ["eval/score", "perf/tokens_per_s"]
    status, body = get_json(server.url("/api/scalars?tags=train/kl_loss,%20nope&after=3"))
    assert status == 200
    assert [t["tag"] for t in body["tags"]] == ["train/kl_loss"]
    assert list(body["series"]) == ["train/kl_loss"]
    assert [p[0] for p in body["series"]["train/kl_loss"]] == [4, 5, 99]


# A negative `after` is a step like any other (TensorBoard's are int64): below int64 is the 400.
@pytest.mark.parametrize("query", ["after=x", f"after={-(2**63) - 1}", "after=1.5"])
def test_api_scalars_bad_parameters_answer_the_error_shape(
    server: ServerProcess, query: str
) -> None:
    status, body = get_json(server.url(f"/api/scalars?{query}"))
    assert status == 400
    assert body["ok"] is False and body["error"] == "Bad Request" and "after" in body["message"]


def test_the_trends_offer_each_scalar_on_the_steps_that_logged_it(server: ServerProcess) -> None:
    body = wait_for_trends(server)
    series = {s["key"]: s for s in body["series"]}
    assert series["tb.train/kl_loss"]["kind"] == "tb:train"
    assert series["tb.perf/tokens_per_s"]["kind"] == "tb:perf"
    assert series["tb.train/kl_loss"]["on_steps"] == STEPS  # step 99 has no samples here
    by_step = {p["step"]: p["metrics"] for p in body["points"]}
    assert [by_step[s]["tb.train/kl_loss"] for s in range(STEPS)] == pytest.approx(KL)
    assert by_step[2]["tb.train/grad_norm"] is None  # NaN: null
    assert "tb.eval/score" not in by_step[0] and by_step[1]["tb.eval/score"] == 0.5
    assert body["scalars"]["directory"] == "save/tensorboard_log"


def test_the_kl_rule_reads_the_latest_step_logged(server: ServerProcess) -> None:
    reading = wait_for_trends(server)["reading"]
    # The latest KL is the one of step 99 (0.0), not the 0.2 of step 5: no alarm.
    assert reading["numbers"]["approx_kl"] == 0.0
    assert reading["thresholds"]["kl_tag"] == "train/kl_loss"
    assert reading["reading"] != "kl too large"


def test_the_poll_cursor_moves_when_only_scalars_grow(server: ServerProcess, save: Path) -> None:
    status, before = get_json(server.url("/api/jsonl/train/poll?after=5&size=0"))
    assert status == 200 and before["cursor"]["scalars"] >= 1
    w = writer(save / "tensorboard_log", suffix=".late")
    w.add_scalar("rollout/late", 1.0, 5)
    w.close()
    status, after = get_json(server.url("/api/jsonl/train/poll?after=5&size=0"))
    assert after["cursor"]["scalars"] > before["cursor"]["scalars"]
    assert after["cursor"]["after"] == before["cursor"]["after"]  # no new step


def test_several_runs_each_find_their_own(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs / "calm", [0.01] * STEPS, extra_tag="perf/calm")
    write_run(runs / "wild", [0.01] * STEPS, extra_tag="perf/wild")
    calm, wild = (str(runs / name / "rollout_result") for name in ("calm", "wild"))
    with run_visualize(calm, wild) as srv:
        for name in ("calm", "wild"):
            status, body = get_json(srv.url(f"/runs/{name}/api/scalars"))
            assert status == 200
            tags = [t["tag"] for t in body["tags"]]
            assert f"perf/{name}" in tags and len(tags) == 3  # its own, not the other run's
            assert body["source"]["directory"] == f"{name}/tensorboard_log"
        keys = [s["key"] for s in wait_for_trends(srv, "/runs/wild")["series"]]
        assert "tb.perf/wild" in keys and "tb.perf/calm" not in keys
        assert "scalars: 1 event file in calm/tensorboard_log" in srv.stdout()


def test_a_kl_above_the_rule_is_named_with_its_number(tmp_path: Path) -> None:
    save = tmp_path / "save"
    train = save / "rollout_result" / "train"
    train.mkdir(parents=True)
    for step in range(STEPS):
        lines = [sample(i, reward=float((i + step) % 2)) for i in range(4)]
        (train / f"{step}.jsonl").write_text("".join(relax_line(x) for x in lines))
    board = tmp_path / "elsewhere"
    w = writer(board)
    for step in range(STEPS):
        w.add_scalar("train/approx_kl", 0.01 if step < STEPS - 1 else 0.125, step)
        w.add_scalar("train/explained_variance", -0.5, step)
    w.close()
    with run_visualize(str(save), "--tensorboard", str(board)) as srv:
        reading = wait_for_trends(srv)["reading"]
        assert reading["reading"] == "kl too large"
        assert reading["numbers"]["approx_kl"] == 0.125
        assert reading["numbers"]["explained_variance"] == -0.5
        assert reading["thresholds"]["kl_max"] == 0.05
        assert "train/approx_kl 0.125 is above 0.05" in reading["why"]
        assert "scalars: 1 event file in elsewhere (named by --tensorboard" in srv.stdout()


def test_tensorboard_flag_errors_are_one_line(tmp_path: Path, save: Path) -> None:
    result = run_manage("visualize", str(save), "--tensorboard", str(tmp_path / "missing"))
    assert result.returncode != 0
    assert "--tensorboard" in result.stderr and "is not a directory" in result.stderr
    assert "Traceback" not in result.stderr


# A viewer whose Python cannot import tensorboard (as when the extra is not installed).
WITHOUT_TENSORBOARD = (
    sys.executable,
    "-c",
    "import runpy, sys; sys.modules['tensorboard'] = None;"
    " sys.argv = ['manage.py', 'visualize', *sys.argv[1:]];"
    " runpy.run_path('manage.py', run_name='__main__')",
)


def test_without_the_package_the_viewer_says_how_to_install_it(save: Path) -> None:
    with run_visualize(save / "rollout_result", launcher=WITHOUT_TENSORBOARD) as srv:
        status, body = get_json(srv.url("/api/scalars"))
        assert status == 503
        assert body["message"].endswith(install_hint("tensorboard"))
        trends = wait_for_trends(srv)
        assert len(trends["points"]) == STEPS  # the rest works as before
        assert not [s for s in trends["series"] if s["key"].startswith("tb.")]
        assert trends["scalars"]["message"].endswith(install_hint("tensorboard"))
        assert install_hint("tensorboard") in srv.stdout()
        assert "rollouts.W010" in srv.output()
