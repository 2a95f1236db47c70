"""How well the flags agree with labelled samples: per flag, true and false positives, false
negatives, precision and recall, on the fixtures of tests/support/flag_fixtures.py (each failure
and its near-misses, Qwen-style responses).

    .venv/bin/python bench/flags_precision.py            # steps written to a temp dir, deleted
    .venv/bin/python bench/flags_precision.py --keep /tmp/flagsteps   # keep the JSONL steps
    .venv/bin/python bench/flags_precision.py --cost     # the measures' cost per sample

The steps are written as the Relax writer writes them and read through the store (`Catalog`:
the newline scan, the column pass's measures, the step's flag context), as the pages read them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rollouts.store import FLAGS, Catalog
from tests.support.flag_fixtures import all_steps, write_steps


def judge(data_dir: Path) -> list[tuple[str, str, frozenset[str], frozenset[str], bool]]:
    """(step, sample, expected, got, near miss) for every labelled sample."""
    steps = all_steps()
    paths = write_steps(data_dir, steps)
    catalog = Catalog(data_dir)
    out = []
    for step in steps:
        index = catalog.open_step("default", paths[step.name].name)
        catalog.stats(index)  # the column pass
        for position, sample in enumerate(step.samples):
            flags = catalog.flags_of(index, position) or []
            got = frozenset(f["name"] for f in flags)
            out.append((step.name, sample.name, sample.expected, got, sample.near_miss))
    return out


def table(results: list[tuple[str, str, frozenset[str], frozenset[str], bool]]) -> str:
    rows = [
        "| flag | labelled | TP | FP | FN | precision | recall |",
        "|---|---|---|---|---|---|---|",
    ]
    total = [0, 0, 0, 0]

    def ratio(a: int, b: int) -> str:
        return f"{a / b:.2f}" if b else "-"

    for name in FLAGS:
        tp = sum(name in e and name in g for _, _, e, g, _ in results)
        fp = sum(name not in e and name in g for _, _, e, g, _ in results)
        fn = sum(name in e and name not in g for _, _, e, g, _ in results)
        labelled = sum(name in e for _, _, e, _, _ in results)
        for i, v in enumerate((labelled, tp, fp, fn)):
            total[i] += v
        rows.append(
            f"| {name} | {labelled} | {tp} | {fp} | {fn} | {ratio(tp, tp + fp)} | "
            f"{ratio(tp, tp + fn)} |"
        )
    labelled, tp, fp, fn = total
    rows.append(
        f"| **total** | {labelled} | {tp} | {fp} | {fn} | {ratio(tp, tp + fp)} | "
        f"{ratio(tp, tp + fn)} |"
    )
    return "\n".join(rows)


def cost() -> None:
    """`measure_response` per sample on healthy responses (docs/performance.md's cost table)."""
    import json
    import time
    import timeit
    from functools import partial

    import msgspec

    from rollouts.store.measures import measure_response
    from tests.support import flag_fixtures as fx

    english = "<think>\n" + fx.derivation(5, 14) + "\n</think>\n\nSo the answer is $\\boxed{12}$."
    big = "<think>\n" + fx.derivation(6, 520) + "\n</think>\n\nSo the answer is $\\boxed{12}$."
    chinese = "<think>\n" + fx.CHINESE_REASONING * 3 + "\n</think>\n\n所以答案是 $\\boxed{12}$。"
    long_chinese = (
        "<think>\n"
        + (fx.CHINESE_REASONING + fx.CHINESE_WITH_TERMS) * 40
        + "\n</think>\n\n所以答案是 $\\boxed{12}$。"
    )
    cases = {
        "English, final \\boxed{}": english,
        "the same, ~30 kB": big,
        "~1 kB ending in <|im_end|>": english + fx.END,
        "~30 kB ending in <|im_end|>": big + fx.END,
        "Chinese, ~1 kB": chinese,
        "Chinese, ~23 kB": long_chinese,
    }
    for name, text in cases.items():
        raw = msgspec.Raw(json.dumps(text, ensure_ascii=False).encode())
        timer = timeit.Timer(partial(measure_response, raw, "12"), timer=time.process_time)
        best = min(timer.repeat(9, 500)) / 500
        print(f"{name:32s} {len(raw):7,d} bytes {best * 1e6:9.1f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="write the steps here and keep them")
    parser.add_argument("--cost", action="store_true", help="time the measures per sample")
    args = parser.parse_args()
    if args.cost:
        cost()
        return
    if args.keep:
        results = judge(args.keep)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            results = judge(Path(tmp))
    samples = len(results)
    near = sum(r[4] for r in results)
    flagged_near = [r for r in results if r[4] and r[3]]
    print(
        f"{samples} samples in {len({r[0] for r in results})} steps "
        f"({near} near-misses, {sum(bool(r[2]) for r in results)} with a failure)\n"
    )
    print(table(results))
    wrong = [r for r in results if r[2] != r[3]]
    print(f"\nnear-misses flagged: {len(flagged_near)} of {near}")
    for step, name, expected, got, _ in wrong:
        print(f"- {step}: {name}: labelled {sorted(expected)}, flagged {sorted(got)}")


if __name__ == "__main__":
    main()
