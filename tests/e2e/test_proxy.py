"""The viewer behind a real nginx, as docs/deployment.md deploys it:
`gunicorn -c python:relax_site.gunicorn_conf relax_site.wsgi` configured only by environment
variables, nginx in front under `/absproxy/8080/`, in both proxy styles (nginx strips the
prefix, or forwards the full path).

Every request here goes through nginx unless a test says otherwise; both servers listen on
free loopback ports and are stopped at the end of the module, whatever happened (see
`tests/proxy.py`).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from rollouts.demo import write_demo
from tests.support.proxy import (
    GUNICORN_CONFIG,
    LOCATIONS,
    PREFIX,
    Proxy,
    Response,
    fetch,
    is_loopback_listener,
    location_block,
    port_is_closed,
    require_nginx,
    run_proxy,
    start_nginx,
    stopping,
)
from tests.support.servers import REPO_ROOT, child_env, loads_strict, process_group_members
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

STYLES = list(LOCATIONS)  # "prefix-stripped", "prefix-forwarded"
# One style binds with PORT, the other with RELAX_BIND: both knobs of the config file.
BIND_ENV = {
    "prefix-stripped": {"PORT": "{port}"},
    "prefix-forwarded": {"RELAX_BIND": "127.0.0.1:{port}"},
}
ALLOWED_NAME = "viewer.test"  # a host name only RELAX_ALLOWED_HOSTS allows
RELAX_ENV = {
    "RELAX_ALLOWED_HOSTS": f"127.0.0.1,{ALLOWED_NAME}",
    "RELAX_CACHE_MEMORY_MB": "64",
    "RELAX_CACHE_ENTRIES": "5",
}
LATEST_TRAIN = "/train/11/"  # the demo's last train step
MAX_REDIRECTS = 5


# -- fixtures ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def nginx() -> str:
    return require_nginx()


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo run (`rollout_result/`: 12 train steps, 3 eval steps, 64 samples each)."""
    return write_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module", params=STYLES)
def proxy(
    request: pytest.FixtureRequest,
    nginx: str,
    demo_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Proxy]:
    """gunicorn behind nginx in one style, shared by the module's tests of that style."""
    style = request.param
    with run_proxy(
        style,
        demo_dir,
        tmp_path_factory.mktemp(style),
        nginx=nginx,
        bind_env=BIND_ENV[style],
        relax=RELAX_ENV,
    ) as running:
        yield running


# -- helpers -------------------------------------------------------------------------------------
def get(proxy: Proxy, path: str, **kwargs: Any) -> Response:
    return fetch(proxy.origin, path, **kwargs)


def under_prefix(proxy: Proxy, url: str) -> str | None:
    """The path of `url` when it stays on the proxy's origin under the prefix, else None."""
    if url.startswith(proxy.origin + "/"):
        url = url[len(proxy.origin) :]
    return url if url.startswith(PREFIX + "/") else None


def follow(proxy: Proxy, path: str, **kwargs: Any) -> Response:
    """GET, following redirects, each of which must stay under the prefix."""
    for _ in range(MAX_REDIRECTS):
        resp = get(proxy, path, **kwargs)
        if resp.status not in (301, 302, 303, 307, 308):
            return resp
        location = resp.headers.get("location", "")
        next_path = under_prefix(proxy, location)
        assert next_path is not None, f"{path} redirects outside {PREFIX}/: {location!r}"
        path = next_path
    raise AssertionError(f"more than {MAX_REDIRECTS} redirects from {path}")


def json_of(resp: Response) -> Any:
    assert resp.content_type.startswith("application/json"), (resp.status, resp.body[:300])
    return loads_strict(resp.body)


