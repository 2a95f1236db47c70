"""A prompt across training and two steps compared, on a real server holding two runs: the
prompt's JSON exact, its page's diff (default and chosen), every sample's link to its prompt,
compare's numbers against values worked out by hand from the records below, the flipped
prompts' order, and the errors. Prompt ids are computed here, in the test's own process, and
must agree with the server's and with fresh interpreters' (another hash seed each)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rollouts.store.promptid import format_prompt_id, prompt_id_of_value
from tests.support.servers import REPO_ROOT, ServerProcess, get_json, request, run_visualize

pytestmark = pytest.mark.e2e

P = "<|im_start|>user\nWhat is 6 x 7? 答案?<|im_end|>\n<|im_start|>assistant\n"
Q = [{"role": "user", "content": "Write <b>fizzbuzz</b>"}]  # a list-of-messages prompt
R, S = "only in beta", "flips up"


def pid(prompt: Any) -> str:
    return format_prompt_id(prompt_id_of_value(prompt))


def rec(prompt: Any, reward: float, dataset: str, length: int, response: str = "", **extra: Any):
    text = response or f"answer {length}"
    return {"prompt": prompt, "response": text, "reward": reward, "dataset": dataset,
            "response_length": length, "status": "completed", **extra}  # fmt: skip


ALPHA = {
    1: [rec(P, 1, "math", 10, "The answer is 42 because six sevens"),
        rec(P, 1, "math", 20),
        rec(Q, 0, "code", 30, status="truncated"),
        rec(Q, 0, "code", 40)],
    2: [rec(P, 1, "math", 10, "So the answer is 42 since six sevens"),
        rec(P, 1, "math", 30, "The answer is <i>42</i>"),
        rec(Q, 1, "code", 50), rec(Q, 1, "code", 50), rec(S, 0, "code", 2)],
}  # fmt: skip
BETA = {
    1: [rec(P, 0, "math", 100, status="truncated"), rec(P, 0, "math", 100),
        rec(Q, 1, "code", 5), rec(Q, 1, "code", 5), rec(R, 1, "math", 1), rec(S, 0.75, "code", 4)],
}  # fmt: skip


def write_run(root: Path, steps: dict[int, list[dict]], ensure_ascii: bool) -> Path:
    train = root / "rollout_result" / "train"
    train.mkdir(parents=True)
    for step, records in steps.items():
        lines = [json.dumps(r, ensure_ascii=ensure_ascii) + "\n" for r in records]
        (train / f"{step}.jsonl").write_text("".join(lines), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    base = tmp_path_factory.mktemp("runs")
    # beta is written with ensure_ascii: its prompts are the same prompts as alpha's.
    alpha = write_run(base / "alpha", ALPHA, ensure_ascii=False)
    beta = write_run(base / "beta", BETA, ensure_ascii=True)
    with run_visualize(alpha, str(beta)) as server:
        yield server


def api(viewer: ServerProcess, path: str, status: int = 200) -> Any:
    code, body = get_json(viewer.url(path))
    assert code == status, body
    return body


def html(viewer: ServerProcess, path: str, status: int = 200) -> str:
    code, _, body = request(viewer.url(path))
    assert code == status, body[:300]
    return body.decode()


def test_the_prompts_json_lists_every_appearance(viewer: ServerProcess):
    got = api(viewer, f"/runs/alpha/api/jsonl/train/prompt/{pid(P)}")
    url = "/runs/alpha/train/{}/sample/{}/"
    assert got == {
        "prompt_id": pid(P),
        "prompt": P,
        "appearances": [
            {"step": s, "position": p, "line": p + 1, "reward": 1.0, "status": "completed",
             "response_length": n, "url": url.format(s, p)}
            for s, p, n in ((1, 0, 10), (1, 1, 20), (2, 0, 10), (2, 1, 30))
        ],
        "steps": [{"step": 1, "samples": 2, "mean_reward": 1.0},
                  {"step": 2, "samples": 2, "mean_reward": 1.0}],
        "skipped": [],
        "total": 4, "page": 1, "pages": 1, "page_size": 200,
        "urls": {"page": f"/runs/alpha/train/prompt/{pid(P)}/",
                 "json": f"/runs/alpha/api/jsonl/train/prompt/{pid(P)}",
                 "first": f"/runs/alpha/api/jsonl/train/prompt/{pid(P)}",
                 "prev": None, "next": None,
                 "last": f"/runs/alpha/api/jsonl/train/prompt/{pid(P)}"},
    }  # fmt: skip
    listed = api(viewer, f"/runs/beta/api/jsonl/train/prompt/{pid(Q)}")
    assert listed["prompt"] == Q
    assert [(a["step"], a["position"], a["reward"]) for a in listed["appearances"]] == [
        (1, 2, 1.0),
        (1, 3, 1.0),
    ]


def test_every_sample_carries_its_prompt_id_and_links_to_its_page(viewer: ServerProcess):
    for run, position, prompt in (("alpha", 0, P), ("alpha", 2, Q), ("beta", 5, S)):
        twin = api(viewer, f"/runs/{run}/api/view/train/1/sample/{position}")
        assert twin["prompt_id"] == pid(prompt)
        page = html(viewer, f"/runs/{run}/train/1/sample/{position}/")
        assert f'href="/runs/{run}/train/prompt/{pid(prompt)}/"' in page


def sides(page: str) -> list[str]:
    """The two compared responses' headings (title text), left then right."""
    heads = page.split('class="rv-compare-head"')[1:]
    return [h.split("</a>")[0].rsplit(">", 1)[1] for h in heads]


