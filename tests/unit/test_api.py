"""The JSON API through Django's test client, with the app mounted under /portal/rollouts/."""

from __future__ import annotations

import json
import math

import pytest
from django.urls import reverse

from tests.support.data import sample

PREFIX = "/portal/rollouts"


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


def get(client, path: str, **params):
    response = client.get(PREFIX + path, params)
    assert response["Content-Type"] == "application/json"
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, strict_json(body)


def strict_json(body: bytes):
    """Parse like a browser would: bare NaN/Infinity are errors, so is invalid UTF-8."""

    def reject(token: str):
        raise AssertionError(f"non-standard JSON token {token} in the response")

    return json.loads(body.decode("utf-8"), parse_constant=reject)


def assert_error(status: int, data: dict, expected_status: int, fragment: str) -> None:
    assert status == expected_status
    assert data["ok"] is False and data["status"] == expected_status
    assert fragment in data["message"]
    assert "/tmp" not in data["message"] and "Traceback" not in data["message"]


def test_urls_are_reversed_under_the_mount_point():
    assert reverse("rollouts:api-subdirs") == f"{PREFIX}/api/jsonl/subdirs"


def test_subdirs_show_the_data_dir_name_not_its_path(client, write_step, data_dir):
    write_step("train", 0, [sample(0)])
    write_step("eval", 0, [sample(0)])
    status, data = get(client, "/api/jsonl/subdirs")
    assert status == 200
    assert data == {"data_dir": data_dir.name, "subdirs": ["train", "eval"]}


def test_steps_list_numeric_order_with_sizes(client, write_step, data_dir):
    paths = {
        step: write_step("train", step, [sample(i) for i in range(step + 1)]) for step in (10, 2, 0)
    }
    (data_dir / "train" / "notes.jsonl").write_text("{}\n")
    status, data = get(client, "/api/jsonl/train/steps")
    assert status == 200
    assert data["subdir"] == "train" and data["total"] == 3
    assert data["steps"] == [
        {"filename": f"{s}.jsonl", "step": s, "size_bytes": paths[s].stat().st_size}
        for s in (0, 2, 10)
    ]


def test_samples_page_matches_the_file(client, write_step):
    records = [sample(i) for i in range(7)]
    write_step("train", 3, records)
    status, data = get(client, "/api/jsonl/train/file/3.jsonl/samples", page=2, page_size=3)
    assert status == 200
    assert (data["page"], data["page_size"], data["total"], data["total_pages"]) == (2, 3, 7, 3)
    assert data["samples"] == records[3:6]
    assert data["positions"] == [3, 4, 5]


def test_samples_sorted_by_reward_desc_with_nan_last(client, write_step):
    rewards = [0.2, math.nan, 0.9, 0.5, None]
    write_step("train", 0, [sample(i, reward=r) for i, r in enumerate(rewards)])
    status, data = get(
        client, "/api/jsonl/train/file/0.jsonl/samples", sort="reward", order="desc", page_size=10
    )
    assert status == 200
    assert [s["sample_index"] for s in data["samples"]] == [2, 3, 0, 1, 4]
    assert data["samples"][3]["reward"] is None  # NaN goes out as null


def test_samples_filter_by_dataset(client, write_step):
    write_step(
        "eval",
        0,
        [sample(0, dataset="gsm8k"), sample(0, dataset="数学"), sample(1, dataset="数学")],
    )
    status, data = get(client, "/api/jsonl/eval/file/0.jsonl/samples", dataset="数学")
    assert status == 200
    assert data["total"] == 2 and data["positions"] == [1, 2]


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"page": "x"}, "page must be an integer"),
        ({"page": "0"}, "page must be between"),
        ({"page_size": "100000"}, "page_size must be between"),
        ({"order": "up"}, "order must be"),
        ({"sort": "nope"}, "unknown column 'nope'"),
    ],
)
def test_bad_parameters_are_400(client, write_step, params, fragment):
    write_step("train", 0, [sample(0)])
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/samples", **params)
    assert_error(status, data, 400, fragment)


def test_page_size_up_to_1000_as_the_original_viewer_accepted(client, write_step):
    write_step("train", 0, [sample(i) for i in range(1003)])
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/samples", page_size=1000)
    assert status == 200
    assert (data["page_size"], data["total"], data["total_pages"]) == (1000, 1003, 2)
    assert data["positions"] == list(range(1000))
    assert [s["sample_index"] for s in data["samples"]] == list(range(1000))
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/samples", page=2, page_size=1000)
    assert status == 200 and data["positions"] == [1000, 1001, 1002]
    for bad in ("1001", "0", "-1"):
        status, data = get(client, "/api/jsonl/train/file/0.jsonl/samples", page_size=bad)
        assert_error(status, data, 400, "page_size must be between 1 and 1000")