class UrlCollector(HTMLParser):
    """Every URL a page hands to the browser: links, assets, form targets, step options and the
    `data-*-url` attributes its script fetches."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str]] = []  # (where, url)
        self._select_id: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {name: value or "" for name, value in attrs}
        if tag == "select":
            self._select_id = attr.get("id")
        wanted = {"a": "href", "link": "href", "script": "src", "form": "action"}.get(tag)
        if wanted and wanted in attr and not attr[wanted].startswith("data:"):
            self.urls.append((f"{tag}[{wanted}]", attr[wanted]))
        if tag == "option" and attr.get("value"):
            value = attr["value"]
            # The step selector's options are URLs; sort/order/status/theme options are names.
            if self._select_id == "rv-step" or "/" in value:
                self.urls.append(("option[value]", value))
        for name, value in attr.items():
            if name.startswith("data-") and name.endswith("-url"):
                self.urls.append((f"{tag}[{name}]", value))


def urls_on(body: bytes) -> list[tuple[str, str]]:
    collector = UrlCollector()
    collector.feed(body.decode())
    return collector.urls


def expected_type(path: str) -> tuple[str, ...]:
    if path.startswith(f"{PREFIX}/static/"):
        if path.endswith(".css"):
            return ("text/css",)
        if path.endswith(".js"):
            return ("text/javascript", "application/javascript")
    if path.startswith(f"{PREFIX}/api/"):
        return ("application/json",)
    return ("text/html",)


# -- configuration by environment ----------------------------------------------------------------
def test_gunicorn_runs_from_the_config_file_on_loopback(proxy: Proxy) -> None:
    log = proxy.gunicorn.output()
    assert is_loopback_listener(log, proxy.gunicorn.port), log
    assert "Using worker: rollouts.server_worker.WholeRequestWorker" in log, log
    assert "Control socket" not in log, log  # one per user by default: see gunicorn_conf.py


def test_environment_sets_data_dir_and_cache_size(proxy: Proxy) -> None:
    subdirs = json_of(get(proxy, f"{PREFIX}/api/jsonl/subdirs"))
    assert subdirs == {"data_dir": "rollout_result", "subdirs": ["train", "eval"]}
    stats = json_of(get(proxy, f"{PREFIX}/api/cache/stats"))
    assert (stats["max_bytes"], stats["max_entries"]) == (64 * 1024 * 1024, 5)


def test_gunicorn_sees_the_path_the_proxy_style_sends(proxy: Proxy) -> None:
    """The two styles really differ: gunicorn's access log shows what nginx forwarded."""
    assert get(proxy, f"{PREFIX}/api/jsonl/train/steps?probe=style").status == 200
    sent = "/api/" if proxy.style == "prefix-stripped" else f"{PREFIX}/api/"
    line = f'"GET {sent}jsonl/train/steps?probe=style HTTP/1.0" 200'
    wait_for(proxy.gunicorn.output, f"{line} in gunicorn's log", 5.0, until=lambda out: line in out)


# -- pages and links -----------------------------------------------------------------------------
def test_root_redirects_under_the_prefix_to_the_latest_train_step(proxy: Proxy) -> None:
    resp = get(proxy, f"{PREFIX}/")
    assert resp.status == 302
    assert resp.headers["location"] == PREFIX + LATEST_TRAIN
    page = follow(proxy, resp.headers["location"])
    assert page.status == 200
    assert page.content_type.startswith("text/html")
    assert b'id="rv-sample"' in page.body


def test_prefix_without_trailing_slash_redirects_to_it(proxy: Proxy) -> None:
    resp = get(proxy, PREFIX)
    assert resp.status == 301
    assert under_prefix(proxy, resp.headers["location"]) == f"{PREFIX}/"


@pytest.mark.parametrize("page", [f"{PREFIX}/", f"{PREFIX}/eval/", f"{PREFIX}/train/3/?i=5"])
def test_every_url_on_a_page_carries_the_prefix_and_answers(proxy: Proxy, page: str) -> None:
    resp = follow(proxy, page)
    assert resp.status == 200, resp.body[:300]
    # (a fragment, such as the skip link's "#rv-sample", stays on the page: no request)
    found = [(where, url) for where, url in urls_on(resp.body) if not url.startswith("#")]
    kinds = {where for where, _ in found}
    for kind in ("a[href]", "link[href]", "script[src]", "form[action]", "option[value]"):
        assert kind in kinds, (kind, found)

    outside = [(where, url) for where, url in found if not url.startswith(f"{PREFIX}/")]
    assert not outside, f"URLs without the prefix on {page}: {outside}"

    for url in sorted({url for _, url in found}):
        target = follow(proxy, url)
        assert target.status == 200, (url, target.status, target.body[:300])
        assert target.content_type.startswith(expected_type(url)), (url, target.content_type)


def test_static_files_come_with_their_content_type(proxy: Proxy) -> None:
    page = follow(proxy, f"{PREFIX}/")
    assets = [url for where, url in urls_on(page.body) if where in ("link[href]", "script[src]")]
    assert {Path(url).name for url in assets} >= {"viewer.css", "viewer.js", "sample.js"}
    for url in assets:
        resp = get(proxy, url)
        assert resp.status == 200, url
        assert resp.content_type.startswith(expected_type(url)), (url, resp.content_type)
        assert resp.headers.get("x-content-type-options") == "nosniff", url
        local = REPO_ROOT / "rollouts" / "static" / url.split("/static/", 1)[1]  # pages/, lib/
        assert resp.body == local.read_bytes(), url


