"""Two steps compared (`store.compare`): the page and its JSON twin, built from one context.

`a` and `b` name a step of the bucket: `STEP`, or `RUN:STEP` for a step of another run (one of
ROLLOUTS_DATA_DIRS; the bucket has the same name there). Without them: the bucket's first and
latest steps. `threshold` is the group mean reward above which a prompt counts as solved.
`prompt` (a prompt id of both steps) adds its two samples side by side, word by word.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import reverse

from ..presentation import WORDS_COMPARED, paired, side
from ..store import (
    SOLVED_ABOVE,
    BadRequest,
    Catalog,
    Columns,
    NotFound,
    StepIndex,
    StoreError,
    compare_steps,
    first_row_of,
    parse_prompt_id,
    prompt_previews,
    step_filename,
)
from ..web import (
    app_url,
    catalog_of,
    current_run,
    data_dir_of,
    get_catalog,
    json_response,
    overlay_runs,
    step_url,
)
from .bucket_twins import ChosenPrompt, ChosenSample, CompareTwin
from .decorators import api, page
from .header import header_context

FLIPPED_LISTED = 500  # flipped prompts in one answer (`flipped_total` counts them all)
_STEP_DIGITS = 18
_NO_SIDE = dict.fromkeys(("samples", "mean_reward", "truncation_rate", "mean_response_length"))


@dataclass(slots=True)
class Side:
    """One side of the comparison: where its step is, and its decoded columns."""

    run: str | None  # None: the request's own data directory
    explicit_run: bool  # named in the parameter (`RUN:STEP`)
    bucket: str
    step: str
    catalog: Catalog
    index: StepIndex
    columns: Columns

    def label(self) -> str:
        return f"{self.run}:{self.step}" if self.explicit_run else self.step

    def sample_url(self, request: HttpRequest, position: int) -> str:
        kwargs = {"bucket": self.bucket, "step": self.step, "position": position}
        if self.explicit_run:
            return reverse("rollouts:run:sample", kwargs={"run": self.run, **kwargs})
        return app_url(request, "sample", **kwargs)

    def step_url(self, request: HttpRequest) -> str:
        if self.explicit_run:
            kwargs = {"run": self.run, "bucket": self.bucket, "step": self.step}
            return reverse("rollouts:run:step", kwargs=kwargs)
        return step_url(request, self.bucket, self.step)


def _side(request: HttpRequest, name: str, bucket: str, default: str | None) -> Side:
    raw = request.GET.get(name) or default
    if raw is None:
        raise NotFound(f"bucket {bucket!r} has no steps to compare")
    run, _, step = raw.rpartition(":")
    if not (step.isascii() and step.isdigit() and len(step) <= _STEP_DIGITS):
        raise BadRequest(f"{name} must be STEP or RUN:STEP, got {raw[:60]!r}")
    if run:
        catalog = catalog_of(data_dir_of(run))
    else:
        run, catalog = current_run(request) or "", get_catalog(request)
    index = catalog.open_step(bucket, step_filename(step))
    columns = catalog.columns(index)
    return Side(run or None, bool(raw.rpartition(":")[0]), bucket, step, catalog, index, columns)


def _threshold(request: HttpRequest) -> float:
    raw = request.GET.get("threshold")
    if not raw:
        return SOLVED_ABOVE
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise BadRequest(f"threshold must be a finite number, got {raw[:40]!r}")
    return value


def compare_context(request: HttpRequest, bucket: str) -> dict[str, Any]:
    """The comparison as JSON-able data (the twin), plus what only the page draws (`_page`)."""
    steps = get_catalog(request).steps(bucket)
    first = steps[0].name if steps else None
    latest = steps[-1].name if steps else None
    a = _side(request, "a", bucket, first)
    b = _side(request, "b", bucket, latest)
    threshold = _threshold(request)
    result = compare_steps((a.columns, a.index.invalid), (b.columns, b.index.invalid), threshold)
    params = {"a": a.label(), "b": b.label()}
    if request.GET.get("threshold"):
        params["threshold"] = request.GET["threshold"]
    page_url = app_url(request, "compare", bucket=bucket) + "?" + urlencode(params)
    listed = result["flipped"][:FLIPPED_LISTED]
    # What the prompt asks, and its dataset, so a flip reads without opening it.
    questions = prompt_previews(a.index, [flip["a"]["position"] for flip in listed])
    for flip in listed:
        flip["prompt"] = questions.get(flip["a"]["position"])
        flip["dataset"] = _dataset(a.columns, flip["a"]["position"])
        flip["a"]["url"] = a.sample_url(request, flip["a"]["position"])
        flip["b"]["url"] = b.sample_url(request, flip["b"]["position"])
        flip["side_by_side_url"] = f"{page_url}&prompt={flip['prompt_id']}#rv-pair"
    data: CompareTwin = {
        "bucket": bucket,
        "a": {"run": a.run, "step": a.step, "url": a.step_url(request)},
        "b": {"run": b.run, "step": b.step, "url": b.step_url(request)},
        "threshold": threshold,
        "rows": result["rows"],
        "prompts_in_both": result["prompts_in_both"],
        "flipped_total": len(result["flipped"]),
        "flipped": listed,
        "prompt": None,
    }
    prompt = request.GET.get("prompt")
    # Checked for the page and the JSON alike: a bad id is a 400, one not in both steps a 404.
    chosen = _chosen_prompt(request, a, b, prompt) if prompt else None
    data["prompt"] = chosen
    return {"data": data, "a": a, "b": b, "page_url": page_url, "prompt": prompt}


def _dataset(columns: Columns, row: int) -> str | None:
    value = columns.value("dataset", row) if "dataset" in columns.categorical else None
    return value if isinstance(value, str) else None


def _chosen_prompt(request: HttpRequest, a: Side, b: Side, prompt: str) -> ChosenPrompt:
    """`prompt=`: its first sample in each step, `{"prompt_id", "a", "b"}` (each `{"position",
    "line", "url"}`); a BadRequest when it is no prompt id, NotFound when a step lacks it."""
    wanted = parse_prompt_id(prompt)
    if wanted is None:
        raise BadRequest(f"prompt must be a prompt id (16 hex digits), got {prompt[:40]!r}")
    sides: list[ChosenSample] = []
    for s in (a, b):
        position = first_row_of(s.columns, s.index.invalid, wanted)
        if position is None:
            raise NotFound(f"step {s.label()} has no sample of prompt {prompt}")
        sides.append(
            {
                "position": position,
                "line": s.index.lines[position],
                "url": s.sample_url(request, position),
            }
        )
    return {"prompt_id": prompt, "a": sides[0], "b": sides[1]}


# Which way each compared number is better: a higher mean reward, a lower truncation rate; the
# length is neither. A difference is coloured by it (up good, down bad), and a neutral one not.
BETTER = {"mean_reward": 1, "truncation_rate": -1, "mean_response_length": 0}


def difference_tones(difference: dict[str, Any] | None) -> dict[str, str]:
    """Each difference's class: `rv-change-up` when it moved the better way, `rv-change-down`
    the worse way, none when it did not move, has no value or has no better way."""
    tones: dict[str, str] = {}
    for field, better in BETTER.items():
        value = (difference or {}).get(field)
        if not better or not isinstance(value, int | float) or not value:
            tones[field] = ""
        else:
            tones[field] = "rv-change-up" if value * better > 0 else "rv-change-down"
    return tones


def step_choices(request: HttpRequest, bucket: str, chosen: list[str]) -> list[dict[str, Any]]:
    """The steps the picker offers, newest first: this run's (`STEP`), then each other run's of
    ROLLOUTS_DATA_DIRS (or the folder of runs) that has the bucket (`RUN:STEP`), as
    `[{"label", "values"}]`; a chosen value none of them lists (`RUN:STEP` naming this very
    run) comes first, so it shows."""
    groups = [
        {
            "label": "this run",
            "values": [s.name for s in reversed(get_catalog(request).steps(bucket))],
        }
    ]
    here = current_run(request)
    for run, directory in overlay_runs(here):
        if run == here:
            continue
        try:
            steps = catalog_of(directory).steps(bucket)
        except StoreError:  # no such bucket there, or the run cannot be read: not offered
            continue
        if steps:
            groups.append(
                {"label": f"run {run}", "values": [f"{run}:{s.name}" for s in reversed(steps)]}
            )
    listed = {value for group in groups for value in group["values"]}
    extra = [value for value in dict.fromkeys(chosen) if value not in listed]
    if extra:
        groups.insert(0, {"label": "chosen", "values": extra})
    return groups


def _pair(a: Side, b: Side, chosen: ChosenPrompt) -> dict[str, Any]:
    """The prompt's first sample in each step (`_chosen_prompt`), side by side."""
    sides = []
    for sample, s in ((chosen["a"], a), (chosen["b"], b)):
        values = s.index.read(sample["position"]).decoded.values()
        title = f"step {s.label()}, line {sample['line']}"
        sides.append(side(title, sample["url"], values))
    return paired(*sides)


