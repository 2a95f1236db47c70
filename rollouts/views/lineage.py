"""A prompt across training: its page and JSON twin, built from one context, and the link every
sample page carries to it.

The appearances come from the prompt-id column of every step (`store.lineage`); the only sample
bodies read are the prompt's text (once) and the two responses compared. Which two: `a` and
`b`, each `STEP:POSITION` of an appearance; by default the best and the worst completed
sample of the latest step, or the earliest and the latest appearance when the latest step has no
two completed samples of different rewards (`default_pair`).

Appearances are listed a page at a time (`page`; `page_size`, PROMPT_PAGE_SIZE by default and
ROLLOUTS_MAX_PAGE_SIZE at most), so a prompt shared by 60,000 samples is a small page, quickly;
the totals (`total`, each step's samples and mean reward, the chart) still count every one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import TemplateResponse

from ..conf import conf
from ..presentation import (
    WORDS_COMPARED,
    compile_mask,
    page_numbers,
    page_window,
    paired,
    present_sample,
    reward_badge,
    side,
)
from ..store import (
    NO_PROMPT,
    Appearance,
    Appearances,
    BadRequest,
    Catalog,
    NotFound,
    format_prompt_id,
    locate_prompt,
    parse_prompt_id,
    prompt_id_of_value,
    step_filename,
)
from ..web import app_url, get_catalog, int_param, json_response, sample_url
from .bucket_twins import AppearanceRow, LineageTwin
from .decorators import api, page
from .header import header_context
from .twins import PageLinks

PROMPT_PAGE_SIZE = 200  # appearances a page lists by default (a link each: ~40 kB of page)
_MAX_PAGE = 10**9
_POSITION_DIGITS = 18


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


@dataclass(slots=True)
class Listing:
    """Every appearance (made on demand), every step's totals, and the page shown:
    appearances [start, stop), page `page` of `pages`, `size` a page."""

    appearances: Appearances
    steps: list[dict[str, Any]]
    start: int
    stop: int
    page: int
    pages: int
    size: int

    def links(self, url_of: Callable[[int], str]) -> PageLinks:
        """The first, previous, next and last pages' URLs (None past an end)."""
        return {
            "first": url_of(1),
            "prev": url_of(self.page - 1) if self.page > 1 else None,
            "next": url_of(self.page + 1) if self.page < self.pages else None,
            "last": url_of(self.pages),
        }


