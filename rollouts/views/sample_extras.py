"""What the sample page shows beside the sample itself, to read it closely: its tokens with their
log-probabilities, the link to the step's table at its row, the link to its prompt's page, and
(opened from a search) the neighbouring matches.
Kept out of `samples.py` so the sample page's context stays one readable function."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from ..conf import conf
from ..presentation import LOGPROBS_KEY, TokenView, token_view
from ..store import Selection
from ..web import INSTALL_TOKENS, app_url, query_suffix, tokenizer_state
from .lineage import prompt_link
from .search_nav import search_navigation

# The pages that show the tokens card later, from its own URL (see `sample_extras`).
DEFERRED_CARD_VIEWS = frozenset({"sample", "step"})


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
    the prompt's page (`prompt_link`); with `q=`, `search_navigation`'s links and marks.

    The sample page and the step page defer the tokens card (`tokens_card`: its URL, which
    viewer.js loads after the page): a 4,096-token sample's card costs as much as its text,
    and it sits below the response. Its own URL (`sample-tokens`) and the twins compute it."""
    extras = {
        **search_navigation(request, bucket, step, position, values),  # opened from a search
        **prompt_link(request, bucket, values),  # the prompt's page
        "sample_table_url": app_url(request, "step-table", bucket=bucket, step=step)
        + query_suffix(selection, at=position),
    }
    if getattr(request.resolver_match, "url_name", None) in DEFERRED_CARD_VIEWS:
        logprobs = values.get(LOGPROBS_KEY)
        if isinstance(logprobs, list):
            url = app_url(request, "sample-tokens", bucket=bucket, step=step, position=position)
            extras["tokens_card"] = {"url": url + query_suffix(selection), "count": len(logprobs)}
        return extras
    view = card_view(values)
    return {**extras, "token_view": view, "tokens": view.as_json() if view is not None else None}


def card_view(values: dict[str, Any]) -> TokenView | None:
    """The sample's tokens as the card shows them (token text with the configured tokenizer)."""
    tokenizer, problem = tokenizer_state(conf.TOKENIZER)
    view = token_view(values, tokenizer)
    if view is not None and problem is not None:  # e.g. the file became a FIFO: said, not hung
        view.problems.append(f"token text is not shown: {problem}")
    elif view is not None and view.text is None and view.lows:
        view.text_hint = (
            TEXT_HINT if conf.TOKENIZER is None else f"to see their text, {INSTALL_TOKENS}"
        )
    return view


# The least likely tokens without a tokenizer are bare ids: the card says how to get their text.
TEXT_HINT = (
    "token ids only: start the viewer with --tokenizer PATH (the model's tokenizer.json, or"
    " ROLLOUTS_TOKENIZER) to see each token's text and the response coloured by probability"
)
