"""What a sample, a step or a run looks like, as data: plain Python (no Django), shared by the web
pages, their JSON twins and the terminal UI. Escaping and styling are the templates' job."""

from .blocks import Block
from .charts import histogram_bars, scatter
from .formatting import (
    format_bytes,
    format_delta,
    format_number,
    format_share,
    format_share_delta,
    format_stat,
    format_unit,
)
from .group import (
    SORTS,
    GroupSummary,
    SharedLabel,
    member_row,
    shared_label,
    sort_rows,
    summarize_rows,
)
from .learning import TONES, LearningVerdict, Tone, learning_verdict, tone_class, with_verdict
from .pair import paired, side
from .render import Rendered, compile_mask
from .sample import (
    InfoRow,
    Node,
    PresentedSample,
    SampleIdentity,
    Section,
    present_sample,
    sample_identity,
)
from .spark import spark_path
from .table import (
    COLUMNS,
    ROWS_PER_PAGE,
    TableRow,
    next_order,
    page_numbers,
    page_window,
    sort_column,
    table_row,
)
from .tokens import LOGPROBS_KEY, StripCell, Token, TokenView, token_view
from .verdict import answer_check, badge_json, hit_badges, reward_scale
from .worddiff import WORDS_COMPARED, word_diff

__all__ = [
    "COLUMNS",
    "LOGPROBS_KEY",
    "ROWS_PER_PAGE",
    "SORTS",
    "TONES",
    "WORDS_COMPARED",
    "Block",
    "GroupSummary",
    "InfoRow",
    "LearningVerdict",
    "Node",
    "PresentedSample",
    "Rendered",
    "SampleIdentity",
    "Section",
    "SharedLabel",
    "StripCell",
    "TableRow",
    "Token",
    "TokenView",
    "Tone",
    "answer_check",
    "badge_json",
    "compile_mask",
    "format_bytes",
    "format_delta",
    "format_number",
    "format_share",
    "format_share_delta",
    "format_stat",
    "format_unit",
    "histogram_bars",
    "hit_badges",
    "learning_verdict",
    "member_row",
    "next_order",
    "page_numbers",
    "page_window",
    "paired",
    "present_sample",
    "reward_scale",
    "sample_identity",
    "scatter",
    "shared_label",
    "side",
    "sort_column",
    "sort_rows",
    "spark_path",
    "summarize_rows",
    "table_row",
    "token_view",
    "tone_class",
    "with_verdict",
    "word_diff",
]
