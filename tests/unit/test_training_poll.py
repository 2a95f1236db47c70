"""A poll of a long job: the cards read the end of the points only, the reading and the cards
are computed again only when a point came, and the metric cursor never skips a point."""

from __future__ import annotations

import json
import math
import random

from rollouts.store.cards import CARD_RECENT, SPARK_POINTS, metric_card
from rollouts.store.reading import Metric
from rollouts.training.progress import Point, Progress
from rollouts.training.snapshot import progress_part


def points(count: int, seed: int = 0) -> list[Point]:
    rng = random.Random(seed)
    out = []
    for n in range(count):
        value = math.nan if rng.random() < 0.3 else 0.5 + 0.001 * n + rng.gauss(0, 0.01)
        metrics: dict[str, float | None] = (
            {"reward": value} if not math.isnan(value) else {"x": 1.0}
        )
        out.append(Point(n + 1, (n + 1) * 64, metrics, "json"))
    out.append(Point(count + 1, (count + 1) * 64, {"reward": 9.0}, "json"))  # a jump at the end
    return out


def finite_tail(pts: list[Point], count: int) -> list[Point]:
    """The shortest tail of `pts` that holds `count` points with a reward."""
    seen = 0
    for i in range(len(pts) - 1, -1, -1):
        seen += "reward" in pts[i].metrics
        if seen == count:
            return pts[i:]
    return pts


def test_a_card_of_5000_points_is_the_card_of_its_last_values():
    metric = Metric("reward", "Reward", +1)
    every = points(5000)
    whole = metric_card(every, metric)
    assert whole is not None and len(whole["spark"]) == SPARK_POINTS
    assert whole == metric_card(finite_tail(every, max(SPARK_POINTS, CARD_RECENT + 1)), metric)
    assert whole["latest"] == 9.0 and whole["abnormal"] is False  # up is the good way
    falling = metric_card(every, Metric("reward", "Reward", -1))
    assert falling is not None and falling["abnormal"] is True  # down was the good way
    assert metric_card(every, Metric("absent", "Absent", 0)) is None
    few = points(2)
    small = metric_card(few, metric)
    assert small is not None and small["spark"] == [
        {"step": p.timesteps, "value": p.metrics["reward"]} for p in few if "reward" in p.metrics
    ]


def progress_line(ticks: int, reward: float) -> str:
    return json.dumps({"event": "progress", "timesteps": ticks, "ep_rew_mean": reward})


def test_the_derived_parts_are_computed_again_only_after_a_new_point():
    progress = Progress()
    calls: list[int] = []

    def compute(pts: list[Point], attempts: list[dict]) -> int:
        calls.append(len(pts))
        return len(pts) + 100 * (len(attempts) - 1)

    assert progress.derived(compute) == 0
    progress.feed(progress_line(64, 0.1))
    assert [progress.derived(compute) for _ in range(3)] == [1, 1, 1]
    progress.feed("plain text: no point")
    assert progress.derived(compute) == 1
    progress.feed(progress_line(128, 0.2))
    assert progress.derived(compute) == 2
    progress.begin_attempt(64, "checkpoints/ppo_64.zip")  # no point yet, but new attempts
    assert progress.derived(compute) == 102
    assert calls == [0, 1, 2, 2]


def test_the_cursor_is_the_one_the_points_were_read_at():
    progress = Progress()
    for n in range(1, 6):
        progress.feed(progress_line(n * 64, n / 10))
    shown, cursor = progress.since(after=2)
    assert [p.seq for p in shown] == [3, 4, 5] and cursor == 5
    progress.feed(progress_line(6 * 64, 0.6))  # came after the answer was read
    shown, cursor = progress.since(after=cursor)
    assert [p.timesteps for p in shown] == [6 * 64] and cursor == 6
    assert progress.since(after=0, limit=2)[0][0].seq == 5


def timed(progress: Progress, ticks: int, at: float, **more: float | str) -> None:
    progress.feed(json.dumps({"event": "progress", "timesteps": ticks, **more}), at)


def test_fraction_throughput_and_eta_count_only_the_running_attempt_from_its_first_point():
    progress = Progress()
    timed(progress, 3124, 50.0, ep_rew_mean=1.0)  # the killed run got this far
    progress.begin_attempt(400, "checkpoints/ppo_400.zip", at=90.0)
    # the interpreter starts and the model loads: 10 s before the first progress line
    timed(progress, 400, 100.0, total_timesteps=1000, ep_rew_mean=1.0)
    timed(progress, 600, 120.0, ep_rew_mean=2.0)
    part = progress_part(progress, end=120.0)
    # the resumed run's own progress, not the killed run's maximum
    assert (part["timesteps"], part["total"], part["fraction"]) == (600, 1000, 0.6)
    # 200 timesteps between its first and latest point, 20 s apart: 10 per s (not 200 / 30)
    assert part["throughput"] == 10.0 and part["throughput_source"] == "progress"
    assert part["eta_seconds"] == 40.0 and part["attempt"] == 1
    paused = progress_part(progress, end=120.0, pauses=[[105.0, 115.0]])
    assert paused["throughput"] == 20.0  # 200 timesteps in 10 s of training
    assert progress_part(Progress(), None)["fraction"] is None


def test_the_total_comes_from_the_spec_field_counted_from_the_resume_point():
    progress = Progress()
    timed(progress, 2048, 10.0, ep_rew_mean=1.0)
    assert progress_part(progress, None, spec_total=8192)["fraction"] == 0.25
    progress.begin_attempt(2048, "checkpoints/ppo_2048.zip")
    timed(progress, 4096, 20.0, ep_rew_mean=1.0)
    part = progress_part(progress, None, spec_total=8192)
    assert (part["total"], part["fraction"]) == (10240, 0.4)
    timed(progress, 6144, 30.0, total_timesteps=7000)  # the script's own word wins
    assert progress_part(progress, None, spec_total=8192)["total"] == 7000


def test_fps_is_the_throughput_when_no_two_points_were_timed():
    progress = Progress()
    progress.feed(json.dumps({"event": "progress", "timesteps": 64, "fps": 700}))
    part = progress_part(progress, None)
    assert (part["throughput"], part["throughput_source"]) == (700.0, "fps")


def test_the_phase_timeline_leaves_pauses_out_and_ends_a_killed_attempt_unknown():
    progress = Progress()
    timed(progress, 0, 100.0, phase="collect")
    timed(progress, 64, 103.0, phase="update")
    timed(progress, 64, 110.0, phase="collect")
    progress.begin_attempt(0, "checkpoints/ppo_baseline.zip")
    timed(progress, 0, 200.0, phase="collect")
    part = progress_part(progress, end=212.0, pauses=[[104.0, 106.0], [205.0, 209.0]])
    assert [(p["name"], p["kind"], p["attempt"]) for p in part["phases"]] == [
        ("collect", "collect", 0),
        ("update", "update", 0),
        ("collect", "collect", 0),
        ("collect", "collect", 1),
    ]
    assert [p["seconds"] for p in part["phases"]] == [3.0, 5.0, None, 8.0]
    assert [p["paused_seconds"] for p in part["phases"]] == [0.0, 2.0, None, 4.0]
