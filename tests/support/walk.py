"""Every endpoint of the app, called on a fixture tree, for checks that hold for all of them
(no absolute path in any body or header, no 500).

`ROUTES` names, for every URL pattern of `rollouts.urls` (by its name), the paths that exercise
it: the ordinary case and its error cases. `uncovered()` lists the patterns that have none, so
a pattern added to urls.py without a line here fails the test that walks them.

The fixture tree this expects (see `write_tree`): bucket `train` with step 1 (ordinary), step 2
(bad lines and hostile values) and, where the server may not read it, step 8; bucket `eval`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from django.urls import URLResolver

from rollouts.store.promptid import format_prompt_id, prompt_id_of_value
from tests.support.data import relax_line, sample

# (status, headers, body) for (method, path)
Get = Callable[[str, str], tuple[int, dict[str, str], bytes]]

UNREADABLE_STEP = 8
API = "/api/jsonl/train/file/{f}"
PROMPT = format_prompt_id(prompt_id_of_value(sample(0)["prompt"]))  # in steps 1 and 2
PROMPT_ARGS = (PROMPT, f"{PROMPT}?a=1:0&b=2:0", f"{PROMPT}?a=nope", "zz", "0123456789abcdef")
STEP_ARGS = ("{s}", "{s}?sort=reward&order=desc", "{s}?sort=nope", "{s}?i=2")
ROUTES: dict[str, list[tuple[str, str]]] = {
    "index": [("GET", "/")],
    "api-subdirs": [("GET", "/api/jsonl/subdirs")],
    "api-steps": [("GET", "/api/jsonl/train/steps"), ("GET", "/api/jsonl/nope/steps")],
    "api-file": [("GET", API), ("HEAD", API), ("POST", API)],
    "api-samples": [
        ("GET", API + "/samples"),
        ("GET", API + "/samples?sort=reward&order=desc&page_size=500"),
        ("GET", API + "/samples?page=99"),
        ("GET", API + "/samples?page_size=0"),
        ("GET", API + "/samples?sort=nope"),
    ],
    "api-sample": [("GET", API + f"/sample/{p}") for p in (0, 1, 2, 3, 999)],
    "api-columns": [("GET", API + "/columns"), ("GET", API + "/columns?names=nope")],
    "api-stats": [("GET", API + "/stats")],
    "api-group": [("GET", API + "/group/0"), ("GET", API + "/group/999")],
    "api-table": [
        ("GET", API + "/table?sort=response_length&status=completed&page=2&page_size=1&at=1"),
        ("POST", API + "/table"),
    ],
    "api-trends": [("GET", "/api/jsonl/train/trends"), ("GET", "/api/jsonl/train/trends?after=x")],
    "api-poll": [("GET", "/api/jsonl/train/poll?after=0&size=1&watch={f}&watch_size=1")],
    "api-search": [
        ("GET", "/api/jsonl/train/search?q=answer"),
        ("GET", "/api/jsonl/train/search?q=(&regex=1"),
        ("GET", "/api/jsonl/train/search?q=x&steps=9-1&after=bad"),
        ("GET", "/api/jsonl/nope/search?q=x"),
    ],
    "api-view-step": [("GET", "/api/view/train/" + a) for a in STEP_ARGS],
    "api-view-sample": [("GET", "/api/view/train/{s}/sample/" + str(p)) for p in (0, 1, 2, 999)],
    "bucket": [("GET", "/train/"), ("GET", "/eval/"), ("GET", "/nope/")],
    "trends": [("GET", "/train/trends/"), ("GET", "/nope/trends/")],
    "search": [
        ("GET", "/train/search/"),
        ("GET", "/train/search/?q=answer&field=response"),
        ("GET", "/train/search/?q=(&regex=1"),
        ("GET", "/nope/search/?q=x"),
    ],
    "step-stats": [("GET", "/train/{s}/stats/")],
    "group": [("GET", "/train/{s}/group/0/"), ("GET", "/train/{s}/group/999/")],
    "step-table": [("GET", "/train/{s}/table/?sort=reward&order=desc&page=99&at=2")],
    "step": [
        ("GET", "/train/" + a.replace("?", "/?") + ("" if "?" in a else "/")) for a in STEP_ARGS
    ]
    + [("POST", "/train/{s}/")],
    "sample": [("GET", f"/train/{{s}}/sample/{p}/") for p in (0, 1, 2, 3, 999)]
    + [("GET", "/train/{s}/sample/0/?q=answer"), ("GET", "/train/{s}/sample/0/?q=(&regex=1")],
    "sample-tokens": [("GET", f"/train/{{s}}/sample/{p}/tokens/") for p in (0, 1, 2, 999)]
    + [("POST", "/train/{s}/sample/0/tokens/")],
    "api-scalars": [
        ("GET", "/api/scalars"),
        ("GET", "/api/scalars?tags=a,b&after=1"),
        ("GET", "/api/scalars?after=x"),
        ("POST", "/api/scalars"),
    ],
    "prompt": [
        ("GET", f"/train/prompt/{a.replace('?', '/?', 1)}" + ("" if "?" in a else "/"))
        for a in PROMPT_ARGS
    ],
    "api-prompt": [("GET", f"/api/jsonl/train/prompt/{a}") for a in PROMPT_ARGS],
    "compare": [
        ("GET", "/train/compare/"),
        ("GET", "/train/compare/?a={s}&b=1"),
        ("GET", f"/train/compare/?a=1&b=2&prompt={PROMPT}"),
        ("GET", "/train/compare/?a=1&b=2&prompt=zz"),
        ("GET", "/train/compare/?a=x&b=nope:1&threshold=inf"),
        ("POST", "/train/compare/"),
    ],
    "api-compare": [
        ("GET", "/api/jsonl/train/compare?a=1&b={s}"),
        ("GET", "/api/jsonl/train/compare?a=1&b=nope:1"),
        ("GET", "/api/jsonl/train/compare?threshold=x"),
    ],
    "api-not-found": [("GET", "/api/nothing/here"), ("POST", "/api/jsonl/x")],
    "not-found": [("GET", "/train/abc/"), ("GET", "/train/{s}/sample/x/"), ("GET", "/nope/1/x")],
}
# Outside a data directory: once, never per run.
TOP_ROUTES: dict[str, list[tuple[str, str]]] = {
    "runs": [
        ("GET", "/runs/"),
        ("GET", "/runs/nope/"),
        ("GET", "/runs/?q=%2A&reading=bogus&page=x"),
        ("GET", "/runs/?page=99999&sort=reward&order=desc"),
    ],
    "api-runs": [
        ("GET", "/api/runs"),
        ("GET", "/api/runs?q=a*&reading=pending&sort=changed&page=2"),
        ("GET", "/api/runs?reading=bogus"),
        ("GET", "/api/runs?page=-1"),
        ("POST", "/api/runs"),
    ],
    "api-cache-stats": [("GET", "/api/cache/stats")],
    "api-cache-clear": [("POST", "/api/cache/clear"), ("GET", "/api/cache/clear")],
    "training": [("GET", "/training/"), ("POST", "/training/")],
    "api-train-schema": [("GET", "/api/train/schema")],
    "api-train-state": [("GET", "/api/train/state"), ("GET", "/api/train/state?preview=kl")],
    "api-train-start": [("POST", "/api/train/start"), ("GET", "/api/train/start")],
    "api-train-pause": [("POST", "/api/train/pause")],
    "api-train-resume": [("POST", "/api/train/resume")],
    "api-train-stop": [("POST", "/api/train/stop")],
}


def pattern_names(patterns: Iterable[Any] | None = None) -> set[str]:
    """Every URL pattern's name, a run's patterns as "run:<name>"."""
    if patterns is None:
        from rollouts import urls

        patterns = list(urls.urlpatterns)
    names: set[str] = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            prefix = f"{pattern.namespace}:" if pattern.namespace else ""
            names |= {prefix + name for name in pattern_names(pattern.url_patterns)}
        elif pattern.name:
            names.add(pattern.name)
    return names


def uncovered(run: str | None) -> set[str]:
    """Patterns the walk would not exercise (in single-run mode, or under runs/<run>/)."""
    covered = set(TOP_ROUTES) | set(ROUTES)
    if run is not None:
        covered |= {f"run:{name}" for name in ROUTES}
    return pattern_names() - covered


def paths(steps: Iterable[int], prefix: str = "") -> list[tuple[str, str]]:
    """(method, path) of every route of a data directory, for every step given (and a missing
    one, and a name that is not a step), under `prefix` ("" or "/runs/<name>")."""
    result: list[tuple[str, str]] = []
    for routes in ROUTES.values():
        for method, template in routes:
            if "{" not in template:
                result.append((method, prefix + template))
                continue
            cases = [(str(s), f"{s}.jsonl") for s in steps]
            cases += [("99", "99.jsonl"), ("99", "..%2Fx.jsonl"), ("99", "notes.txt")]
            result += [(method, prefix + template.format(s=s, f=f)) for s, f in cases]
    return list(dict.fromkeys(result))


def top_paths() -> list[tuple[str, str]]:
    return [route for routes in TOP_ROUTES.values() for route in routes]


def walk(get: Get, routes: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple]:
    return {(method, path): get(method, path) for method, path in routes}


def leaks(answers: dict[tuple[str, str], tuple], secrets: Iterable[str]) -> list[str]:
    """Where any of `secrets` (absolute paths) shows in a body or a header, JSON-escaped too."""
    found = []
    forms = set()
    for secret in secrets:
        forms |= {secret, json.dumps(secret)[1:-1], secret.replace("/", "%2F")}
    for (method, path), (_, headers, body) in answers.items():
        text = body.decode("utf-8", "replace") + "\n".join(f"{k}: {v}" for k, v in headers.items())
        if any(form in text for form in forms):
            found.append(f"{method} {path}")
    return found


def server_errors(answers: dict[tuple[str, str], tuple]) -> list[str]:
    return [f"{m} {p}: {a[0]}" for (m, p), a in answers.items() if a[0] >= 500 and a[0] != 503]


def write_tree(data_dir: Path, unreadable: bool = False) -> None:
    """The tree `ROUTES` expects (step 8 only when `unreadable`, for the caller to chmod)."""
    train, evals = data_dir / "train", data_dir / "eval"
    train.mkdir(parents=True, exist_ok=True)
    evals.mkdir(exist_ok=True)
    ordinary = "".join(relax_line(sample(i, dataset="math")) for i in range(4))
    (train / "1.jsonl").write_text(ordinary)
    (evals / "1.jsonl").write_text(ordinary)
    hostile = [
        relax_line(sample(0)),
        '{"sample_index": 1, "prompt": \n',  # malformed: line 2
        '{"sample_index": 2, "response": "caf\\udcc3", "reward": 1e999, "status": "x\\udcc3"}\n',
        '{"sample_index": 3, "label": ' + "9" * 5000 + ', "reward": 0.5, "group_index": 1}\n',
        '{"metadata": ' + "[" * 5000 + "]" * 5000 + "}\n",
        relax_line(sample(5, reward=float("nan"))),
    ]
    (train / "2.jsonl").write_text("".join(hostile))
    (train / "notes.txt").write_text("not a step\n")
    if unreadable:
        (train / f"{UNREADABLE_STEP}.jsonl").write_text(ordinary)
