"""The checks of `visualize`'s flags that say how samples are read (pad masking, token text,
TensorBoard scalars): a value that cannot work stops the command in one line, before a page
would fail on it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from rollouts.web import tensorboard_flag_problem, tokenizer_problem


def check_reading_options(options: dict[str, Any], runs: dict[str, Path]) -> None:
    problem = tensorboard_flag_problem(options["tensorboard"], runs)
    if problem is not None:
        raise CommandError(problem)
    mask = options["mask_str"]
    if mask:
        try:
            re.compile(mask)
        except re.error as exc:
            raise CommandError(f"--mask-str is not a valid regular expression: {exc}") from None
    tokenizer = options["tokenizer"]  # one that cannot be read stops here, not on a page
    if tokenizer is not None and (why := tokenizer_problem(Path(tokenizer).expanduser())):
        raise CommandError(f"--tokenizer: {why}")