def test_the_prompt_page_compares_the_earliest_and_latest_or_any_two(viewer: ServerProcess):
    path = f"/runs/alpha/train/prompt/{pid(P)}/"
    page = html(viewer, path)
    assert sides(page) == ["step 1, line 1", "step 2, line 2"]
    assert '<ins class="rv-diff-ins">&lt;i&gt;42&lt;/i&gt;</ins>' in page  # escaped, marked
    assert page.count('data-step="') >= 2 and 'id="rv-prompt-chart"' in page
    chosen = html(viewer, path + "?a=2:0&b=1:0")
    assert sides(chosen) == ["step 2, line 1", "step 1, line 1"]
    assert '<del class="rv-diff-del">So the </del>' in chosen
    assert '<ins class="rv-diff-ins">because </ins>' in chosen
    assert "rv-pair-none" in html(viewer, path + "?a=1:1&b=1:1")
    assert "STEP:POSITION" in html(viewer, path + "?a=1:9", 400)
    assert "STEP:POSITION" in html(viewer, path + "?b=nonsense", 400)


def test_two_runs_compared_with_numbers_worked_out_by_hand(viewer: ServerProcess):
    got = api(viewer, "/runs/alpha/api/jsonl/train/compare?a=2&b=beta:1")
    assert got["a"] == {"run": "alpha", "step": "2", "url": "/runs/alpha/train/2/"}
    assert got["b"] == {"run": "beta", "step": "1", "url": "/runs/beta/train/1/"}
    rows = {row["dataset"]: row for row in got["rows"]}
    assert list(rows) == [None, "code", "math"]
    expected = {  # (samples, mean reward, truncation rate, mean length), a then b
        None: ((5, 4 / 5, 0.0, 142 / 5), (6, 3.75 / 6, 1 / 6, 215 / 6)),
        "code": ((3, 2 / 3, 0.0, 102 / 3), (3, 2.75 / 3, 0.0, 14 / 3)),
        "math": ((2, 1.0, 0.0, 20.0), (3, 1 / 3, 1 / 3, 201 / 3)),
    }
    names = ("samples", "mean_reward", "truncation_rate", "mean_response_length")
    for key, (a, b) in expected.items():
        assert rows[key]["a"] == pytest.approx(dict(zip(names, a, strict=True)))
        assert rows[key]["b"] == pytest.approx(dict(zip(names, b, strict=True)))
        diff = {n: y - x for n, x, y in zip(names[1:], a[1:], b[1:], strict=True)}
        assert rows[key]["difference"] == pytest.approx(diff)
    # P: 1 -> 0 (-1), S: 0 -> 0.75 (+0.75); Q is solved in both, R only in beta.
    assert got["prompts_in_both"] == 3
    assert [(f["prompt_id"], f["change"], f["solved_in"]) for f in got["flipped"]] == [
        (pid(P), -1.0, "a"),
        (pid(S), 0.75, "b"),
    ]
    # What each prompt asks (a chat prompt by its user turn), and its dataset in step a.
    assert [(f["prompt"], f["dataset"]) for f in got["flipped"]] == [
        ("What is 6 x 7? 答案?", "math"),
        ("flips up", "code"),
    ]
    first = got["flipped"][0]
    assert first["a"]["url"] == "/runs/alpha/train/2/sample/0/"
    assert first["b"]["url"] == "/runs/beta/train/1/sample/0/"
    page = html(viewer, first["side_by_side_url"].split("#")[0])
    assert sides(page) == ["step 2, line 1", "step beta:1, line 1"]
    assert f'data-prompt-id="{pid(S)}"' in page