def test_one_sample_by_position_with_line_number(client, write_step):
    write_step("train", 0, [sample(0), "\n", sample(1, response="")])
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/sample/1")
    assert status == 200
    assert data["position"] == 1 and data["line"] == 3 and data["records"] == 2
    assert data["sample"]["response"] == ""


def test_unreadable_line_is_422_with_its_line_number(client, write_step):
    write_step("train", 0, [sample(0), "{broken\n"])
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/sample/1")
    assert_error(status, data, 422, "line 2")
    assert data["line"] == 2
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/samples")
    assert status == 200 and data["total"] == 1


def test_sample_with_nan_and_bad_utf8_goes_out_as_strict_json(client, write_step):
    line = json.dumps(sample(0, reward=math.nan)).encode().replace(b"answer", b"ans\xffwer")
    write_step("train", 0, [line + b"\n"])
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/sample/0")
    assert status == 200
    assert data["sample"]["reward"] is None
    assert data["sample"]["response"] == "ans\ufffdwer 0"
    assert len(data["warnings"]) == 2


@pytest.mark.parametrize(
    "path",
    [
        "/api/jsonl/nope/steps",
        "/api/jsonl/train/file/9.jsonl/samples",
        "/api/jsonl/train/file/notes.jsonl/samples",
        "/api/jsonl/train/file/0.jsonl/sample/5",
        "/api/jsonl/train/file/..%2F..%2Fetc%2Fpasswd",
        "/api/jsonl/train/file/%2E%2E/samples",
        "/api/nothing/here",
    ],
)
def test_unknown_things_are_json_404s(client, write_step, data_dir, path):
    write_step("train", 0, [sample(0)])
    (data_dir / "train" / "notes.jsonl").write_text("{}\n")
    response = client.get(PREFIX + path)
    assert response.status_code == 404
    data = json.loads(response.content)
    assert data["ok"] is False and data["status"] == 404


def test_columns_give_scalars_without_bodies(client, write_step):
    write_step("train", 0, [sample(0, reward={"acc": 1.0}), "oops\n", sample(1, reward=math.inf)])
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/columns")
    assert status == 200
    assert data["records"] == 3 and data["total"] == 2 and data["columns_ready"] is True
    assert data["columns"]["reward"] == [None, None, None]
    assert data["columns"]["reward.acc"] == [1.0, None, None]
    assert data["invalid"] == [{"position": 1, "line": 2, "error": data["invalid"][0]["error"]}]
    assert "prompt" in data["keys"] and "prompt" not in data["columns"]
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/columns", names="status")
    assert list(data["columns"]) == ["status"]


def test_whole_file_is_streamed_without_invalid_lines(client, write_step):
    records = [sample(i) for i in range(4)]
    write_step("train", 0, [records[0], "[1]\n", *records[1:], '{"half'])
    response = client.get(PREFIX + "/api/jsonl/train/file/0.jsonl")
    assert response.status_code == 200 and response.streaming
    data = strict_json(b"".join(response.streaming_content))
    assert data == {"subdir": "train", "filename": "0.jsonl", "samples": records, "total": 4,
                    "complete": True}  # fmt: skip


def test_cache_stats_and_clear(client, write_step):
    write_step("train", 0, [sample(0)])
    get(client, "/api/jsonl/train/file/0.jsonl/sample/0")
    status, stats = get(client, "/api/cache/stats")
    assert status == 200 and stats["entries"] == 1 and stats["bytes"] > 0
    response = client.post(PREFIX + "/api/cache/clear")
    assert response.status_code == 200
    assert json.loads(response.content)["entries"] == 0
    assert get(client, "/api/cache/stats")[1]["entries"] == 0


def test_cache_clear_refuses_cross_origin_and_get(client):
    client = type(client)(enforce_csrf_checks=True)
    response = client.post(PREFIX + "/api/cache/clear", headers={"Origin": "https://evil.example"})
    assert response.status_code == 403
    response = client.post(PREFIX + "/api/cache/clear", headers={"Sec-Fetch-Site": "cross-site"})
    assert response.status_code == 403
    refused = client.get(PREFIX + "/api/cache/clear")
    assert refused.status_code == 405 and refused["Allow"] == "POST"
    assert json.loads(refused.content)["status"] == 405
    ok = client.post(PREFIX + "/api/cache/clear", headers={"Origin": "http://testserver"})
    assert ok.status_code == 200


