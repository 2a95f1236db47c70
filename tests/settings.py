"""DB-less settings for the test suite: the app alone, mounted under a prefix by tests/urls.py."""

from __future__ import annotations

import tempfile
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "tests-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.staticfiles",
    "rollouts",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
]
ROOT_URLCONF = "tests.urls"
DATABASES: dict = {}
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"},
    "rollouts": {
        "BACKEND": "rollouts.cache.ByteLimitedCache",
        "OPTIONS": {"MAX_BYTES": 64 * 1024 * 1024, "MAX_ENTRIES": 50},
    },
}
STATIC_URL = "/static/"
USE_TZ = True

# Each test points the app at its own tmp_path through the `settings` fixture.
ROLLOUTS_DATA_DIR = None

# Never the user's real cache directory: one of our own per test session.
ROLLOUTS_DISK_CACHE = tempfile.mkdtemp(prefix="rollouts-disk-cache-")
