"""Server time for a step's table page on an 8,000-row step (issue 16), against the sample page
and against reading every row's response, measured in the same run.

    .venv/bin/python bench/bench_table.py                  # 8,000 rows, ~12 KB a line
    .venv/bin/python bench/bench_table.py --rows 20000 --tokens 2000

Writes a step of `--rows` samples (a ~2 KB response, `--tokens` token ids and log-probs each,
statuses and rewards drawn with a seed), starts `manage.py visualize` on a free loopback port
(its own disk cache in a temporary directory), warms it with one request, then times requests on
one keep-alive connection (so the figure is the server's, not TCP's): median and p90 of
`--repeat` requests each. The baselines: the sample page of the same step, and every row's
response preview read at once in this process (what a table without pages would cost).
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from rollouts.demo.samples import make_reasoning  # noqa: E402
from rollouts.presentation import response_preview  # noqa: E402
from rollouts.store import Catalog, line_values  # noqa: E402
from tests.support.servers import run_visualize  # noqa: E402

STEP = "0"
TABLE, JSON = f"/train/{STEP}/table/", f"/api/jsonl/train/file/{STEP}.jsonl/table"
PAGES = {
    "table, first page (file order)": TABLE,
    "table, page 20 by reward desc": f"{TABLE}?sort=reward&order=desc&page=20",
    "table, truncated only, by length": f"{TABLE}?status=truncated&sort=response_length",
    "table JSON, page 20 by reward": f"{JSON}?sort=reward&page=20",
    "table, the page of ?at=7000": f"{TABLE}?sort=reward&order=desc&at=7000",
    "baseline: sample page": f"/train/{STEP}/sample/4000/",
}


def write_step(path: Path, rows: int, tokens: int, seed: int) -> None:
    rng = random.Random(seed)
    prose = make_reasoning(rng, False, 2000)
    ids = ", ".join(str(rng.randrange(150_000)) for _ in range(tokens))
    lps = ", ".join(repr(-rng.expovariate(5.0)) for _ in range(tokens))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for i in range(rows):
            start = rng.randrange(max(1, len(prose) - 2000))
            record = {
                "rollout_id": 0,
                "sample_index": i,
                "prompt": f"<|im_start|>user\nproblem {i // 8}<|im_end|>\n<|im_start|>assistant\n",
                "response": prose[start : start + 2000],
                "reward": float(rng.random() < 0.4),
                "response_length": rng.randrange(100, 4096),
                "status": "truncated" if rng.random() < 0.1 else "completed",
                "group_index": i // 8,
                "response_token_ids": [],
                "response_rollout_log_probs": [],
            }
            line = json.dumps(record, ensure_ascii=False)
            line = line.replace(
                '"response_token_ids": [], "response_rollout_log_probs": []',
                f'"response_token_ids": [{ids}], "response_rollout_log_probs": [{lps}]',
            )
            f.write(line + "\n")


def timed(conn: http.client.HTTPConnection, path: str, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        times.append(time.perf_counter() - start)
        if response.status != 200:
            raise SystemExit(f"{path} answered {response.status}: {body[:300]!r}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--tokens", type=int, default=500, help="token ids and log-probs a line")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-table-") as tmp:
        data = Path(tmp) / "rollout_result"
        step_file = data / "train" / f"{STEP}.jsonl"
        write_step(step_file, args.rows, args.tokens, args.seed)
        size = step_file.stat().st_size
        print(
            f"step: {args.rows} rows, {size / 1e6:.1f} MB ({size / args.rows / 1e3:.1f} kB a line)"
        )
        cache = Path(tmp) / "cache"
        with run_visualize(data, "--disk-cache", str(cache)) as server:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            first = timed(conn, PAGES["table, first page (file order)"], 1)[0]
            print(f"first table page on a fresh server (index + columns): {first * 1e3:.1f} ms")
            figures = {}
            for name, path in PAGES.items():
                times = timed(conn, path, args.repeat)
                figures[name] = statistics.median(times)
                p90 = sorted(times)[int(0.9 * (len(times) - 1))]
                print(f"{name:<36} median {figures[name] * 1e3:7.1f} ms   p90 {p90 * 1e3:7.1f} ms")
            conn.close()
        index = Catalog(data).open_step("train", f"{STEP}.jsonl")
        start = time.perf_counter()
        for values in line_values(index, range(len(index)), ("response", "label")).values():
            response_preview(None if values is None else values.get("response"))
        every = time.perf_counter() - start
        page = figures["table, first page (file order)"]
        sample = figures["baseline: sample page"]
        print(f"baseline: every row's preview read at once (in process): {every * 1e3:.1f} ms")
        print(f"ratio table page / sample page: {page / sample:.2f}")
        print(f"ratio table page / every row's preview: {page / every:.3f}")


if __name__ == "__main__":
    main()
