"""The package table of docs/architecture.md says what each layer may import; the layer rules
`test_layout.py` enforces on the code are the same, row by row (a stale column was how the
README's table went wrong)."""

from __future__ import annotations

import re

from tests.support.servers import REPO_ROOT
from tests.unit.test_layout import LAYERS

DOC = REPO_ROOT / "docs" / "architecture.md"
# The first cell of a row names its layer: a folder or module of the app (or "glue: ...").
ROW_LAYER = {
    "`rollouts/store/`": "store",
    "`rollouts/presentation/`": "presentation",
    "`rollouts/tui/`": "tui",
    "glue": "glue",
    "`rollouts/views/`": "views",
    "`rollouts/urls.py`": "urls",
    "`rollouts/management/`": "commands",
    "`rollouts/training/`": "training",
    "`rollouts/control.py`": "control",
    "`rollouts/install.py`": "install",
    "`rollouts/integrations/`": "integrations",
    "`rollouts/demo/`": "demo",
    "`rollouts/demo_trainer/`": "demo_trainer",
}


def package_rows() -> dict[str, set[str]]:
    """layer -> the layers its row's last column names."""
    text = DOC.read_text()
    table = text[text.index("| package | what it holds | may import") :].split("\n\n")[0]
    rows: dict[str, set[str]] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        first = cells[0].split(":")[0] if cells[0].startswith("glue") else cells[0]
        if first not in ROW_LAYER:
            continue  # relax_site/: a project, not a layer of the app
        layer = ROW_LAYER[first]
        column = cells[-1]
        named = (
            set()
            if column.startswith("(standard library only)")
            else set(re.split(r",\s*", column))
        )
        rows[layer] = named | {layer}  # a layer always imports itself
    return rows


def test_every_layer_has_its_row():
    assert set(package_rows()) == set(LAYERS)


def test_each_rows_may_import_column_is_the_rule_the_code_is_held_to():
    rows = package_rows()
    for layer, allowed in LAYERS.items():
        # `install` (how to install an extra) is said once, in its own row: every layer may.
        assert rows[layer] == allowed - {"install"} | {layer}, layer
