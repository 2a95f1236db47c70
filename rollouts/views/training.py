"""The training API (JSON): schema, state, start, pause, resume, stop. Thin: the work is in
`rollouts/training/` (no Django). Off (404) unless ROLLOUTS_TRAIN_SPEC names a spec; only for
requests that pass the app's access check and ROLLOUTS_TRAIN_ACCESS; POSTs must be same-origin."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponseBase, UnreadablePostError
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt

from ..conf import conf
from ..presentation import with_verdict as reading_with_verdict
from ..store import BadRequest, StoreError
from ..training import (
    EPISODE_ROWS,
    MAX_ROWS,
    PREVIEWS,
    BackendUnavailable,
    HostedElsewhere,
    JobError,
    Manager,
    SpecError,
    ValidationFailed,
    manager_for,
    preview_snapshot,
)
from ..web import catalog_of, error_response, int_param, json_response
from .decorators import api, is_same_origin

TrainView = Callable[[HttpRequest, Manager], HttpResponseBase]
MAX_BODY = 64 * 1024  # bytes
MAX_DEPTH = 16  # levels of objects and arrays in a body ({"values": {...}} is 2)
MAX_DIGITS = 4300  # of an integer (Python's own limit); a field's bounds refuse far fewer
SURROGATE = re.compile(r"[\ud800-\udfff]")


def _hosted(*methods: str) -> Callable[[TrainView], Callable[..., HttpResponseBase]]:
    def decorate(view: TrainView) -> Callable[..., HttpResponseBase]:
        def wrapper(request: HttpRequest) -> HttpResponseBase:
            spec = conf.TRAIN_SPEC
            if spec is None:
                return error_response(HTTPStatus.NOT_FOUND, "no such API endpoint")
            if not conf.TRAIN_ACCESS(request):
                return error_response(HTTPStatus.FORBIDDEN, "you are not allowed to drive training")
            if request.method == "POST" and not is_same_origin(request):
                return error_response(
                    HTTPStatus.FORBIDDEN, "cross-origin requests may not drive training"
                )
            try:
                manager = manager_for(spec, conf.TRAIN_BACKEND, conf.TRAIN_RAY_ADDRESS)
            except (SpecError, HostedElsewhere) as exc:
                return error_response(HTTPStatus.SERVICE_UNAVAILABLE, str(exc))
            return view(request, manager)

        wrapper.__name__ = view.__name__
        wrapped = api(*methods)(wrapper)
        return csrf_exempt(wrapped) if "POST" in methods else wrapped

    return decorate


def _links(request: HttpRequest, manager: Manager) -> dict[str, Any]:
    """The viewer's pages of the job's run: only where the viewer follows the job (`train`);
    a portal's data directories are its own, not the job's."""
    rollout_dir = manager.rollout_dir()
    if not conf.TRAIN_FOLLOW or rollout_dir is None:
        return {"samples": None, "trends": None, "stats": None}
    try:  # the pages read it too (`runs.followed_run_dir`)
        steps = catalog_of(rollout_dir).steps("train")
    except StoreError:
        steps = []  # no train/ yet (the job has not written its first step)
    stats = steps and reverse("rollouts:step-stats", args=("train", steps[-1].name))
    return {
        "samples": reverse("rollouts:bucket", kwargs={"bucket": "train"}),
        "trends": reverse("rollouts:trends", kwargs={"bucket": "train"}),
        "stats": stats or None,  # the latest train step's statistics
    }


def _state(request: HttpRequest, manager: Manager) -> dict[str, Any]:
    params: dict[str, Any] = {"log_tail": int_param(request, "log_tail", 500, 0, 4000)}
    if request.GET.get("metric_limit"):
        params["metric_limit"] = int_param(request, "metric_limit", 5000, 1, 5000)
    for name in ("after_metric", "after_log"):
        if request.GET.get(name):
            params[name] = int_param(request, name, 0, 0, 10**12)
    params["episodes_offset"] = int_param(request, "episodes_offset", 0, 0, 10**12)
    params["episodes_limit"] = int_param(request, "episodes_limit", EPISODE_ROWS, 1, MAX_ROWS)
    preview = request.GET.get("preview")
    if preview:
        if preview not in PREVIEWS:
            raise BadRequest(f"preview must be one of {', '.join(PREVIEWS)}")
        return with_verdict(preview_snapshot(manager.spec, preview, params))
    snapshot = manager.snapshot(params)
    snapshot["links"] = _links(request, manager)
    return with_verdict(snapshot)


def with_verdict(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The snapshot with its reading's `verdict` (label, tone, why), the job's outcome over the
    curve: what the Training page shows, in the words and tone of the trends and the run picker."""
    reading = snapshot.get("reading")
    if isinstance(reading, dict):
        outcome = (snapshot.get("job") or {}).get("outcome")
        snapshot["reading"] = reading_with_verdict(reading, outcome)
    return snapshot


