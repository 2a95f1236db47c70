"""What a sample, a step or a run looks like, as data: plain Python (no Django), shared by the web
pages, their JSON twins and the terminal UI. Escaping and styling are the templates' job."""

from .blocks import Block
from .charts import histogram_bars, scatter
from .formatting import format_bytes, format_number, format_share, format_stat
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
from .preview import response_preview
from .render import Rendered, compile_mask, last_user_turn
from .runcolour import RUN_COLOURS, run_colour_index
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
    ANSWER,
    COLUMNS,
    NO_COLUMNS,
    POSITION,
    ROWS_PER_PAGE,
    TEXT_FIELDS,
    TableCell,
    TableRow,
    chosen_columns,
    cols_param,
    column_choices,
    default_columns,
    next_order,
    page_numbers,
    page_window,
    sort_column,
    table_column,
    table_row,
)
from .tokens import LOGPROBS_KEY, StripCell, Token, TokenView, token_view
from .verdict import answer_check, badge_json, hit_badges, reward_badge, reward_scale
from .worddiff import WORDS_COMPARED, word_diff

__all__ = [
    "ANSWER",
    "COLUMNS",
    "LOGPROBS_KEY",
    "NO_COLUMNS",
    "POSITION",
    "ROWS_PER_PAGE",
    "RUN_COLOURS",
    "SORTS",
    "TEXT_FIELDS",
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
    "TableCell",
    "TableRow",
    "Token",
    "TokenView",
    "Tone",
    "answer_check",
    "badge_json",
    "chosen_columns",
    "cols_param",
    "column_choices",
    "compile_mask",
    "default_columns",
    "format_bytes",
    "format_number",
    "format_share",
    "format_stat",
    "histogram_bars",
    "hit_badges",
    "last_user_turn",
    "learning_verdict",
    "member_row",
    "next_order",
    "page_numbers",
    "page_window",
    "paired",
    "present_sample",
    "response_preview",
    "reward_badge",
    "reward_scale",
    "run_colour_index",
    "sample_identity",
    "scatter",
    "shared_label",
    "side",
    "sort_column",
    "sort_rows",
    "spark_path",
    "summarize_rows",
    "table_column",
    "table_row",
    "token_view",
    "tone_class",
    "with_verdict",
    "word_diff",
]
