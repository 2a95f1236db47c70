"""The sample page's flags (issue 30): the shown sample's flags with their reasons, and the links
to the previous and next flagged samples of the page's order.

Never waits for the step's column pass: before it is done the flags are None (the page says
they come after indexing) and there are no flagged links; `Catalog.prepare_columns` has it
started by then. Kept out of `samples.py` so the sample page's context stays one function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..store import Catalog, Selection, StepIndex


def sample_flags(
    catalog: Catalog,
    index: StepIndex,
    ordering: Sequence[int],
    rank: int,
    selection: Selection,
) -> dict[str, Any]:
    """`flags` (a list of {"name", "reason"}, or None while the columns are being decoded) and
    the positions of the previous and next flagged samples in `ordering` around `rank` (0-based),
    flagged meaning with the selection's `flag` when it has one, else with any flag."""
    position = ordering[rank]
    flags = catalog.flags_of(index, position)
    if flags is None:
        catalog.prepare_columns(index)  # a no-op when it runs already
        return {"flags": None, "prev_flagged": None, "next_flagged": None}
    flagged = catalog.flagged_in_order(index, selection, ordering)
    before, after = flagged.rfind(1, 0, rank), flagged.find(1, rank + 1)
    return {
        "flags": flags,
        "prev_flagged": ordering[before] if before >= 0 else None,
        "next_flagged": ordering[after] if after >= 0 else None,
    }