@api("GET", "HEAD")
def api_compare(request: HttpRequest, bucket: str) -> HttpResponseBase:
    return json_response(compare_context(request, bucket)["data"])


@page
def compare_page(request: HttpRequest, bucket: str) -> HttpResponse:
    catalog = get_catalog(request)
    context = header_context(request, catalog, bucket, None)
    built = compare_context(request, bucket)
    data = built["data"]
    prompt = built["prompt"]
    query = built["page_url"].partition("?")[2]
    if data["prompt"]:  # the twin of this very page: the pair's samples too
        query += "&" + urlencode({"prompt": prompt})
    json_url = app_url(request, "api-compare", bucket=bucket) + "?" + query
    context.update(
        {
            "page": "compare",
            "cmp": data,
            # A dataset one step lacks: its side's cells show "no value".
            "table_rows": [
                {
                    **row,
                    "a": row["a"] or _NO_SIDE,
                    "b": row["b"] or _NO_SIDE,
                    "tones": difference_tones(row["difference"]),
                }
                for row in data["rows"]
            ],
            "a_label": built["a"].label(),
            "b_label": built["b"].label(),
            "threshold_text": request.GET.get("threshold", ""),
            "compared": _pair(built["a"], built["b"], data["prompt"]) if data["prompt"] else None,
            "compared_prompt": prompt,
            "diff_words": WORDS_COMPARED,
            "json_url": json_url,
            "form_url": app_url(request, "compare", bucket=bucket),
            "step_choices": step_choices(request, bucket, [built["a"].label(), built["b"].label()]),
            "has_datasets": any(f["dataset"] is not None for f in data["flipped"]),
        }
    )
    if not built["a"].explicit_run:  # the prompt's page in this run, beside each flip
        for flip in data["flipped"]:
            flip["prompt_url"] = app_url(
                request, "prompt", bucket=bucket, prompt_id=flip["prompt_id"]
            )
    return TemplateResponse(request, "rollouts/compare.html", context)
