"""`manage.py visualize` end to end: real server processes on loopback ports, real files, no mocks.

Every expectation is computed from the step files themselves, parsed here with the standard
`json` module (which, like the Relax writer, accepts bare NaN): the server must agree with a
plain reading of the file, whatever clever indexing it does inside.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from rollouts import tui
from rollouts.demo import write_demo
from tests.support.servers import (
    REPO_ROOT,
    ServerProcess,
    child_env,
    free_port,
    get_json,
    loads_strict,
    process_group_members,
    request,
    run_manage,
    run_visualize,
)
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

STEP_NAME = re.compile(r"^(\d+)\.jsonl$")
BUCKET_NAMES = ("train", "eval")
STOP_WITHIN = 5.0  # seconds a stopped server may take to exit
STYLESHEET = REPO_ROOT / "rollouts" / "static" / "rollouts" / "viewer.css"


# -- reading the files the way the writer wrote them ---------------------------------------------
@dataclass(frozen=True)
class Record:
    line: int  # 1-based line number in the file
    obj: dict[str, Any]


def records_of(path: Path) -> list[Record]:
    """The non-blank lines of a step file, parsed leniently (NaN allowed) as the writer wrote."""
    out = []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if raw.strip():
            out.append(Record(number, json.loads(raw)))
    return out


def finite(value: Any) -> Any:
    """What strict JSON output must hold: every NaN/Infinity replaced by null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def column_value(obj: dict[str, Any], name: str) -> float | None:
    """A numeric column's value: a finite non-bool number, or None; `reward.acc` reaches into
    an object reward."""
    head, _, part = name.partition(".")
    value = obj.get(head)
    if part:
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def expected_ordering(records: list[Record], column: str, order: str) -> list[int]:
    """Positions stably sorted by `column`, records without a number last in both directions."""
    values = [column_value(r.obj, column) for r in records]
    numbers = {p: v for p, v in enumerate(values) if v is not None}
    missing = [p for p, v in enumerate(values) if v is None]
    present = sorted(numbers, key=numbers.__getitem__, reverse=order == "desc")  # stable too
    return present + missing


def step_files(bucket_dir: Path) -> list[Path]:
    steps = [p for p in bucket_dir.iterdir() if STEP_NAME.match(p.name) and p.is_file()]
    return sorted(steps, key=lambda p: int(p.stem))


def jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def make_records(n: int, *, tag: str, start: int = 0) -> list[dict[str, Any]]:
    """Small records whose every field depends on `tag`, so two tags never share a line."""
    return [
        {
            "rollout_id": 0,
            "sample_index": i,
            "prompt": f"{tag} prompt {i}",
            "response": f"{tag} response {i} " + "x" * (i % 5),
            "reward": (i * 37 + len(tag)) % 10 / 10,
            "response_length": 10 + i,
            "status": "completed" if i % 3 else "truncated",
        }
        for i in range(start, start + n)
    ]


def api(server: ServerProcess, path: str, **kwargs: Any) -> tuple[int, Any]:
    return get_json(server.url(path), **kwargs)


def ok(server: ServerProcess, path: str) -> Any:
    status, data = api(server, path)
    assert status == 200, (path, data)
    return data


def step_api(bucket: str, filename: str, rest: str = "") -> str:
    return f"/api/jsonl/{quote(bucket)}/file/{quote(filename)}{rest}"


def assert_error_shape(status: int, data: Any, expected_status: int, *secrets: str) -> None:
    assert status == expected_status, data
    assert data["ok"] is False
    assert data["status"] == expected_status
    assert isinstance(data["error"], str) and data["error"]
    assert isinstance(data["message"], str) and data["message"]
    for secret in secrets:
        assert secret not in json.dumps(data, ensure_ascii=False), f"{secret!r} leaked: {data}"


def banner_url(server: ServerProcess) -> str:
    lines = [line for line in server.stdout().splitlines() if line.startswith("  open:")]
    assert len(lines) == 1, server.output()
    return lines[0].split(None, 1)[1]


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket in LISTEN state on `port`, from /proc/net/tcp{,6}."""
    found = set()
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            address, _, hex_port = fields[1].partition(":")
            if int(hex_port, 16) != port or fields[3] != "0A":  # 0A = TCP_LISTEN
                continue
            # The kernel prints each 32-bit word of the address in host byte order.
            words = [int(address[i : i + 8], 16) for i in range(0, len(address), 8)]
            packed = struct.pack(f"={len(words)}I", *words)
            found.add(socket.inet_ntop(family, packed))
    return found


class LinkCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.stylesheets: list[str] = []
        self.scripts: list[str] = []
        self.preloads: list[str] = []  # <link rel="modulepreload">: the entry module's imports
        self.step_options: list[str] = []
        self._in_step_select = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "select":
            self._in_step_select = attr.get("id") == "rv-step"
        elif tag == "option" and self._in_step_select and attr.get("value"):
            self.step_options.append(attr["value"] or "")
        elif tag == "script" and attr.get("src"):
            self.scripts.append(attr["src"] or "")
        href = attr.get("href")
        if href is None:
            return
        if tag == "a":
            self.links.append(href)
        elif tag == "link" and attr.get("rel") == "stylesheet":
            self.stylesheets.append(href)
        elif tag == "link" and attr.get("rel") == "modulepreload":
            self.preloads.append(href)


def parse_links(html: bytes) -> LinkCollector:
    collector = LinkCollector()
    collector.feed(html.decode())
    return collector


# -- fixtures ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo run (12 train steps, 3 eval steps, 64 samples each); never modified."""
    return write_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def demo(demo_dir: Path) -> Iterator[ServerProcess]:
    """One viewer of the demo run, shared by every read-only test."""
    with run_visualize(demo_dir) as server:
        yield server


