"""`relax-viewer train SPEC.toml` is `manage.py train`."""

from __future__ import annotations

import json

from relax_site.cli import main
from tests.support.servers import REPO_ROOT


def test_relax_viewer_train_prints_the_schema(capsys):
    spec = REPO_ROOT / "examples" / "demo-train.toml"
    main(["train", str(spec), "--print-schema"])
    schema = json.loads(capsys.readouterr().out)
    assert {f["name"] for f in schema["fields"]} >= {"steps", "step_seconds"}
