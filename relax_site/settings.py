"""The standalone viewer. Every deployment knob comes from the environment, so gunicorn can run
`relax_site.wsgi` unchanged; `manage.py visualize` sets the same knobs from its flags.

RELAX_DATA_DIR          the data directory (a run's rollout_result/, or a folder of step files)
RELAX_BASE_PATH         URL prefix when served behind a proxy, e.g. /absproxy/8080
RELAX_ALLOWED_HOSTS     comma-separated host names (default: loopback names only)
RELAX_CACHE_MEMORY_MB   byte budget of the index cache in MB (default 4096)
RELAX_CACHE_ENTRIES     most step indexes kept at once (default 20)
RELAX_MASK_STR          regex of pad tokens collapsed when shown
RELAX_DISK_CACHE        directory of the per-step disk cache ("off": none; default: user cache dir)
RELAX_POLL_MS           milliseconds between an open page's polls for new steps (default 3000)
RELAX_INDEX_PROCESSES   processes that decode a bucket's steps for its trends (default: CPUs, <= 4)
RELAX_SECRET_KEY        only needed for stable CSRF/signing across restarts (random otherwise)
RELAX_DEBUG             "1" for Django's debug pages (never in production)
"""

from __future__ import annotations

import os
import secrets
import warnings
from pathlib import Path

from rollouts.conf import DEFAULT_MASK_STR, normalize_base_path, parse_positive_int

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_int(name: str, default: int) -> int:
    """A positive integer from the environment; unset or unusable: `default` (with a warning
    on stderr, never an exception: a settings module that raises is a traceback at start-up)."""
    raw = os.environ.get(name, "").strip()
    value = parse_positive_int(raw) if raw else default
    if value is None:
        warnings.warn(f"{name}={raw!r} is not a positive integer; using {default}", stacklevel=1)
        return default
    return value


SECRET_KEY = os.environ.get("RELAX_SECRET_KEY") or secrets.token_urlsafe(50)
DEBUG = os.environ.get("RELAX_DEBUG", "") == "1"
ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("RELAX_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]").split(",")
    if h.strip()
]

INSTALLED_APPS = [
    "django.contrib.staticfiles",
    "rollouts",
]

MIDDLEWARE = [
    "relax_site.middleware.BasePathMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "relax_site.urls"
WSGI_APPLICATION = "relax_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

# No database: the viewer reads files and keeps its state in the URL.
DATABASES: dict = {}

CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "rollouts": {
        "BACKEND": "rollouts.cache.ByteLimitedCache",
        "OPTIONS": {
            "MAX_BYTES": _env_int("RELAX_CACHE_MEMORY_MB", 4096) * 1024 * 1024,
            "MAX_ENTRIES": _env_int("RELAX_CACHE_ENTRIES", 20),
        },
    },
}

# Behind a proxy prefix every generated URL carries it; an absolute STATIC_URL keeps the prefix
# for whitenoise too. BasePathMiddleware accepts requests whether or not the proxy strips it.
BASE_PATH = normalize_base_path(os.environ.get("RELAX_BASE_PATH", ""))
FORCE_SCRIPT_NAME = BASE_PATH or None
STATIC_URL = f"{BASE_PATH}/static/"
# Only for deployments that run collectstatic; whitenoise warns about a missing directory.
STATIC_ROOT = os.environ.get("RELAX_STATIC_ROOT") or None
# The standalone tool serves static files straight from the apps: no collectstatic step.
WHITENOISE_USE_FINDERS = True
# whitenoise sends `Access-Control-Allow-Origin: *` with static files by default; nothing of
# ours is meant for other origins, so no wildcard CORS anywhere.
WHITENOISE_ALLOW_ALL_ORIGINS = False
WHITENOISE_AUTOREFRESH = DEBUG

ROLLOUTS_DATA_DIR = os.environ.get("RELAX_DATA_DIR") or None
ROLLOUTS_MASK_STR = os.environ.get("RELAX_MASK_STR", DEFAULT_MASK_STR)
# Unset: the user's cache directory; "off" (or ""): no disk cache.
_disk_cache = os.environ.get("RELAX_DISK_CACHE")
ROLLOUTS_DISK_CACHE = None if _disk_cache is None else ("" if _disk_cache == "off" else _disk_cache)

# Read (and checked) by rollouts.conf: a bad value warns at start-up and uses the default.
ROLLOUTS_POLL_MS = os.environ.get("RELAX_POLL_MS") or None
ROLLOUTS_INDEX_PROCESSES = os.environ.get("RELAX_INDEX_PROCESSES") or None

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
USE_TZ = True
TIME_ZONE = "UTC"  # log lines of the worker and of gunicorn agree
LANGUAGE_CODE = "en-us"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"rollouts": {"handlers": ["console"], "level": "INFO"}},
}