@pytest.fixture(scope="module")
def cache_server(demo_dir: Path) -> Iterator[ServerProcess]:
    """A viewer used only through endpoints that start no background work, so its cache
    holds exactly what the test put there."""
    with run_visualize(demo_dir) as server:
        yield server


@pytest.fixture(scope="module")
def proxied(demo_dir: Path) -> Iterator[ServerProcess]:
    port = free_port()
    with run_visualize(demo_dir, "--base-path", f"/absproxy/{port}/", port=port) as server:
        yield server


@pytest.fixture(scope="module")
def live_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A flat folder of steps (one `default` bucket) that tests write while it is served;
    each test uses its own step numbers."""
    root = tmp_path_factory.mktemp("live")
    (root / "0.jsonl").write_bytes(jsonl(make_records(2, tag="seed")))
    return root


@pytest.fixture(scope="module")
def live(live_dir: Path) -> Iterator[ServerProcess]:
    with run_visualize(live_dir) as server:
        yield server


# -- catalog -------------------------------------------------------------------------------------
def test_subdirs_names_the_data_dir_without_its_absolute_path(
    demo: ServerProcess, demo_dir: Path
) -> None:
    data = ok(demo, "/api/jsonl/subdirs")
    assert data["data_dir"] == demo_dir.name
    assert str(demo_dir.parent) not in json.dumps(data)
    expected = [name for name in BUCKET_NAMES if (demo_dir / name).is_dir()]
    assert sorted(data["subdirs"]) == sorted(expected)


@pytest.mark.parametrize("bucket", BUCKET_NAMES)
def test_steps_lists_only_step_files_in_numeric_order_with_sizes(
    demo: ServerProcess, demo_dir: Path, bucket: str
) -> None:
    expected = [
        {"filename": p.name, "step": int(p.stem), "size_bytes": p.stat().st_size}
        for p in step_files(demo_dir / bucket)
    ]
    data = ok(demo, f"/api/jsonl/{bucket}/steps")
    assert data == {"subdir": bucket, "steps": expected, "total": len(expected)}
    others = {p.name for p in (demo_dir / bucket).iterdir()} - {s["filename"] for s in expected}
    if bucket == "train":
        assert others, "the demo puts non-step files beside the steps; the test needs them"


# -- samples -------------------------------------------------------------------------------------
@pytest.mark.parametrize("step", ["train/0.jsonl", "train/1.jsonl", "eval/0.jsonl"])
def test_samples_first_page_is_the_files_first_lines_in_file_order(
    demo: ServerProcess, demo_dir: Path, step: str
) -> None:
    bucket, filename = step.split("/")
    records = records_of(demo_dir / bucket / filename)
    data = ok(demo, step_api(bucket, filename, "/samples?page=1&page_size=20"))
    assert data["total"] == len(records)
    assert data["total_pages"] == math.ceil(len(records) / 20)
    assert (data["page"], data["page_size"], data["sort"], data["order"]) == (
        1,
        20,
        "position",
        "asc",
    )
    assert data["filters"] == {}
    assert data["positions"] == list(range(min(20, len(records))))
    assert data["samples"] == [finite(r.obj) for r in records[:20]]


def test_samples_pages_together_hold_every_record_exactly_once(
    demo: ServerProcess, demo_dir: Path
) -> None:
    records = records_of(demo_dir / "train" / "3.jsonl")
    page_size = 7  # does not divide 64: the last page is short
    pages = math.ceil(len(records) / page_size)
    positions, samples = [], []
    for page in range(1, pages + 1):
        data = ok(demo, step_api("train", "3.jsonl", f"/samples?page={page}&page_size={page_size}"))
        assert data["total_pages"] == pages
        positions += data["positions"]
        samples += data["samples"]
    assert positions == list(range(len(records)))
    assert samples == [finite(r.obj) for r in records]
    past = ok(demo, step_api("train", "3.jsonl", f"/samples?page={pages + 1}&page_size=7"))
    assert past["samples"] == [] and past["positions"] == []


@pytest.mark.parametrize(
    ("step", "column", "order"),
    [
        ("train/1.jsonl", "reward", "desc"),  # holds the demo's NaN reward
        ("train/1.jsonl", "reward", "asc"),
        ("train/11.jsonl", "reward", "desc"),  # holds a failed sample with a null reward
        ("train/6.jsonl", "reward.acc", "desc"),  # object rewards, one column per part
        ("train/0.jsonl", "response_length", "desc"),
        ("eval/0.jsonl", "group_index", "asc"),  # null for the one-sample-per-prompt datasets
    ],
)
def test_sorted_samples_follow_the_column_with_missing_and_nan_last(
    demo: ServerProcess, demo_dir: Path, step: str, column: str, order: str
) -> None:
    bucket, filename = step.split("/")
    records = records_of(demo_dir / bucket / filename)
    query = f"/samples?sort={column}&order={order}&page_size=500"
    data = ok(demo, step_api(bucket, filename, query))
    assert (data["sort"], data["order"], data["total"]) == (column, order, len(records))
    assert data["positions"] == expected_ordering(records, column, order)
    assert data["samples"] == [finite(records[p].obj) for p in data["positions"]]
    # The same, stated as properties of what came back.
    values = [column_value(s, column) for s in data["samples"]]
    present = [v for v in values if v is not None]
    assert values == present + [None] * (len(values) - len(present)), "missing values last"
    assert present == sorted(present, reverse=order == "desc")
    if column == "reward" and bucket == "train":
        raw = [r.obj.get("reward") for r in records]
        assert any(v is None or (isinstance(v, float) and math.isnan(v)) for v in raw), (
            "the demo step was expected to hold a NaN or null reward"
        )
        for sample, position in zip(data["samples"], data["positions"], strict=True):
            if isinstance(raw[position], float) and math.isnan(raw[position]):
                assert sample["reward"] is None, "NaN must come out as null"


@pytest.mark.parametrize("dataset", ["gsm8k", "math500", "中文数学"])
def test_samples_filtered_by_dataset_hold_exactly_that_datasets_records(
    demo: ServerProcess, demo_dir: Path, dataset: str
) -> None:
    records = records_of(demo_dir / "eval" / "0.jsonl")
    expected = [p for p, r in enumerate(records) if r.obj.get("dataset") == dataset]
    assert expected, f"the demo eval step has no {dataset} samples"
    data = ok(demo, step_api("eval", "0.jsonl", f"/samples?dataset={quote(dataset)}&page_size=500"))
    assert data["filters"] == {"dataset": dataset}
    assert data["total"] == len(expected)
    assert data["positions"] == expected
    assert {s["dataset"] for s in data["samples"]} == {dataset}


def test_bad_query_parameters_are_400_in_the_json_error_shape(
    demo: ServerProcess, demo_dir: Path
) -> None:
    for query in ("page_size=0", "page=abc", "order=sideways", "sort=no_such_column"):
        status, data = api(demo, step_api("train", "0.jsonl", f"/samples?{query}"))
        assert_error_shape(status, data, 400, str(demo_dir))


# -- one sample ----------------------------------------------------------------------------------
def test_sample_by_position_is_that_line_of_the_file(demo: ServerProcess, demo_dir: Path) -> None:
    path = demo_dir / "train" / "5.jsonl"
    records = records_of(path)
    for position in (0, 1, len(records) // 2, len(records) - 1):
        data = ok(demo, step_api("train", "5.jsonl", f"/sample/{position}"))
        assert data["subdir"] == "train" and data["filename"] == "5.jsonl"
        assert data["position"] == position
        assert data["line"] == records[position].line
        assert data["records"] == len(records)
        assert data["sample"] == finite(records[position].obj)
        assert data["warnings"] == []


def test_sample_with_nan_reward_comes_out_as_strict_json_null_with_a_warning(
    demo: ServerProcess, demo_dir: Path
) -> None:
    path = demo_dir / "train" / "1.jsonl"
    records = records_of(path)
    nan_positions = [
        p
        for p, r in enumerate(records)
        if isinstance(r.obj.get("reward"), float) and math.isnan(r.obj["reward"])
    ]
    assert nan_positions, "the demo's train step 1 holds a NaN reward"
    assert b"NaN" in path.read_bytes()
    for position in nan_positions:
        status, _, body = request(demo.url(step_api("train", "1.jsonl", f"/sample/{position}")))
        assert status == 200
        data = loads_strict(body)  # raises on NaN/Infinity
        assert data["sample"]["reward"] is None
        assert data["sample"] == finite(records[position].obj)
        assert data["warnings"], "a record changed on the way out says so"


def test_sample_past_the_last_record_is_404_in_the_json_error_shape(
    demo: ServerProcess, demo_dir: Path
) -> None:
    count = len(records_of(demo_dir / "train" / "2.jsonl"))
    ok(demo, step_api("train", "2.jsonl", f"/sample/{count - 1}"))
    status, data = api(demo, step_api("train", "2.jsonl", f"/sample/{count}"))
    assert_error_shape(status, data, 404, str(demo_dir))


@pytest.mark.parametrize(
    "path",
    [
        "/api/jsonl/nope/steps",
        "/api/jsonl/train/file/999.jsonl/sample/0",
        "/api/jsonl/train/file/notes.jsonl/sample/0",  # beside the steps, never served
        "/api/jsonl/train/file/notes.jsonl",
        "/api/jsonl/train/file/20.pending.json/columns",
        "/api/jsonl/train/file/..%2F..%2Fetc%2Fpasswd/samples",
        "/api/no/such/endpoint",
    ],
)
def test_unknown_things_are_404_in_the_json_error_shape_without_server_paths(
    demo: ServerProcess, demo_dir: Path, path: str
) -> None:
    status, data = api(demo, path)
    assert_error_shape(status, data, 404, str(demo_dir))


# -- columns and the whole file ------------------------------------------------------------------
@pytest.mark.parametrize("step", ["train/1.jsonl", "train/11.jsonl", "eval/0.jsonl"])
def test_columns_hold_every_records_scalars(demo: ServerProcess, demo_dir: Path, step: str) -> None:
    bucket, filename = step.split("/")
    records = records_of(demo_dir / bucket / filename)
    data = ok(demo, step_api(bucket, filename, "/columns"))
    assert data["records"] == data["total"] == len(records)
    assert data["columns_ready"] is True
    assert data["invalid"] == []
    assert set(data["keys"]) == {key for r in records for key in r.obj}
    columns = data["columns"]
    for name in ("reward", "sample_index", "response_length"):
        assert columns[name] == [column_value(r.obj, name) for r in records], name
    assert columns["status"] == [r.obj.get("status") for r in records]
    for name in columns:
        assert len(columns[name]) == len(records), name


@pytest.mark.parametrize("step", ["train/1.jsonl", "eval/0.jsonl"])
def test_whole_file_streams_every_record_as_strict_json(
    demo: ServerProcess, demo_dir: Path, step: str
) -> None:
    bucket, filename = step.split("/")
    records = records_of(demo_dir / bucket / filename)
    status, headers, body = request(demo.url(step_api(bucket, filename)))
    assert status == 200
    assert headers["content-type"].startswith("application/json")
    data = loads_strict(body)
    assert data["subdir"] == bucket and data["filename"] == filename
    assert data["total"] == len(records)
    assert data["samples"] == [finite(r.obj) for r in records]


# -- serving -------------------------------------------------------------------------------------
def test_banner_url_is_loopback_and_serves_the_index_page(
    demo: ServerProcess, demo_dir: Path
) -> None:
    url = banner_url(demo)
    assert url == f"http://127.0.0.1:{demo.port}/"
    status, headers, body = request(url)
    assert status == 200
    assert headers["content-type"].startswith("text/html")
    assert demo_dir.name in body.decode()
    page = parse_links(body)
    # `/` lands on the latest train step, whose selector offers every train step.
    train_steps = step_files(demo_dir / "train")
    assert page.step_options == [f"/train/{s.stem}/" for s in train_steps]
    selected = re.findall(r'<option value="(/[^"]+)"[^>]* selected>', body.decode())
    assert selected == [f"/train/{train_steps[-1].stem}/"]
    assert "/eval/" in page.links, "the eval bucket tab"


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's socket tables")
def test_default_bind_listens_on_loopback_only(demo: ServerProcess) -> None:
    assert listening_addresses(demo.port) == {"127.0.0.1"}


# -- behind a proxy prefix -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "/api/jsonl/subdirs",
        "/api/jsonl/eval/steps",
        "/api/jsonl/train/file/1.jsonl/sample/3",
        "/api/jsonl/train/file/1.jsonl/samples?sort=reward&order=desc&page_size=5",
        "/api/jsonl/train/file/999.jsonl/sample/0",  # errors too
    ],
)
def test_base_path_api_answers_the_same_with_and_without_the_prefix(
    proxied: ServerProcess, demo: ServerProcess, path: str
) -> None:
    prefix = f"/absproxy/{proxied.port}"
    with_prefix = api(proxied, prefix + path)
    without_prefix = api(proxied, path)
    assert with_prefix == without_prefix
    assert with_prefix == api(demo, path), "a prefix must not change any answer"


def test_base_path_banner_url_carries_the_prefix_and_serves_the_index(
    proxied: ServerProcess,
) -> None:
    url = banner_url(proxied)
    assert url == f"http://127.0.0.1:{proxied.port}/absproxy/{proxied.port}/"
    status, headers, _ = request(url)
    assert status == 200
    assert headers["content-type"].startswith("text/html")


STYLESHEETS = ("viewer.css", "status.css")  # every page's; a page adds its own after them


@pytest.mark.parametrize("strip", [False, True], ids=["prefix-forwarded", "prefix-stripped"])
def test_base_path_index_links_and_stylesheet_carry_the_prefix_and_resolve(
    proxied: ServerProcess, demo_dir: Path, strip: bool
) -> None:
    prefix = f"/absproxy/{proxied.port}"
    for bucket in BUCKET_NAMES:
        status, _, body = request(proxied.url(("/" if strip else prefix + "/") + bucket + "/"))
        assert status == 200
        page = parse_links(body)
        steps = step_files(demo_dir / bucket)
        assert page.step_options == [f"{prefix}/{bucket}/{s.stem}/" for s in steps]
        assert page.stylesheets == [f"{prefix}/static/rollouts/{n}" for n in STYLESHEETS]
        # The page's entry module: its imports are relative to it, so they carry the prefix
        # too (and its preloads are links, below).
        names = ["pages/sample.js"]
        assert page.scripts == [f"{prefix}/static/rollouts/{name}" for name in names]
        assert f"{prefix}/static/rollouts/readable.js" in page.preloads
        links = [u for u in page.links if not u.startswith("#")]  # the skip link stays on the page
        urls = [*links, *page.stylesheets, *page.scripts, *page.preloads, *page.step_options]
        for href in urls:
            assert href.startswith(prefix + "/"), href
        css_status, css_headers, css = request(proxied.url(page.stylesheets[0]))  # viewer.css
        assert css_status == 200
        assert css_headers["content-type"].startswith("text/css")
        assert css == STYLESHEET.read_bytes()
        for href in sorted(set(urls)):
            assert request(proxied.url(href))[0] == 200, href


# -- the cache -----------------------------------------------------------------------------------
def cache_stats(server: ServerProcess) -> dict[str, Any]:
    return ok(server, "/api/cache/stats")


def clear_cache(server: ServerProcess, **headers: str) -> tuple[int, Any]:
    return get_json(server.url("/api/cache/clear"), method="POST", data=b"", headers=headers)


def test_cache_stats_count_opened_steps_and_clear_empties_them(cache_server: ServerProcess) -> None:
    status, _ = clear_cache(cache_server)
    assert status == 200
    assert cache_stats(cache_server)["entries"] == 0
    for filename in ("2.jsonl", "3.jsonl"):
        ok(cache_server, step_api("train", filename, "/samples?page=1"))
    stats = cache_stats(cache_server)
    assert stats["entries"] == 2
    assert stats["bytes"] > 0
    ok(cache_server, step_api("train", "2.jsonl", "/samples?page=2"))
    assert cache_stats(cache_server)["hits"] > stats["hits"], "a reopened step comes from cache"
    status, data = clear_cache(cache_server)
    assert status == 200 and data["ok"] is True
    assert data["entries"] == 0
    after = cache_stats(cache_server)
    assert (after["entries"], after["bytes"]) == (0, 0)


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "http://127.0.0.1:1"},  # same host, another port: another origin
        {"Sec-Fetch-Site": "cross-site"},
    ],
    ids=["other-host", "other-port", "sec-fetch-cross-site"],
)
def test_cross_origin_cache_clear_is_forbidden_and_clears_nothing(
    cache_server: ServerProcess, headers: dict[str, str]
) -> None:
    ok(cache_server, step_api("train", "4.jsonl", "/samples?page=1"))
    before = cache_stats(cache_server)["entries"]
    assert before >= 1
    status, data = clear_cache(cache_server, **headers)
    assert_error_shape(status, data, 403)
    assert cache_stats(cache_server)["entries"] == before


def test_same_origin_cache_clear_is_allowed(cache_server: ServerProcess) -> None:
    ok(cache_server, step_api("train", "4.jsonl", "/samples?page=1"))
    assert cache_stats(cache_server)["entries"] >= 1
    status, data = clear_cache(cache_server, Origin=cache_server.base_url)
    assert status == 200 and data["ok"] is True
    assert cache_stats(cache_server)["entries"] == 0


# -- files that change while served ---------------------------------------------------------------
def test_growing_step_shows_appended_records_on_the_next_request(
    live: ServerProcess, live_dir: Path
) -> None:
    path = live_dir / "10.jsonl"
    first, second, third = (
        make_records(n, tag="grow", start=s) for n, s in ((3, 0), (2, 3), (4, 5))
    )
    path.write_bytes(jsonl(first))
    assert ok(live, step_api("default", "10.jsonl", "/sample/0"))["records"] == 3
    assert ok(live, step_api("default", "10.jsonl", "/columns"))["records"] == 3
    for batch in (second, third):
        with path.open("ab") as f:
            f.write(jsonl(batch))
        records = records_of(path)
        last = len(records) - 1
        data = ok(live, step_api("default", "10.jsonl", f"/sample/{last}"))
        assert data["records"] == len(records)
        assert data["sample"] == records[last].obj
        columns = ok(live, step_api("default", "10.jsonl", "/columns"))
        assert columns["records"] == len(records)
        assert columns["columns"]["reward"] == [column_value(r.obj, "reward") for r in records]
        page = ok(live, step_api("default", "10.jsonl", "/samples?sort=reward&order=desc"))
        assert page["positions"] == expected_ordering(records, "reward", "desc")


def test_half_written_last_line_waits_for_its_newline(live: ServerProcess, live_dir: Path) -> None:
    path = live_dir / "11.jsonl"
    done, pending = make_records(2, tag="half"), make_records(1, tag="half", start=2)[0]
    pending_line = jsonl([pending])
    cut = len(pending_line) // 2
    path.write_bytes(jsonl(done) + pending_line[:cut])
    assert ok(live, step_api("default", "11.jsonl", "/sample/0"))["records"] == 2
    columns = ok(live, step_api("default", "11.jsonl", "/columns"))
    assert (columns["records"], columns["invalid"]) == (2, [])
    assert columns["partial_tail_bytes"] == cut
    status, data = api(live, step_api("default", "11.jsonl", "/sample/2"))
    assert_error_shape(status, data, 404)
    with path.open("ab") as f:
        f.write(pending_line[cut:])
    data = ok(live, step_api("default", "11.jsonl", "/sample/2"))
    assert data["records"] == 3
    assert data["sample"] == pending
    assert ok(live, step_api("default", "11.jsonl", "/columns"))["partial_tail_bytes"] == 0


def test_finished_last_line_without_newline_is_a_record(
    live: ServerProcess, live_dir: Path
) -> None:
    path = live_dir / "12.jsonl"
    records = make_records(3, tag="nonl")
    path.write_bytes(jsonl(records).rstrip(b"\n"))
    data = ok(live, step_api("default", "12.jsonl", "/sample/2"))
    assert (data["records"], data["sample"]) == (3, records[2])
    more = make_records(1, tag="nonl", start=3)
    with path.open("ab") as f:
        f.write(b"\n" + jsonl(more))
    data = ok(live, step_api("default", "12.jsonl", "/sample/3"))
    assert (data["records"], data["sample"]) == (4, more[0])
    assert ok(live, step_api("default", "12.jsonl", "/sample/2"))["sample"] == records[2]


def _same_size_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Different records that serialise to exactly as many bytes, line by line."""
    out = []
    for r in records:
        changed = dict(r)
        changed["response"] = r["response"].swapcase()
        changed["reward"] = round(1 - r["reward"], 1)  # one decimal either way
        out.append(changed)
    assert jsonl(out) != jsonl(records) and len(jsonl(out)) == len(jsonl(records))
    return out