def lineage_json(request: HttpRequest, bucket: str, prompt_id: str) -> tuple[LineageTwin, Listing]:
    """The JSON twin's object (a page of appearances, every step's totals) and the listing
    the page draws from."""
    wanted = parse_prompt_id(prompt_id)
    if wanted is None or wanted == NO_PROMPT:
        raise BadRequest(f"a prompt id is 16 lowercase hex digits, got {prompt_id[:40]!r}")
    size = int_param(request, "page_size", PROMPT_PAGE_SIZE, 1, conf.MAX_PAGE_SIZE)
    number = int_param(request, "page", 1, 1, _MAX_PAGE)
    catalog = get_catalog(request)
    found = locate_prompt(catalog, bucket, wanted)
    appearances = found.appearances
    if not appearances:
        raise NotFound(f"no sample of bucket {bucket!r} has the prompt {prompt_id}")
    start, stop, pages = page_window(len(appearances), number, size)  # past the end: the last
    listing = Listing(appearances, found.steps, start, stop, start // size + 1, pages, size)
    data: LineageTwin = {
        "prompt_id": prompt_id,
        "prompt": _read(catalog, bucket, appearances[0]).get("prompt"),
        "total": len(appearances),
        "page": listing.page,
        "pages": pages,
        "page_size": size,
        "appearances": [_appearance_json(request, bucket, a) for a in appearances[start:stop]],
        "steps": [
            {"step": s["step"], "samples": s["samples"], "mean_reward": s["mean_reward"]}
            for s in found.steps
        ],
        "skipped": found.skipped,  # steps that could not be read: [{"step", "error"}]
        "urls": {
            "page": page_url_maker(request, "prompt", bucket, prompt_id, size)(listing.page),
            "json": page_url_maker(request, "api-prompt", bucket, prompt_id, size)(listing.page),
            **listing.links(page_url_maker(request, "api-prompt", bucket, prompt_id, size)),
        },
    }
    return data, listing


def _appearance_json(request: HttpRequest, bucket: str, a: Appearance) -> AppearanceRow:
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


def page_url_maker(
    request: HttpRequest, view: str, bucket: str, prompt_id: str, size: int, **keep: str
) -> Callable[[int], str]:
    """page number -> that page's URL (`view`: the page or its JSON), with the page size when
    it is not the default, and `keep` (the page's `a` and `b`) when given."""
    base = app_url(request, view, bucket=bucket, prompt_id=prompt_id)
    extra: dict[str, Any] = {k: v for k, v in keep.items() if v}
    if size != PROMPT_PAGE_SIZE:
        extra["page_size"] = size

    def url(number: int) -> str:
        params = {"page": number, **extra} if number > 1 else extra
        return base + ("?" + urlencode(params) if params else "")

    return url


def _read(catalog: Catalog, bucket: str, appearance: Appearance) -> dict[str, Any]:
    index = catalog.open_step(bucket, step_filename(appearance.name))
    return index.read(appearance.position).decoded.values()


def _chosen(request: HttpRequest, name: str, appearances: Appearances, default: int) -> int:
    """The index in `appearances` that `name` (`STEP:POSITION`) names, or `default`."""
    raw = request.GET.get(name)
    if not raw:
        return default
    step, _, position = raw.partition(":")
    found = None
    if position.isascii() and position.isdigit() and len(position) <= _POSITION_DIGITS:
        found = appearances.index_of(step, int(position))
    if found is None:
        raise BadRequest(
            f"{name} must be STEP:POSITION of an appearance of this prompt, got {raw[:60]!r}"
        )
    return found


def default_pair(appearances: Appearances, steps: list[dict[str, Any]]) -> tuple[int, int]:
    """The two appearances a prompt's page compares first: the best and the worst completed
    sample of the latest step (the answer the model gives now, right against wrong), or, when
    that step has no two completed samples of different rewards, the earliest and the latest
    appearance (how the answer changed over training)."""
    fallback = (0, len(appearances) - 1)
    if not steps:
        return fallback
    latest = steps[-1]
    scored = [
        (reward, i)
        for i in range(latest["first"], latest["first"] + latest["samples"])
        if (reward := appearances[i].reward) is not None
        and math.isfinite(reward)
        and appearances[i].status in (None, "completed")
    ]
    if len({reward for reward, _ in scored}) < 2:
        return fallback
    best = max(scored, key=lambda s: (s[0], -s[1]))[1]  # the first of the best
    worst = min(scored, key=lambda s: (s[0], -s[1]))[1]  # the last of the worst
    return best, worst


def _key(a: Appearance) -> str:
    return f"{a.name}:{a.position}"


@api("GET", "HEAD")
def api_prompt(request: HttpRequest, bucket: str, prompt_id: str) -> HttpResponseBase:
    data, _ = lineage_json(request, bucket, prompt_id)
    return json_response(data)


@page
def prompt_page(request: HttpRequest, bucket: str, prompt_id: str) -> HttpResponse:
    catalog = get_catalog(request)
    context = header_context(request, catalog, bucket, None)
    data, listing = lineage_json(request, bucket, prompt_id)
    appearances = listing.appearances
    best, worst = default_pair(appearances, _step_pages(listing))
    left = _chosen(request, "a", appearances, best)
    right = _chosen(request, "b", appearances, worst)
    chosen = {i: appearances[i] for i in (left, right)}
    compared = None
    if left != right:
        sides = []
        for a in chosen.values():
            url = sample_url(request, bucket, a.name, a.position)
            sides.append(side(f"step {a.name}, line {a.line}", url, _read(catalog, bucket, a)))
        compared = paired(*sides)
    presented = present_sample({"prompt": data["prompt"]}, compile_mask(conf.MASK_STR))
    keep = {name: request.GET.get(name, "") for name in ("a", "b")}
    page_url = page_url_maker(request, "prompt", bucket, prompt_id, listing.size, **keep)
    # The form offers this page's appearances, and the two compared wherever they are.
    offered = {_key(a): a for a in appearances[listing.start : listing.stop]}
    for a in chosen.values():
        offered.setdefault(_key(a), a)
    context.update(
        {
            "page": "prompt",
            "prompt_id": prompt_id,
            "lineage": data,
            "prompt_section": presented.texts[0] if presented.texts else None,
            "step_rows": _step_rows(
                listing, data["appearances"], {*map(_key, chosen.values())}, page_url
            ),
            "chart_json": json.dumps(_chart(request, bucket, listing)),
            "strip": _strip(request, bucket, listing),
            "compared": compared,
            "chosen_a": _key(chosen[left]),
            "chosen_b": _key(chosen[right]),
            "options": [
                {"key": key, "text": f"step {a.name}, line {a.line}"} for key, a in offered.items()
            ],
            "diff_words": WORDS_COMPARED,
            "json_url": data["urls"]["json"],
            "pages": {
                **listing.links(page_url),
                "page_size": listing.size,
                "first_shown": listing.start + 1,
                "last_shown": listing.stop,
            },
            "page_size_default": PROMPT_PAGE_SIZE,
            "page_links": [
                {"page": n, "url": page_url(n) if n is not None else None}
                for n in page_numbers(listing.page, listing.pages)
            ],
        }
    )
    return TemplateResponse(request, "rollouts/prompt.html", context)


def _step_pages(listing: Listing) -> list[dict[str, Any]]:
    """Each step with the index of its first appearance and the page that holds it."""
    rows, first = [], 0
    for s in listing.steps:
        rows.append({**s, "first": first, "page": first // listing.size + 1})
        first += s["samples"]
    return rows


def _step_rows(
    listing: Listing, shown: list[AppearanceRow], chosen: set[str], page_url: Callable[[int], str]
) -> list[dict[str, Any]]:
    """The steps this page's appearances are in, each with them; a step with more than this
    page shows (`elsewhere`) links the pages that hold the rest."""
    rows = []
    for s in _step_pages(listing):
        low, high = max(s["first"], listing.start), min(s["first"] + s["samples"], listing.stop)
        if low >= high:
            continue
        here = []
        for row in shown[low - listing.start : high - listing.start]:
            key = f"{s['name']}:{row['position']}"
            here.append({**row, "key": key, "chosen": key in chosen})
        last = (s["first"] + s["samples"] - 1) // listing.size + 1
        spans = [(s["page"], listing.page - 1), (listing.page + 1, last)]  # before, after
        rows.append(
            {
                **s,
                "samples_list": here,
                "elsewhere": s["samples"] - len(here),
                "elsewhere_pages": [
                    [{"page": n, "url": page_url(n)} for n in dict.fromkeys((since, until))]
                    for since, until in spans
                    if since <= until
                ],
            }
        )
    return rows


def _strip(request: HttpRequest, bucket: str, listing: Listing) -> list[dict[str, Any]]:
    """Every step as one cell of the strip: its number, the prompt's mean reward there (toned
    as a reward chip, on 0..1 or the prompt's wider range) and a link to its first sample."""
    means = [m for s in listing.steps if _finite(m := s["mean_reward"])]
    scale = (min(0.0, *means), max(1.0, *means)) if means else None
    cells = []
    for s in _step_pages(listing):
        first = listing.appearances[s["first"]]
        badge = reward_badge("mean reward", s["mean_reward"], scale)
        cells.append(
            {
                "step": s["step"],
                "samples": s["samples"],
                "mean_reward": s["mean_reward"],
                "css_class": badge.css_class,
                "url": sample_url(request, bucket, first.name, first.position),
            }
        )
    return cells


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _chart(request: HttpRequest, bucket: str, listing: Listing) -> list[dict[str, Any]]:
    """Every step's mean reward, each point opening the prompt's first sample in the step."""
    points = []
    for s in _step_pages(listing):
        first = listing.appearances[s["first"]]
        url = sample_url(request, bucket, first.name, first.position)
        points.append({"step": s["step"], "mean_reward": s["mean_reward"], "url": url})
    return points
