"""Degenerate samples placed in every train step, so a first look at the demo shows each flag
(`rollouts.store.flags`) on samples made to have it, while the healthy ones have none.

Each train step gets, on samples chosen by the step's own ``random.Random`` (never the draws of
rewards, statuses and lengths, which stay as they were):

- ``repeats``: completed, wrongly answered samples whose response ends in one sentence said over
  and over (no answer after it, so they are ``no_answer`` too); ``Curve.loops`` says how many,
  one a step except in the collapse run, where they grow over the second half (the trends
  reading warns that the flag is rising);
- ``mixed_script``: an English response that goes on in Chinese half-way through;
- ``reward_disagrees``: a pair, reward 1 with a wrong answer and reward 0 with the right one
  (rewards untouched: their answers change), so the step's mean reward does not move;
- ``outlier_length``: a completed response of about 3,000 tokens, far above the step's others;
- ``empty``: an aborted or failed sample's response emptied, when the step has no empty one.

``no_answer`` (a wrong answer is left out a fifth of the time) and ``cut`` (status
``truncated``) occur on their own.
"""

from __future__ import annotations

import random
import re
from typing import Any

from .samples import make_reasoning
from .tokens import count_tokens, draw_log_probs, draw_token_ids

OUTLIER_TOKENS = 3000
LOOP_TIMES = (40, 60)  # how many times a looping response says its last sentence
_BOXED = re.compile(r"\\boxed\{(\d+)\}")
_CJK = re.compile(r"[\u3000-\u9fff]")


def _retext(rng: random.Random, record: dict[str, Any], response: str) -> None:
    """Give `record` a new response, its lengths and token arrays following (a truncated one
    keeps the length limit it was cut at)."""
    record["response"] = response
    if record["status"] != "truncated":
        n = count_tokens(response)
        pl = record["prompt_length"]
        record["response_length"] = record["response_token_count"] = n
        record["total_length"] = record["total_token_count"] = pl + n
    n = record["response_length"]
    if "response_token_ids" in record:
        record["response_token_ids"] = draw_token_ids(rng, n, response)
    if "response_rollout_log_probs" in record:
        record["response_rollout_log_probs"] = draw_log_probs(rng, n)


def _answer(record: dict[str, Any]) -> str | None:
    """The number in the last `\\boxed{}` of an English, numerically answered response."""
    response = record["response"]
    if record["status"] != "completed" or _CJK.search(response):
        return None
    found = _BOXED.findall(response)
    return found[-1] if found else None


def _numeric_label(record: dict[str, Any]) -> str | None:
    label = record.get("label")
    return label if isinstance(label, str) and label.isdigit() else None


def _loop(rng: random.Random, record: dict[str, Any]) -> str:
    """The response's reasoning, then one sentence said 40 to 60 times, and nothing after."""
    a, b = rng.randint(2, 99), rng.randint(2, 99)
    sentence = f"Wait, let me add {a} and {b} once more to be sure. "
    opening = "<think>\n" if record["response"].startswith("<think>") else ""
    return opening + make_reasoning(rng, False, 4) + " " + sentence * rng.randint(*LOOP_TIMES)


def _mixed(rng: random.Random, response: str) -> str:
    """The response with Chinese reasoning after its English reasoning, before the answer."""
    head, _, tail = response.rpartition("\n\n")
    think = head.endswith("</think>")
    body = head.removesuffix("\n</think>")
    switched = f"{body} 我换一种方法再算一遍。{make_reasoning(rng, True, 8)}"
    return f"{switched}\n</think>\n\n{tail}" if think else f"{switched}\n\n{tail}"


def _long(rng: random.Random, response: str) -> str:
    """The response with its reasoning grown to about OUTLIER_TOKENS tokens."""
    head, _, tail = response.rpartition("\n\n")
    body = head
    while count_tokens(body) < OUTLIER_TOKENS:
        body += " " + make_reasoning(rng, False, 20)
    return f"{body}\n\n{tail}"


def place_degenerate(
    records: list[dict[str, Any]], rng: random.Random, loops: int, kept: set[int]
) -> None:
    """Make samples of `records` (one train step) degenerate in place, as the module says;
    the rows in `kept` (the run's other fixed placements) are left alone."""
    order = [i for i in range(len(records)) if i not in kept]
    rng.shuffle(order)
    used: set[int] = set()

    def take(want: Any, n: int = 1) -> list[int]:
        chosen = [i for i in order if i not in used and want(records[i])][:n]
        used.update(chosen)
        return chosen

    def rewarded(value: float) -> Any:
        return lambda r: isinstance(r["reward"], float) and r["reward"] == value

    def answered(right: bool) -> Any:
        def want(r: dict[str, Any]) -> bool:
            answer, label = _answer(r), _numeric_label(r)
            return answer is not None and label is not None and (answer == label) == right

        return want

    def wrong(r: dict[str, Any]) -> bool:  # an object reward is wrong by its "acc"
        reward = r["reward"]
        return (reward.get("acc") if isinstance(reward, dict) else reward) == 0.0

    # The pair first (both or neither), as the other kinds may take its candidates.
    said_right = [i for i in order if rewarded(1.0)(records[i]) and answered(True)(records[i])]
    said_wrong = [i for i in order if rewarded(0.0)(records[i]) and answered(False)(records[i])]
    if said_right and said_wrong:
        up, down = records[said_right[0]], records[said_wrong[0]]
        used.update((said_right[0], said_wrong[0]))
        _retext(rng, up, _swap_answer(up["response"], str(int(up["label"]) + 1)))
        _retext(rng, down, _swap_answer(down["response"], down["label"]))
    for i in take(lambda r: wrong(r) and r["status"] == "completed", loops):
        _retext(rng, records[i], _loop(rng, records[i]))
    for i in take(lambda r: _answer(r) is not None and "\n\n" in r["response"]):
        _retext(rng, records[i], _mixed(rng, records[i]["response"]))
    for i in take(lambda r: _answer(r) is not None and "\n\n" in r["response"]):
        _retext(rng, records[i], _long(rng, records[i]["response"]))
    if not any(r["response"] == "" for r in records):
        for i in take(lambda r: r["status"] in ("aborted", "failed")):
            _retext(rng, records[i], "")


def _swap_answer(response: str, answer: str) -> str:
    """The response with the number in its last `\\boxed{}` replaced by `answer`."""
    last = list(_BOXED.finditer(response))[-1]
    return response[: last.start(1)] + answer + response[last.end(1) :]
