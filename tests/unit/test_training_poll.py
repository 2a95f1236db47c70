"""A poll of a long job: the cards read the end of the points only, the reading and the cards
are computed again only when a point came, and the metric cursor never skips a point."""

from __future__ import annotations

import json
import math
import random

from rollouts.store.cards import CARD_RECENT, SPARK_POINTS, card
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
    whole = card(every, metric)
    assert whole is not None and len(whole["spark"]) == SPARK_POINTS
    assert whole == card(finite_tail(every, max(SPARK_POINTS, CARD_RECENT + 1)), metric)
    assert whole["latest"] == 9.0 and whole["abnormal"] is False  # up is the good way
    falling = card(every, Metric("reward", "Reward", -1))
    assert falling is not None and falling["abnormal"] is True  # down was the good way
    assert card(every, Metric("absent", "Absent", 0)) is None
    few = points(2)
    small = card(few, metric)
    assert small is not None and small["spark"] == [
        {"step": p.timesteps, "value": p.metrics["reward"]} for p in few if "reward" in p.metrics
    ]


def progress_line(ticks: int, reward: float) -> str:
    return json.dumps({"event": "progress", "timesteps": ticks, "ep_rew_mean": reward})


def test_the_derived_parts_are_computed_again_only_after_a_new_point():
    progress = Progress()
    calls: list[int] = []

    def compute(pts: list[Point]) -> int:
        calls.append(len(pts))
        return len(pts)

    assert progress.derived(compute) == 0
    progress.feed(progress_line(64, 0.1))
    assert [progress.derived(compute) for _ in range(3)] == [1, 1, 1]
    progress.feed("plain text: no point")
    assert progress.derived(compute) == 1
    progress.feed(progress_line(128, 0.2))
    assert progress.derived(compute) == 2
    assert calls == [0, 1, 2]


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


def test_fraction_throughput_and_eta_count_only_this_process_s_timesteps():
    progress = Progress()
    progress.feed(json.dumps({"event": "progress", "timesteps": 600, "total_timesteps": 1000}))
    phases = [{"name": "rollout", "started_at": 100.0}, {"name": "update", "started_at": 103.0}]
    # resumed at 400 timesteps, 20 s of wall time since (pauses left out): 200 / 20 = 10 per s
    part = progress_part(progress, phases, wall=20.0, end=110.0, start_ticks=400)
    assert (part["timesteps"], part["total"], part["fraction"]) == (600, 1000, 0.6)
    assert part["throughput"] == 10.0 and part["eta_seconds"] == 40.0
    assert part["phases"] == [
        {"name": "rollout", "started_at": 100.0, "seconds": 3.0},
        {"name": "update", "started_at": 103.0, "seconds": 7.0},
    ]
    nothing_yet = progress_part(progress, [], wall=20.0, end=None, start_ticks=600)
    assert nothing_yet["throughput"] is None and nothing_yet["eta_seconds"] is None
    assert progress_part(Progress(), [], None, None)["fraction"] is None
