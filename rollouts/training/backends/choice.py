"""Which backend a job runs on, and the Ray address: from the spec (`[job] backend`, `[ray]`),
which a command line flag or a setting may override; checked."""

from __future__ import annotations

import dataclasses
import re
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from ..spec import UNSAFE_CHARS, Spec, SpecError
from .registry import check_backend

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")


def check_address(address: Any, where: str = "the Ray address") -> str:
    """A Ray dashboard address (`http://HOST:8265`), as Ray's JobSubmissionClient takes it."""
    if not isinstance(address, str) or UNSAFE_CHARS.search(address):
        raise SpecError(f"{where} must be an http:// or https:// address")
    try:
        parts = urlsplit(address.strip())
        port = parts.port
    except ValueError:
        raise SpecError(f"{where} {address!r} is not a valid address") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SpecError(f"{where} must look like http://HOST:8265 (got {address!r})")
    if parts.path not in ("", "/") or parts.query or parts.fragment or port == 0:
        raise SpecError(f"{where} must be scheme, host and port only (got {address!r})")
    return address.strip().rstrip("/")


def ray_options(table: Any) -> dict[str, Any]:
    """The spec's [ray] table, checked: address, working_dir, env."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise SpecError("[ray] must be a table")
    unknown = sorted(set(table) - {"address", "working_dir", "env"})
    if unknown:
        raise SpecError(f"[ray] has unknown keys {unknown} (address, working_dir, env)")
    options: dict[str, Any] = {}
    if "address" in table:
        options["address"] = check_address(table["address"], "[ray] address")
    if "working_dir" in table:
        value = table["working_dir"]
        if not isinstance(value, str) or not PurePosixPath(value).is_absolute():
            raise SpecError("[ray] working_dir must be an absolute path (as the cluster sees it)")
        if UNSAFE_CHARS.search(value):
            raise SpecError("[ray] working_dir may not contain control characters")
        options["working_dir"] = value
    env = table.get("env", {})
    if not isinstance(env, dict):
        raise SpecError('[ray] env must be a table of NAME = "value"')
    for name, value in env.items():
        if not ENV_NAME.match(name) or not isinstance(value, str) or UNSAFE_CHARS.search(value):
            raise SpecError(f"[ray] env {name}: names are letters, digits and _; values text")
    options["env"] = dict(env)
    return options


def with_backend(spec: Spec, backend: str | None = None, address: str | None = None) -> Spec:
    """The spec with a flag's or a setting's backend and Ray address put over its own."""
    kind = check_backend(backend, "the backend") if backend else spec.backend
    ray = dict(spec.ray)
    if address:
        ray["address"] = check_address(address)
    if kind == "ray" and not ray.get("address"):
        raise SpecError(
            "the ray backend needs the cluster's address: --ray-address http://HOST:8265"
        )
    return dataclasses.replace(spec, backend=kind, ray=ray)