@pytest.mark.parametrize("how", ["shorter", "longer", "same-size", "renamed-over"])
def test_rewritten_step_serves_the_new_content(
    live: ServerProcess, live_dir: Path, how: str
) -> None:
    filename = f"{20 + ['shorter', 'longer', 'same-size', 'renamed-over'].index(how)}.jsonl"
    path = live_dir / filename
    old = make_records(5, tag="old run")
    path.write_bytes(jsonl(old))
    assert ok(live, step_api("default", filename, "/sample/0"))["sample"] == old[0]
    assert ok(live, step_api("default", filename, "/columns"))["records"] == len(old)
    new = {
        "shorter": make_records(3, tag="new"),
        "longer": make_records(8, tag="new run, resumed"),
        "same-size": _same_size_records(old),
        "renamed-over": make_records(4, tag="replacement"),
    }[how]
    before = path.stat().st_mtime_ns
    if how == "renamed-over":
        scratch = live_dir / f".{filename}.tmp"
        scratch.write_bytes(jsonl(new))
        os.replace(scratch, path)
    else:
        with path.open("wb") as f:  # truncate and write, like the Relax writer
            f.write(jsonl(new))
    if how == "same-size":
        # A real rewrite comes seconds later; within one tick of a coarse clock the file would
        # look unchanged (DESIGN.md accepts that), so give it the mtime a later write would have.
        os.utime(path, ns=(before + 10**9, before + 10**9))
    records = records_of(path)
    data = ok(live, step_api("default", filename, "/sample/0"))
    assert data["records"] == len(new)
    assert data["sample"] == new[0]
    columns = ok(live, step_api("default", filename, "/columns"))
    assert columns["records"] == len(new)
    assert columns["columns"]["reward"] == [column_value(r.obj, "reward") for r in records]
    status, _, body = request(live.url(step_api("default", filename)))
    assert status == 200 and loads_strict(body)["samples"] == new


