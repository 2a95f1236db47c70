"""axe-core in a real page: the accessibility rules browsers' own tools run, injected from the
vendored copy (tests/support/vendor/axe-core; nothing is downloaded), its serious and critical
violations as one line each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def axe_violations(page: Page, impacts: tuple[str, ...] = SERIOUS) -> list[str]:
    """`rule: target (impact): summary` for each node axe finds at one of `impacts`."""
    page.add_script_tag(path=str(AXE))
    result: dict[str, Any] = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    found = []
    for violation in result["violations"]:
        if violation.get("impact") not in impacts:
            continue
        for node in violation["nodes"]:
            target = " ".join(str(t) for t in node.get("target", []))
            summary = (node.get("failureSummary") or "").replace("\n", " ")[:200]
            found.append(f"{violation['id']}: {target} ({violation['impact']}): {summary}")
    return found
