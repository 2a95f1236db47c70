"""`GET api/scalars`: the data directory's TensorBoard scalars, read incrementally.

    {"source": {...what was found and read...},
     "tags": [{"tag", "points", "first_step", "last_step"}, ...],
     "series": {tag: [[step, value, wall_time], ...]}}

`tags=a,b` keeps only those tags (unknown ones are simply absent: a live run may not have
logged them yet); `after=STEP` keeps only points of later steps (without it, every point: a
step may be negative, as TensorBoard's are int64, and `tags` counts the same points `series`
holds). NaN and infinities are null. The whole answer comes from one published version of the
scalars (`source.version`), never from two.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBase

from ..store import Unavailable
from ..store.scalars import INSTALL_HINT
from ..web import absent_source, current_run, get_catalog, int_param, json_response, store_for
from .decorators import api
from .trends import STEP_MAX

MAX_TAGS_PARAM = 1000  # tags one request may name
STEP_MIN = -(2**63)  # TensorBoard's steps are int64


@api("GET", "HEAD")
def api_scalars(request: HttpRequest) -> HttpResponseBase:
    after = int_param(request, "after", STEP_MIN - 1, STEP_MIN, STEP_MAX)
    named = (t.strip() for t in request.GET.get("tags", "").split(","))
    wanted = [t for t in named if t][:MAX_TAGS_PARAM]
    store, why = store_for(get_catalog(request).root, current_run(request))
    if store is None:
        return json_response({"source": absent_source(why), "tags": [], "series": {}})
    store.refresh()
    if store.missing_package:
        raise Unavailable(INSTALL_HINT)
    snapshot = store.snapshot()
    tags = snapshot.tags()
    if wanted:
        keep = set(wanted)
        tags = [t for t in tags if t["tag"] in keep]
    series = {
        t["tag"]: [[s, v, w] for s, v, w in snapshot.points(t["tag"]) if s > after] for t in tags
    }
    return json_response({"source": store.source(snapshot), "tags": tags, "series": series})