def test_json_twin_link_and_its_urls_carry_the_prefix(proxy: Proxy) -> None:
    page = follow(proxy, f"{PREFIX}{LATEST_TRAIN}sample/2/")
    twin = [url for where, url in urls_on(page.body) if url.startswith(f"{PREFIX}/api/view/")]
    assert twin == [f"{PREFIX}/api/view/train/11/sample/2"]
    data = json_of(get(proxy, twin[0]))
    assert (data["bucket"], data["step"], data["position"]) == ("train", "11", 2)
    urls = {name: url for name, url in data["urls"].items() if url is not None}
    neighbours = {"page", "json", "first", "prev", "next", "last"}
    flagged = {"prev_flagged", "next_flagged"}  # the demo flags samples in every train step
    assert neighbours <= set(urls) <= neighbours | flagged and flagged & set(urls)
    for name, url in urls.items():
        assert url.startswith(f"{PREFIX}/"), (name, url)
        assert follow(proxy, url).status == 200, (name, url)


def test_fragment_requests_reach_the_app(proxy: Proxy) -> None:
    """The page's script swaps samples by fetching with `RV-Fragment: 1`; nginx must pass it."""
    resp = get(proxy, f"{PREFIX}{LATEST_TRAIN}sample/1/", headers={"RV-Fragment": "1"})
    assert resp.status == 200
    assert resp.body.lstrip().startswith(b"<main"), resp.body[:100]
    assert "RV-Fragment" in resp.headers.get("vary", "")


# -- JSON API ------------------------------------------------------------------------------------
API_PATHS = [
    "api/jsonl/subdirs",
    "api/jsonl/train/steps",
    "api/jsonl/train/file/11.jsonl/samples?page=2&page_size=5&sort=reward&order=desc",
    "api/jsonl/train/file/11.jsonl/sample/0",
    "api/jsonl/eval/file/8.jsonl/columns?names=reward,status",
    "api/jsonl/train/file/11.jsonl",  # the whole step, streamed: bigger than nginx's buffers
    "api/view/train/11/sample/3",
]


@pytest.mark.parametrize("path", API_PATHS)
def test_api_answers_through_the_proxy_as_it_does_directly(proxy: Proxy, path: str) -> None:
    proxied = get(proxy, f"{PREFIX}/{path}")
    assert proxied.status == 200, proxied.body[:300]
    direct = fetch(f"http://127.0.0.1:{proxy.gunicorn.port}", f"{PREFIX}/{path}")
    assert json_of(proxied) == json_of(direct)


def test_api_errors_keep_their_json_shape_through_the_proxy(proxy: Proxy) -> None:
    resp = get(proxy, f"{PREFIX}/api/jsonl/train/file/99.jsonl/sample/0")
    assert resp.status == 404
    data = json_of(resp)
    assert (data["ok"], data["status"]) == (False, 404)


# -- security ------------------------------------------------------------------------------------
def test_security_headers_survive_the_proxy(proxy: Proxy) -> None:
    page = follow(proxy, f"{PREFIX}/")
    headers = page.headers
    assert headers.get("x-content-type-options") == "nosniff"
    assert headers.get("referrer-policy") == "same-origin"
    assert "default-src 'self'" in headers.get("content-security-policy", "")
    assert headers.get("x-frame-options") == "DENY"
    api = get(proxy, f"{PREFIX}/api/cache/stats")
    assert api.headers.get("x-content-type-options") == "nosniff"
    for resp in (page, api):
        assert not [name for name in resp.headers if name.startswith("access-control-")]


def test_host_not_in_allowed_hosts_is_refused(proxy: Proxy) -> None:
    resp = get(proxy, f"{PREFIX}/api/jsonl/subdirs", headers={"Host": "evil.example"})
    assert resp.status == 400


def test_host_named_in_relax_allowed_hosts_is_served(proxy: Proxy) -> None:
    host = f"{ALLOWED_NAME}:{proxy.nginx.port}"
    page = follow(proxy, f"{PREFIX}/", headers={"Host": host})
    assert page.status == 200


def fill_cache(proxy: Proxy) -> None:
    assert get(proxy, f"{PREFIX}/api/jsonl/train/file/11.jsonl/sample/0").status == 200
    assert json_of(get(proxy, f"{PREFIX}/api/cache/stats"))["entries"] >= 1


def clear_cache(proxy: Proxy, headers: dict[str, str], host: str | None = None) -> Response:
    if host is not None:
        headers = {**headers, "Host": host}
    return get(proxy, f"{PREFIX}/api/cache/clear", method="POST", body=b"", headers=headers)