@pytest.mark.parametrize(
    ("secure", "origin", "allowed"),
    [
        (False, "http://testserver", True),
        (False, "https://testserver", False),  # another origin: the scheme differs
        (True, "https://testserver", True),
        (True, "http://testserver", False),  # a page served over plain HTTP on the same name
        (False, "http://testserver:8443", False),
        (False, "null", False),
    ],
)
def test_cache_clear_compares_the_origin_scheme_too(client, secure, origin, allowed):
    response = client.post(PREFIX + "/api/cache/clear", headers={"Origin": origin}, secure=secure)
    assert response.status_code == (200 if allowed else 403)


def test_behind_a_tls_proxy_the_forwarded_scheme_is_the_origin_scheme(client, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # A browser always sends Host (the test client would otherwise make up "testserver:80").
    https = {"Origin": "https://testserver", "X-Forwarded-Proto": "https", "Host": "testserver"}
    assert client.post(PREFIX + "/api/cache/clear", headers=https).status_code == 200
    http = {**https, "Origin": "http://testserver"}
    assert client.post(PREFIX + "/api/cache/clear", headers=http).status_code == 403


def test_missing_data_dir_is_503_without_the_path(client, settings, tmp_path):
    settings.ROLLOUTS_DATA_DIR = str(tmp_path / "gone")
    status, data = get(client, "/api/jsonl/subdirs")
    assert_error(status, data, 503, "'gone'")


def test_writes_to_read_only_endpoints_are_json_405s(write_step):
    from django.test import Client

    write_step("train", 0, [sample(0)])
    client = Client(enforce_csrf_checks=True)  # as a real server would check
    response = client.post(PREFIX + "/api/jsonl/train/file/0.jsonl/samples")
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"
    assert json.loads(response.content)["message"] == "POST is not allowed; use GET, HEAD"


def test_step_stats_endpoint_reports_counts_reward_and_groups(client, write_step):
    write_step(
        "train",
        2,
        [
            sample(0, reward=1.0, group_index=0),
            sample(1, reward=0.0, group_index=0, status="truncated"),
            "not json\n",
            sample(2, reward=1.0, group_index=1),
        ],
    )
    status, data = get(client, "/api/jsonl/train/file/2.jsonl/stats")
    assert status == 200
    assert (data["samples"], data["invalid"]) == (3, 1)
    assert data["status"] == {"completed": 2, "truncated": 1}
    assert data["reward"]["mean"] == pytest.approx(2 / 3)
    assert data["groups"]["groups"] == 2
    assert data["groups"]["zero_signal_share"] == 0.5  # group 1 has a single sample
    status, data = get(client, "/api/jsonl/train/file/9.jsonl/stats")
    assert_error(status, data, 404, "no step '9.jsonl'")


def test_big_step_pages_in_file_order_come_before_the_column_pass(client, write_step, monkeypatch):
    from rollouts.views import samples as sample_views

    monkeypatch.setattr(sample_views, "INLINE_COLUMNS_BYTES", 0)
    # Hold the background column pass back, so the page must come from the newline scan alone.
    monkeypatch.setattr("rollouts.store.Catalog.prepare_columns", lambda self, index: None)
    records = [sample(i) for i in range(5)]
    path = write_step("train", 0, records)
    with path.open("ab") as f:
        f.write(b"{broken\n")
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/samples", page=2, page_size=2)
    assert status == 200
    assert data["columns_ready"] is False
    assert data["samples"] == records[2:4] and data["positions"] == [2, 3]
    # Before the pass nothing is known about line 6: it counts, and shows as null in its page.
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/samples", page=3, page_size=2)
    assert (data["total"], data["samples"], data["positions"]) == (6, [records[4], None], [4, 5])
    # A sorted page waits for the columns, which then leave the unreadable line out.
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/samples", sort="reward")
    assert status == 200 and data["columns_ready"] is True and data["total"] == 5
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/samples", page=3, page_size=2)
    assert (data["total"], data["samples"]) == (5, [records[4]])


def test_small_step_pages_wait_for_the_columns(client, write_step):
    write_step("train", 0, [sample(0), sample(1)])
    status, data = get(client, "/api/jsonl/train/file/0.jsonl/samples")
    assert status == 200 and data["columns_ready"] is True and data["total"] == 2
