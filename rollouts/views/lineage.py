"""A prompt across training: its page and JSON twin, built from one context, and the link every
sample page carries to it.

The appearances come from the prompt-id column of every step (`store.lineage`); the only sample
bodies read are the prompt's text (once) and the two responses compared. Which two: `a` and
`b`, each `STEP:POSITION` of an appearance; by default the earliest and the latest.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import TemplateResponse

from ..conf import conf
from ..links import app_url, sample_url
from ..presentation.pair import pair, side
from ..presentation.render import compile_mask
from ..presentation.sample import present_sample
from ..presentation.worddiff import WORDS_COMPARED
from ..runs import get_catalog
from ..store import BadRequest, Catalog, NotFound, step_filename
from ..store.lineage import Appearance, find_prompt
from ..store.promptid import (
    NO_PROMPT,
    format_prompt_id,
    parse_prompt_id,
    prompt_id_of_value,
)
from .decorators import api, page
from .header import header_context
from .responses import json_response


def prompt_link(request: HttpRequest, bucket: str, values: dict[str, Any]) -> dict[str, Any]:
    """The shown sample's `prompt_id` and its prompt page's URL (None without a prompt)."""
    prompt_id = prompt_id_of_value(values.get("prompt"))
    if prompt_id == NO_PROMPT:
        return {"prompt_id": None, "prompt_url": None}
    text = format_prompt_id(prompt_id)
    return {
        "prompt_id": text,
        "prompt_url": app_url(request, "prompt", bucket=bucket, prompt_id=text),
    }


def _appearance_json(request: HttpRequest, bucket: str, a: Appearance) -> dict[str, Any]:
    return {
        "step": a.step,
        "position": a.position,
        "line": a.line,
        "reward": a.reward,
        "status": a.status,
        "response_length": _count(a.response_length),
        "url": sample_url(request, bucket, a.name, a.position),
    }


def _count(value: float | None) -> float | int | None:
    """A token count as the file wrote it (the column holds it as a float)."""
    return int(value) if value is not None and value.is_integer() else value


def lineage_json(request: HttpRequest, bucket: str, prompt_id: str) -> tuple[dict, list]:
    """The JSON twin's object, and the appearances it came from (for the page)."""
    wanted = parse_prompt_id(prompt_id)
    if wanted is None or wanted == NO_PROMPT:
        raise BadRequest(f"a prompt id is 16 lowercase hex digits, got {prompt_id[:40]!r}")
    catalog = get_catalog(request)
    found = find_prompt(catalog, bucket, wanted)
    appearances, steps = found.appearances, found.steps
    if not appearances:
        raise NotFound(f"no sample of bucket {bucket!r} has the prompt {prompt_id}")
    first = appearances[0]
    data = {
        "prompt_id": prompt_id,
        "prompt": _read(catalog, bucket, first).get("prompt"),
        "appearances": [_appearance_json(request, bucket, a) for a in appearances],
        "steps": [{k: s[k] for k in ("step", "samples", "mean_reward")} for s in steps],
        "skipped": found.skipped,  # steps that could not be read: [{"step", "error"}]
    }
    return data, appearances


def _read(catalog: Catalog, bucket: str, appearance: Appearance) -> dict[str, Any]:
    index = catalog.open_step(bucket, step_filename(appearance.name))
    return index.read(appearance.position).decoded.values()


def _chosen(request: HttpRequest, name: str, appearances: list[Appearance], default: int) -> int:
    """The index in `appearances` that `name` (`STEP:POSITION`) names, or `default`."""
    raw = request.GET.get(name)
    if not raw:
        return default
    step, _, position = raw.partition(":")
    for i, a in enumerate(appearances):
        if a.name == step and str(a.position) == position:
            return i
    raise BadRequest(f"{name} must be STEP:POSITION of an appearance of this prompt, got {raw!r}")


@api("GET", "HEAD")
def api_prompt(request: HttpRequest, bucket: str, prompt_id: str) -> HttpResponseBase:
    data, _ = lineage_json(request, bucket, prompt_id)
    return json_response(data)


@page
def prompt_page(request: HttpRequest, bucket: str, prompt_id: str) -> HttpResponse:
    catalog = get_catalog(request)
    context = header_context(request, catalog, bucket, None)
    data, appearances = lineage_json(request, bucket, prompt_id)
    left = _chosen(request, "a", appearances, 0)
    right = _chosen(request, "b", appearances, len(appearances) - 1)
    by_step: dict[int, list[dict[str, Any]]] = {}
    for i, (a, row) in enumerate(zip(appearances, data["appearances"], strict=True)):
        key = f"{a.name}:{a.position}"
        by_step.setdefault(a.step, []).append(
            {**row, "key": key, "name": a.name, "chosen": i in (left, right)}
        )
    compared = None
    if left != right:
        sides = []
        for i in (left, right):
            a = appearances[i]
            title = f"step {a.name}, line {a.line}"
            url = data["appearances"][i]["url"]
            sides.append(side(title, url, _read(catalog, bucket, a)))
        compared = pair(*sides)
    presented = present_sample({"prompt": data["prompt"]}, compile_mask(conf.MASK_STR))
    json_url = app_url(request, "api-prompt", bucket=bucket, prompt_id=prompt_id)
    first_of = {
        a.step: data["appearances"][i]["url"] for i, a in reversed(list(enumerate(appearances)))
    }
    chart = [
        {"step": s["step"], "mean_reward": s["mean_reward"], "url": first_of[s["step"]]}
        for s in data["steps"]
    ]
    context.update(
        {
            "page": "prompt",
            "prompt_id": prompt_id,
            "lineage": data,
            "prompt_section": presented.texts[0] if presented.texts else None,
            "step_rows": [{**s, "samples_list": by_step[s["step"]]} for s in data["steps"]],
            "chart_json": json.dumps(chart),
            "compared": compared,
            "chosen_a": f"{appearances[left].name}:{appearances[left].position}",
            "chosen_b": f"{appearances[right].name}:{appearances[right].position}",
            "options": [
                {"key": f"{a.name}:{a.position}", "text": f"step {a.name}, line {a.line}"}
                for a in appearances
            ],
            "diff_words": WORDS_COMPARED,
            "json_url": json_url,
        }
    )
    return TemplateResponse(request, "rollouts/prompt.html", context)
