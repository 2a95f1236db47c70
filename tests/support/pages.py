"""Pages through Django's test client, read the way a browser reads them (tests/urls.py mounts
the app under PREFIX, as a host portal would)."""

from __future__ import annotations

from html.parser import HTMLParser

PREFIX = "/portal/rollouts"


class Page(HTMLParser):
    """Ids, data attributes and every URL a page carries, read the way a browser would."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.html = html
        # Attribute values by element id; a bare attribute (`hidden`, `defer`) has "".
        self.by_id: dict[str, dict[str, str]] = {}
        self.text_of: dict[str, str] = {}
        self.urls: list[str] = []
        self.scripts: list[dict[str, str]] = []
        self._open_ids: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {name: value or "" for name, value in attrs}
        if "id" in attr:
            self.by_id[attr["id"]] = attr
            self._open_ids.append(attr["id"])
            self.text_of[attr["id"]] = ""
        for name in ("href", "src", "action"):
            if attr.get(name):
                self.urls.append(attr[name])
        if tag == "option" and attr.get("value", "").startswith("/"):
            self.urls.append(attr["value"])
        if tag == "script":
            self.scripts.append(attr)

    def handle_data(self, data: str) -> None:
        for open_id in self._open_ids:
            self.text_of[open_id] += data

    def handle_endtag(self, tag: str) -> None:
        if tag in ("span", "a") and self._open_ids:
            self._open_ids.pop()


def page(client, path: str, status: int = 200, **headers: str) -> Page:
    response = client.get(PREFIX + path, headers=headers)
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("text/html")
    return Page(response.content.decode())
