"""Where a job runs: `local` (a process group on this machine, the default) or `ray` (a Ray job
on a cluster, through Ray's own job API). The choice comes from the spec (`[job] backend`,
`[ray]`), and a command line flag or a setting may override it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from ..install import install_hint
from .spec import UNSAFE_CHARS, Spec, SpecError

BACKENDS = ("local", "ray")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
INSTALL_RAY = f"the ray backend needs Ray's job client: {install_hint('ray')}"


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


def check_backend(value: Any, where: str = "[job] backend") -> str:
    if value not in BACKENDS:
        raise SpecError(f"{where} must be one of {', '.join(BACKENDS)} (got {value!r})")
    return str(value)


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


def shown_address(address: str) -> str:
    """The address without any user name or password in it."""
    parts = urlsplit(address)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")


def ray_available() -> bool:
    try:
        from ray.job_submission import JobSubmissionClient  # noqa: F401
    except ImportError:
        return False
    return True
