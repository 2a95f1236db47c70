"""The reader's theme as the server renders it: `theme_choice` reads the `rv-theme` cookie
(theme-select.js writes it), so `<html>` carries the choice before the first paint and no script
has to run first. Anything but a known choice is "system", which the stylesheet resolves with
`prefers-color-scheme`."""

from __future__ import annotations

from django import template

register = template.Library()

THEME_COOKIE = "rv-theme"
THEME_CHOICES = ("system", "light", "dark")


@register.simple_tag(takes_context=True)
def theme_choice(context: template.Context) -> str:
    """The reader's choice: light, dark, or system (the default, and a page without a request)."""
    request = context.get("request")
    cookies = getattr(request, "COOKIES", None) or {}
    choice = cookies.get(THEME_COOKIE)
    return choice if choice in THEME_CHOICES else "system"