@_hosted("GET", "HEAD")
def api_train_schema(request: HttpRequest, manager: Manager) -> HttpResponseBase:
    return json_response(manager.spec.schema())


@_hosted("GET", "HEAD")
def api_train_state(request: HttpRequest, manager: Manager) -> HttpResponseBase:
    return json_response(_state(request, manager))


def _body(request: HttpRequest) -> dict[str, Any]:
    """The JSON object a POST carries ({} for none), or BadRequest (a 400) for a body that is
    not one: too large (read no further), not UTF-8, not JSON (NaN and Infinity are not),
    nested deeper than MAX_DEPTH, or holding a lone surrogate (`"\\ud800"` is JSON, not text)."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise BadRequest("the Content-Length is not a number") from None
    if length > MAX_BODY:  # before Django reads it: past 2.5 MB it would raise, not answer
        raise BadRequest(f"the body is too large ({MAX_BODY // 1024} KiB at most)")
    try:
        raw = request.body
    except (RequestDataTooBig, UnreadablePostError):
        raise BadRequest(
            f"the body is too large or cut short ({MAX_BODY // 1024} KiB at most)"
        ) from None
    if len(raw) > MAX_BODY:
        raise BadRequest(f"the body is too large ({MAX_BODY // 1024} KiB at most)")
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_not_json, parse_int=_whole)
    except UnicodeDecodeError:
        raise BadRequest("the body is not UTF-8") from None
    except RecursionError:
        raise BadRequest(f"the body is nested too deeply ({MAX_DEPTH} levels at most)") from None
    except ValueError as exc:  # (a JSONDecodeError names the line and column)
        raise BadRequest(f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    _check_tree(body)
    return body


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not a JSON value")


def _whole(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_DIGITS:  # (int() would say so in Python's words)
        raise ValueError(f"a number has more than {MAX_DIGITS} digits")
    return int(digits)


def _check_tree(body: dict[str, Any]) -> None:
    """Every level and every string of the body, walked without recursion."""
    stack: list[tuple[Any, int]] = [(body, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BadRequest(f"the body is nested too deeply ({MAX_DEPTH} levels at most)")
        if isinstance(item, dict):
            stack += [(key, depth) for key in item] + [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, depth + 1) for v in item]
        elif isinstance(item, str) and SURROGATE.search(item):
            raise BadRequest("the body holds a lone surrogate (such as \\ud800): it is not text")


def _conflict(exc: JobError) -> HttpResponseBase:
    """A 409 naming each bad field; a 503 when the backend cannot be reached."""
    if isinstance(exc, BackendUnavailable):
        return error_response(HTTPStatus.SERVICE_UNAVAILABLE, str(exc))
    errors = exc.errors if isinstance(exc, ValidationFailed) else {}
    return error_response(HTTPStatus.CONFLICT, str(exc), errors=errors)


@_hosted("POST")
def api_train_start(request: HttpRequest, manager: Manager) -> HttpResponseBase:
    body = _body(request)
    resume_latest = body.get("resume_latest", False)
    if not isinstance(resume_latest, bool):
        raise BadRequest("resume_latest must be true or false")
    try:
        manager.start(body.get("values", {}), resume_latest=resume_latest)
    except JobError as exc:
        return _conflict(exc)
    return json_response(_state(request, manager))


def _action(name: str) -> Callable[..., HttpResponseBase]:
    @_hosted("POST")
    def view(request: HttpRequest, manager: Manager) -> HttpResponseBase:
        _body(request)
        job = manager.job
        try:
            if job is None:
                raise JobError(f"no running job to {name}")
            getattr(job, name)()
        except JobError as exc:
            return _conflict(exc)
        return json_response(_state(request, manager))

    view.__name__ = f"api_train_{name}"
    return view


api_train_pause = _action("pause")
api_train_resume = _action("resume")
api_train_stop = _action("stop")
