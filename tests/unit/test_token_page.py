"""The token view on the sample page and in its JSON twin (`tokens`), with and without the
tokenizer setting, and the system check that says why a tokenizer cannot be used."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from rollouts.checks import check_settings
from rollouts.install import install_hint
from tests.support.data import sample
from tests.support.pages import PREFIX, page
from tests.support.servers import REPO_ROOT
from tests.support.tokenizer import encode, train_tokenizer

TEXT = "the cat <b> ate"


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


@pytest.fixture
def tokenizer_file(tmp_path: Path) -> Path:
    return train_tokenizer(tmp_path / "tokenizer.json")


@pytest.fixture
def token_step(write_step, tokenizer_file: Path) -> list[int]:
    ids = encode(tokenizer_file, TEXT)
    lps = [-0.01] * len(ids)
    lps[1] = -5.0  # " cat": below 1 %
    write_step(
        "train",
        1,
        [
            sample(0, response=TEXT, response_token_ids=ids, response_rollout_log_probs=lps),
            sample(1),  # no tokens at all
            sample(2, response_token_ids=[5], response_rollout_log_probs=[math.nan]),
        ],
    )
    return ids


def twin(client, position: int) -> dict:
    response = client.get(PREFIX + f"/api/view/train/1/sample/{position}")
    assert response.status_code == 200
    return json.loads(response.content)


def test_sample_page_shows_the_strip_and_lows_but_no_text_without_a_tokenizer(client, token_step):
    p = page(client, "/train/1/sample/0/tokens/")  # the sample page with its card
    assert "rv-token-strip" in p.by_id and "rv-token-lows" in p.by_id
    assert "rv-token-text" not in p.by_id
    assert p.by_id["rv-token-strip"]["data-cells"] == str(len(token_step))
    assert len(re.findall(r'<rect class="rv-strip-lp4"', p.html)) == 1  # the one -5.0
    tokens = twin(client, 0)["tokens"]
    assert (tokens["tokens"], tokens["counted"], tokens["low_count"]) == (
        len(token_step),
        len(token_step),
        1,
    )
    assert tokens["lowest"][0]["position"] == 1 and "text" not in tokens["lowest"][0]
    assert tokens["tokenizer"] is False


def test_with_a_tokenizer_the_tokens_are_escaped_text_coloured_by_probability(
    client, settings, token_step, tokenizer_file
):
    settings.ROLLOUTS_TOKENIZER = str(tokenizer_file)
    p = page(client, "/train/1/sample/0/tokens/")
    box = re.search(r'<div id="rv-token-text"[^>]*>(.*?)</div>', p.html, re.S)
    assert box is not None
    spans = re.findall(
        r'<span class="rv-tok rv-tok-(\w+)"(?: id="[^"]*")? title="[^"]*">([^<]*)</span>',
        box.group(1),
    )
    assert "".join(text for _, text in spans) == "the cat &lt;b&gt; ate"  # escaped, never markup
    assert [kind for kind, _ in spans][1] == "lp4" and {kind for kind, _ in spans} == {"lp0", "lp4"}
    tokens = twin(client, 0)["tokens"]
    assert tokens["tokenizer"] is True and tokens["lowest"][0]["text"] == " cat"


def test_without_a_tokenizer_the_lows_say_how_to_see_their_text(client, token_step):
    p = page(client, "/train/1/sample/0/tokens/")
    caption = re.search(r'<table id="rv-token-lows".*?<caption[^>]*>(.*?)</caption>', p.html, re.S)
    assert caption is not None and "start the viewer with --tokenizer PATH" in caption.group(1)
    assert 'href="#rv-tok-' not in p.html  # no text to link to


def test_with_a_tokenizer_each_low_opens_its_token_in_the_text(
    client, settings, token_step, tokenizer_file
):
    settings.ROLLOUTS_TOKENIZER = str(tokenizer_file)
    p = page(client, "/train/1/sample/0/tokens/")
    lows = re.findall(r'<tr data-position="(\d+)"><td><a href="#rv-tok-(\d+)">', p.html)
    assert lows and all(row == target for row, target in lows)
    anchored = re.findall(
        r'<span class="rv-tok rv-tok-(\w+)" id="rv-tok-(\d+)"[^>]*>([^<]*)<', p.html
    )
    # Every listed low is anchored in the text, and only they are (not all 4 tokens).
    assert sorted(position for _, position, _ in anchored) == sorted(t for _, t in lows)
    assert ("lp4", "1", " cat") in anchored
    assert "--tokenizer" not in p.html


def test_the_strips_legend_names_every_colour_it_draws(client, token_step):
    p = page(client, "/train/1/sample/0/tokens/")
    legend = re.search(r'<figcaption class="rv-meta">(.*?)</figcaption>', p.html, re.S)
    assert legend is not None
    keys = re.findall(r'rv-strip-key rv-strip-(\w+)"></span> ([^,<.]+)', legend.group(1))
    assert [kind for kind, _ in keys] == ["lp1", "lp2", "lp3", "lp4", "masked"]
    drawn = {"lp0", "lp1", "lp2", "lp3", "lp4", "masked"}  # lp0 and lp1 share the one colour
    css = (REPO_ROOT / "rollouts" / "static" / "rollouts" / "tokens.css").read_text()
    for kind in drawn - {"lp0"}:
        assert f".rv-strip-key.rv-strip-{kind} {{" in css, kind


def test_the_sample_page_loads_its_card_after_it_and_the_card_comes_alone(client, token_step):
    """The sample page (and the step page) name the card's URL and link to it; viewer.js asks
    for it as a fragment, which is the card's section alone."""
    for url in ("/train/1/sample/0/", "/train/1/"):
        p = page(client, url)
        card = p.by_id["rv-tokens"]
        assert card["data-tokens-url"] == PREFIX + "/train/1/sample/0/tokens/"
        assert "rv-token-strip" not in p.by_id and f'<a href="{card["data-tokens-url"]}">' in p.html
        assert f"{len(token_step)} tokens" in p.html
    sorted_page = page(client, "/train/1/sample/0/?sort=reward&order=desc")
    assert sorted_page.by_id["rv-tokens"]["data-tokens-url"].endswith(
        "/sample/0/tokens/?sort=reward&order=desc"
    )
    fragment = client.get(PREFIX + "/train/1/sample/0/tokens/", headers={"RV-Fragment": "1"})
    html = fragment.content.decode()
    assert fragment.status_code == 200 and html.lstrip().startswith('<section id="rv-tokens"')
    assert 'id="rv-token-strip"' in html and "<main" not in html and "<html" not in html
    none = client.get(PREFIX + "/train/1/sample/1/tokens/", headers={"RV-Fragment": "1"})
    assert none.status_code == 204 and none.content == b""  # a sample without tokens
    assert "rv-tokens" not in page(client, "/train/1/sample/1/").by_id