def test_cache_clear_from_the_proxied_page_succeeds(proxy: Proxy) -> None:
    """What the browser sends from a page served through the proxy."""
    fill_cache(proxy)
    headers = {"Origin": proxy.origin, "Sec-Fetch-Site": "same-origin"}
    resp = clear_cache(proxy, headers)
    assert resp.status == 200, resp.body
    data = json_of(resp)
    assert data["ok"] is True
    assert data["entries"] == 0


def test_cache_clear_under_another_allowed_host_name_succeeds(proxy: Proxy) -> None:
    origin = f"http://{ALLOWED_NAME}:{proxy.nginx.port}"
    headers = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
    resp = clear_cache(proxy, headers, host=f"{ALLOWED_NAME}:{proxy.nginx.port}")
    assert resp.status == 200, resp.body
    assert json_of(resp)["ok"] is True


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
        {"Origin": "http://evil.example"},  # a browser without Fetch Metadata
        {"Sec-Fetch-Site": "same-site"},
    ],
    ids=["cross-site", "origin-only", "same-site"],
)
def test_cache_clear_from_another_origin_is_refused(proxy: Proxy, headers: dict[str, str]) -> None:
    fill_cache(proxy)
    resp = clear_cache(proxy, headers)
    assert resp.status == 403, resp.body
    data = json_of(resp)
    assert (data["ok"], data["status"]) == (False, 403)
    assert json_of(get(proxy, f"{PREFIX}/api/cache/stats"))["entries"] >= 1  # not cleared


def test_cache_clear_from_a_script_succeeds(proxy: Proxy) -> None:
    resp = clear_cache(proxy, {})  # curl -X POST: no Origin, no Sec-Fetch-Site
    assert resp.status == 200, resp.body
    assert json_of(resp)["ok"] is True


def test_without_forwarding_host_a_same_origin_post_is_refused(
    proxy: Proxy, nginx: str, tmp_path: Path
) -> None:
    """Why the documented snippets set `Host $http_host`: without it Django sees gunicorn's own
    address, which no page the browser loaded came from."""
    location = location_block(proxy.style, proxy.gunicorn.port)
    location = location.replace("    proxy_set_header Host $http_host;\n", "")
    bare = start_nginx(nginx, tmp_path / "nginx", location)
    with stopping(bare):
        bare.wait_until_answers(f"{PREFIX}/api/jsonl/subdirs")
        origin = f"http://127.0.0.1:{bare.port}"
        headers = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
        resp = fetch(origin, f"{PREFIX}/api/cache/clear", method="POST", body=b"", headers=headers)
        assert resp.status == 403, resp.body


# -- process hygiene -----------------------------------------------------------------------------
def test_both_servers_are_stopped_even_when_the_test_fails(
    nginx: str, demo_dir: Path, tmp_path: Path
) -> None:
    seen: list[Proxy] = []
    with (
        pytest.raises(RuntimeError, match="the test failed"),
        run_proxy("prefix-stripped", demo_dir, tmp_path, nginx=nginx) as running,
    ):
        seen.append(running)
        assert get(running, f"{PREFIX}/api/jsonl/subdirs").status == 200
        raise RuntimeError("the test failed")
    (running,) = seen
    for process in (running.gunicorn, running.nginx):
        assert process.proc.returncode is not None, process.name
        assert process_group_members(process.pgid) == [], process.name
        assert port_is_closed(process.port), process.name


# -- documentation -------------------------------------------------------------------------------
@pytest.mark.parametrize("style", STYLES)
def test_the_documented_nginx_location_is_the_one_tested(style: str) -> None:
    """LOCATIONS are docs/deployment.md's blocks themselves: each must still be a location
    under the prefix that passes the browser's Host and port on (see `_check_origin`)."""
    block = location_block(style, 8080)
    assert block.startswith("location /absproxy/8080/ {\n")
    assert "proxy_set_header Host $http_host;" in block
    assert "proxy_pass http://127.0.0.1:8080" in block


@pytest.mark.parametrize("name", ["RELAX_WORKERS", "RELAX_THREADS"])
def test_a_bad_number_in_the_environment_stops_gunicorn_with_one_line(name: str) -> None:
    gunicorn = Path(sys.executable).parent / "gunicorn"
    env = child_env({name: "many"})
    args = [str(gunicorn), "-c", GUNICORN_CONFIG, "--check-config", "relax_site.wsgi"]
    result = subprocess.run(args, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f"{name}='many' is not usable: {name} takes a whole number of"
        f" {'processes' if name == 'RELAX_WORKERS' else 'threads'}, at least 1"
        f" (default {1 if name == 'RELAX_WORKERS' else 8})"
    ]
    assert "Traceback" not in result.stdout + result.stderr