def test_symlinked_step_pointing_outside_the_data_dir_is_404_and_unlisted(
    live: ServerProcess, live_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.jsonl"
    outside.write_bytes(jsonl(make_records(2, tag="secret")))
    (live_dir / "30.jsonl").symlink_to(outside)
    inside = live_dir / "32.jsonl"
    inside.write_bytes(jsonl(make_records(2, tag="inside")))
    (live_dir / "31.jsonl").symlink_to(inside)  # a link that stays inside is fine
    listed = {s["filename"] for s in ok(live, "/api/jsonl/default/steps")["steps"]}
    assert {"31.jsonl", "32.jsonl"} <= listed
    assert "30.jsonl" not in listed
    assert (
        ok(live, step_api("default", "31.jsonl", "/sample/1"))["sample"]
        == records_of(inside)[1].obj
    )
    for rest in ("/sample/0", "/samples", "/columns", ""):
        status, data = api(live, step_api("default", "30.jsonl", rest))
        assert_error_shape(status, data, 404, str(tmp_path), "secret")


# -- starting and stopping -----------------------------------------------------------------------
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_the_server_with_exit_code_0_and_no_worker_left(
    demo_dir: Path, sig: signal.Signals
) -> None:
    with run_visualize(demo_dir) as server:
        ok(server, step_api("train", "0.jsonl", "/sample/0"))
        workers = server.workers()
        assert workers, "gunicorn runs the app in a worker process"
        started = time.monotonic()
        server.proc.send_signal(sig)
        # Waits longer than the limit, so that a slow stop fails the assertion below with its
        # time instead of timing out here (run_visualize kills it on the way out either way).
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.proc.wait(2 * STOP_WITHIN)
        took = time.monotonic() - started
        assert took < STOP_WITHIN, f"the server took {took:.1f} s to stop"
    assert server.returncode == 0, server.output()
    assert not server.killed
    assert "Traceback" not in server.output()
    assert process_group_members(server.pid) == [], "the workers exit with the arbiter"


@pytest.mark.parametrize("kind", ["missing", "a-file"])
def test_bad_data_dir_exits_nonzero_with_a_one_line_error(tmp_path: Path, kind: str) -> None:
    data_dir = tmp_path / "nope"
    if kind == "a-file":
        data_dir.write_text('{"rollout_id": 0}\n')
    result = run_manage("visualize", str(data_dir), "--port", str(free_port()))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("CommandError: DATA_DIR ")
    assert ("does not exist" if kind == "missing" else "not a directory") in lines[0]
    assert "Traceback" not in result.stderr
    assert "open:" not in result.stdout


def test_tui_without_the_extra_says_how_to_install_it(demo_dir: Path, tmp_path: Path) -> None:
    # A `textual` that cannot be imported, first on the path: the extra is "not installed".
    (tmp_path / "textual").mkdir()
    (tmp_path / "textual" / "__init__.py").write_text("raise ImportError('no textual here')\n")
    result = run_manage("visualize", str(demo_dir), "--tui", env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [f"CommandError: {tui.INSTALL_HINT}"]
    assert "open:" not in result.stdout


def run_in_terminal(args: Sequence[str], wanted: bytes) -> bytes:
    """`manage.py visualize ARGS` in a pseudo-terminal until `wanted` is on screen, then `q`;
    what it drew. It must quit with status 0."""
    pytest.importorskip("textual")
    master, slave = os.openpty()
    env = child_env({"TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "visualize", *args],
        cwd=REPO_ROOT,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    screen = bytearray()

    def drain_until(done: Callable[[], bool], seconds: float) -> None:
        # Keep reading: a full terminal buffer would block the app's own output.
        deadline = time.monotonic() + seconds
        while not done() and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    screen.extend(os.read(master, 65536))
                except OSError:  # the child closed the terminal
                    return

    try:
        drain_until(lambda: wanted in screen, 30)
        assert wanted in screen, bytes(screen[-2000:])
        os.write(master, b"q")
        drain_until(lambda: proc.poll() is not None, 15)
        assert proc.wait(timeout=1) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return bytes(screen)


def test_tui_runs_in_a_real_terminal_and_quits_on_q(demo_dir: Path) -> None:
    """The command as a user runs it: a pseudo-terminal, the screen drawn, `q` to leave."""
    # The first sample's counter: the app opened the latest step and drew it.
    run_in_terminal([str(demo_dir), "--tui"], b"Sample 1 / 64")


def test_port_in_use_is_a_one_line_error(demo_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_manage("visualize", str(demo_dir), "--port", str(port))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert lines == [f"CommandError: cannot listen on 127.0.0.1:{port}: Address already in use"]


def tree_state(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def test_nothing_the_viewer_does_writes_into_the_data_dir(tmp_path: Path) -> None:
    data = write_demo(tmp_path / "run")
    before = tree_state(data)
    with run_visualize(data) as server:
        for path in ("/", "/train/3/sample/5/?sort=reward&order=desc", "/eval/0/?i=2",
                     "/api/view/train/1/sample/3", "/api/jsonl/train/file/2.jsonl",
                     "/api/jsonl/train/file/2.jsonl/columns", "/api/cache/stats",
                     "/train/3/stats/", "/train/3/group/1/", "/train/trends/",
                     "/api/jsonl/train/trends", "/api/jsonl/train/poll?watch=3"):  # fmt: skip
            assert request(server.url(path))[0] == 200, path
        status, _ = get_json(server.url("/api/cache/clear"), method="POST", data=b"")
        assert status == 200
    assert tree_state(data) == before


def wait_for_trends(server: ServerProcess, prefix: str = "", bucket: str = "train") -> dict:
    def answer() -> dict:
        status, data = get_json(server.url(f"{prefix}/api/jsonl/{bucket}/trends"))
        assert status == 200, data
        return data

    return wait_for(answer, f"the trends of {prefix or '/'} done", 60, until=lambda d: d["done"])


def write_runs(root: Path, names: Sequence[str]) -> dict[str, Path]:
    """Small demo runs under root/<name>/ (their rollout_result/ inside)."""
    return {name: write_demo(root / name, train_steps=4, samples_per_step=8) for name in names}


def test_a_folder_of_runs_is_served_as_runs_with_a_picker(tmp_path: Path) -> None:
    runs = write_runs(tmp_path / "runs", ["run-b", "run-a"])
    with run_visualize(tmp_path / "runs") as server:
        out = server.stdout()
        assert f"  run-a:  {runs['run-a']}  [train (4 steps), eval (1 steps)]" in out, out
        status, _, body = request(server.url("/"))
        assert status == 200
        names = re.findall(r'<a class="rv-run" href="/runs/([^/]+)/">', body.decode())
        assert names == ["run-a", "run-b"]
        data = wait_for_trends(server, "/runs/run-b")
        assert data["done"] and len(data["points"]) == 4
        status, _, page = request(server.url("/runs/run-a/train/trends/"))
        assert status == 200 and b'data-trends-url="/runs/run-a/api/jsonl/train/trends"' in page


def test_several_data_dirs_are_runs_named_by_their_folders(tmp_path: Path) -> None:
    runs = write_runs(tmp_path, ["alpha", "beta"])
    with run_visualize(runs["alpha"], str(runs["beta"])) as server:
        status, _, body = request(server.url("/"))
        assert status == 200
        # rollout_result/ is in each path; the run is named by its save dir.
        assert re.findall(r'<a class="rv-run" href="/runs/([^/]+)/">', body.decode()) == [
            "alpha",
            "beta",
        ]
        assert request(server.url("/runs/beta/train/3/"))[0] == 200


def test_the_terminal_ui_on_a_folder_of_runs_opens_the_first_run(tmp_path: Path) -> None:
    """`./run demo --tui` (three runs) failed with "the terminal UI shows one run"."""
    write_demo(tmp_path / "runs" / "b-second", train_steps=2, samples_per_step=8)
    write_demo(tmp_path / "runs" / "a-first", train_steps=3, samples_per_step=5)
    screen = run_in_terminal([str(tmp_path / "runs"), "--tui"], b"Sample 1 / 5")
    assert b"opening 'a-first'" in screen and b"b-second" in screen
    assert b"Step 2 " in screen  # a-first's latest train step (0, 1, 2)


def test_the_terminal_ui_on_the_demo_runs_as_run_demo_tui_starts_it(tmp_path: Path) -> None:
    """What `./run demo --tui` does: `python -m rollouts.demo DEST --runs`, then `visualize DEST
    --tui` (smaller runs here); the first run in name order opens."""
    made = subprocess.run(
        [sys.executable, "-m", "rollouts.demo", str(tmp_path / "demo"), "--runs", "--steps", "3"],
        cwd=REPO_ROOT, env=child_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    first = sorted(p.name for p in (tmp_path / "demo").iterdir())[0]
    screen = run_in_terminal([str(tmp_path / "demo"), "--tui"], b"Sample 1 / 64")
    assert f"opening '{first}'".encode() in screen


def test_the_terminal_ui_given_several_data_dirs_opens_the_first(tmp_path: Path) -> None:
    zeta = write_demo(tmp_path / "zeta", train_steps=4, samples_per_step=6)
    alpha = write_demo(tmp_path / "alpha", train_steps=2, samples_per_step=8)
    screen = run_in_terminal([str(zeta), str(alpha), "--tui"], b"Sample 1 / 6")
    assert b"opening 'zeta'" in screen


def test_disk_cache_flag_fills_our_directory_and_a_restart_reads_it(tmp_path: Path) -> None:
    data = write_demo(tmp_path / "run", train_steps=10, samples_per_step=8)
    cache = tmp_path / "cache"
    before = tree_state(data)
    with run_visualize(data, "--disk-cache", str(cache)) as server:
        assert f"kept on disk in {cache}" in server.stdout()
        first = wait_for_trends(server)
    entries = sorted(cache.glob("*.msgpack"))
    assert len(entries) == 10
    with run_visualize(data, "--disk-cache", str(cache)) as server:
        again = wait_for_trends(server)
    assert again["points"] == first["points"] and again["reading"] == first["reading"]
    assert sorted(cache.glob("*.msgpack")) == entries
    assert tree_state(data) == before


def test_disk_cache_off_writes_nothing_and_inside_the_data_dir_is_refused(tmp_path: Path) -> None:
    data = write_demo(tmp_path / "run", train_steps=2, samples_per_step=4)
    home = tmp_path / "cache-home"
    with run_visualize(data, "--disk-cache", "off", env={"XDG_CACHE_HOME": str(home)}) as server:
        assert "not kept on disk" in server.stdout()
        assert wait_for_trends(server)["done"]
    assert not home.exists()
    with run_visualize(data, env={"XDG_CACHE_HOME": str(home)}) as server:
        assert wait_for_trends(server)["done"]
    assert len(list((home / "relax-rollout-viewer" / "steps").glob("*.msgpack"))) == 2
    result = run_manage("visualize", str(data), "--disk-cache", str(data / "cache"))
    assert result.returncode != 0
    assert "inside DATA_DIR" in result.stderr and not (data / "cache").exists()


def banner_stats_line(server: ServerProcess) -> str:
    return next(line for line in server.stdout().splitlines() if "stats:" in line)


def test_the_banner_says_the_disk_cache_is_off_when_it_is_refused(tmp_path: Path) -> None:
    """Refused by the environment's setting (not the flag, which stops with an error)."""
    data = write_demo(tmp_path / "run", train_steps=2, samples_per_step=4)
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    shared.chmod(0o777)
    (data / "cache").mkdir()
    before = tree_state(data)
    cases = {
        str(shared): "writable by group or others",
        str(data / "cache"): "inside a data directory",
    }
    for directory, why in cases.items():
        with run_visualize(data, env={"RELAX_DISK_CACHE": directory}) as server:
            line = banner_stats_line(server)
            assert "not kept on disk" in line and why in line and directory in line
            assert wait_for_trends(server)["done"]
        warnings = [w for w in server.stderr().splitlines() if "not using the disk cache" in w]
        assert len(warnings) <= 1 and all(why in w for w in warnings)
        assert list(Path(directory).iterdir()) == []
    assert tree_state(data) == before
    private = tmp_path / "private"
    with run_visualize(data, env={"RELAX_DISK_CACHE": str(private)}) as server:
        assert banner_stats_line(server).endswith(f"kept on disk in {private}")
        assert wait_for_trends(server)["done"]
    assert len(list(private.glob("*.msgpack"))) == 2


@pytest.mark.parametrize("path", ["/train/3/", "/api/jsonl/subdirs", "/static/rollouts/viewer.js"])
def test_security_headers_of_the_standalone_server(demo: ServerProcess, path: str) -> None:
    status, headers, _ = request(demo.url(path), headers={"Origin": "http://evil.example"})
    assert status == 200
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"
    assert "access-control-allow-origin" not in headers
    if path == "/train/3/":
        assert headers["x-frame-options"] == "DENY"
        csp = headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