def test_samples_without_tokens_or_with_only_nan_never_fail(client, token_step):
    p = page(client, "/train/1/sample/1/")
    assert "rv-tokens" not in p.by_id
    assert twin(client, 1)["tokens"] is None
    nan = twin(client, 2)["tokens"]
    assert (nan["tokens"], nan["counted"], nan["missing"], nan["mean_logprob"]) == (1, 0, 1, None)
    assert "rv-tokens" in page(client, "/train/1/sample/2/").by_id


def test_system_check_names_an_unusable_tokenizer(settings, tmp_path, tokenizer_file, monkeypatch):
    settings.ROLLOUTS_TOKENIZER = str(tokenizer_file)
    assert [w.id for w in check_settings()] == []
    settings.ROLLOUTS_TOKENIZER = str(tmp_path / "nope.json")
    (warning,) = check_settings()
    assert warning.id == "rollouts.W016" and "cannot be read" in warning.msg
    (tmp_path / "bad.json").write_text('{"not": "a tokenizer"}')
    settings.ROLLOUTS_TOKENIZER = str(tmp_path / "bad.json")
    (warning,) = check_settings()
    assert "is not a tokenizer.json" in warning.msg
    settings.ROLLOUTS_TOKENIZER = str(tokenizer_file)
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # as if the extra were not installed
    (warning,) = check_settings()
    assert warning.id == "rollouts.W016" and install_hint("tokens") in warning.msg


def test_visualize_refuses_a_tokenizer_it_cannot_read(data_dir, tmp_path):
    with pytest.raises(CommandError, match=r"--tokenizer: .*nope\.json cannot be read"):
        call_command("visualize", str(data_dir), "--tokenizer", str(tmp_path / "nope.json"))


def test_relax_tokenizer_sets_the_setting_of_the_standalone_site():
    from relax_site.environment import read_environment

    assert read_environment({}).tokenizer is None
    assert (
        read_environment({"RELAX_TOKENIZER": "/t/tokenizer.json"}).tokenizer == "/t/tokenizer.json"
    )