def test_a_flipped_prompt_is_shown_by_its_question_escaped(viewer: ServerProcess):
    page = html(viewer, "/runs/alpha/train/compare/")  # steps 1 and 2: Q flipped
    assert "Write &lt;b&gt;fizzbuzz&lt;/b&gt;" in page
    assert "<b>fizzbuzz" not in page


def test_compare_defaults_and_links_from_the_step_pages(viewer: ServerProcess):
    got = api(viewer, "/runs/alpha/api/jsonl/train/compare")
    assert (got["a"]["step"], got["b"]["step"]) == ("1", "2")  # the first and the latest
    assert [f["prompt_id"] for f in got["flipped"]] == [pid(Q)]  # 0 -> 1
    for page in ("/runs/alpha/train/2/", "/runs/alpha/train/2/stats/"):
        assert 'href="/runs/alpha/train/compare/?a=1&amp;b=2"' in html(viewer, page)


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/runs/alpha/api/jsonl/train/prompt/xyz", 400, "16 lowercase hex digits"),
        ("/runs/alpha/api/jsonl/train/prompt/0123456789ABCDEF", 400, "16 lowercase hex digits"),
        ("/runs/alpha/api/jsonl/train/prompt/0123456789abcdef", 404, "has the prompt"),
        ("/runs/alpha/api/jsonl/nope/prompt/0123456789abcdef", 404, "no bucket"),
        ("/runs/alpha/api/jsonl/train/compare?a=one&b=2", 400, "STEP or RUN:STEP"),
        ("/runs/alpha/api/jsonl/train/compare?a=1&b=gamma:1", 404, "no run 'gamma'"),
        ("/runs/alpha/api/jsonl/train/compare?a=1&b=7", 404, "no step"),
        ("/runs/alpha/api/jsonl/train/compare?a=1&b=2&threshold=inf", 400, "finite number"),
    ],
)
def test_bad_ids_and_steps_get_clear_errors(viewer: ServerProcess, path, status, words):
    body = api(viewer, path, status)
    assert body["ok"] is False and body["status"] == status and words in body["message"]
    page_path = path.replace("/api/jsonl/train/prompt/", "/train/prompt/").replace(
        "/api/jsonl/train/compare", "/train/compare/"
    )
    if "/nope/" not in page_path:
        page_path = page_path if "?" in page_path else page_path + "/"
        assert words.split("'")[0] in html(viewer, page_path, status)


def test_a_prompt_id_is_the_same_in_every_process():
    code = (
        "import sys; from rollouts.store.promptid import format_prompt_id, prompt_id_of_value as p;"
        "import json; print(format_prompt_id(p(json.loads(sys.argv[1]))))"
    )
    for seed in ("1", "2"):
        for prompt in (P, Q):
            out = subprocess.run(
                [sys.executable, "-c", code, json.dumps(prompt)],
                cwd=REPO_ROOT,
                env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                check=True,
            )
            assert out.stdout.strip() == pid(prompt)
