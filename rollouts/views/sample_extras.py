"""What the sample page shows beside the sample itself, for issue 16: its tokens with their
log-probabilities, the link to the step's table at its row, the link to its prompt's page, and
(opened from a search) the neighbouring matches.
Kept out of `samples.py` so the sample page's context stays one readable function."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from ..conf import conf
from ..links import app_url
from ..presentation.tokens import token_view
from ..query import query_suffix
from ..store import Selection
from ..tokenizer import tokenizer_state
from .lineage import prompt_link
from .search_nav import search_navigation


def sample_extras(
    request: HttpRequest,
    bucket: str,
    step: str,
    position: int,
    selection: Selection,
    values: dict[str, Any],
) -> dict[str, Any]:
    """`token_view` for the page, `tokens` (its JSON, or None) for the twin,
    `sample_table_url` (the table in the same order, at this sample's row: keys.js `l`) and
    the prompt's page (`prompt_link`); with `q=`, `search_navigation`'s links and marks."""
    tokenizer, problem = tokenizer_state(conf.TOKENIZER)
    view = token_view(values, tokenizer)
    if view is not None and problem is not None:  # e.g. the file became a FIFO: said, not hung
        view.problems.append(f"token text is not shown: {problem}")
    table = app_url(request, "step-table", bucket=bucket, step=step)
    return {
        **search_navigation(request, bucket, step, position, values),  # opened from a search
        **prompt_link(request, bucket, values),  # the prompt's page
        "token_view": view,
        "tokens": view.as_json() if view is not None else None,
        "sample_table_url": table + query_suffix(selection, at=position),
    }
