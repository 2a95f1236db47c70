"""An example host portal that mounts the viewer, as a real site would: auth, sessions, SQLite.

The end-to-end tests in tests/e2e/test_portal.py run it under gunicorn. Only what a host must add
for the viewer is marked "rollouts:"; everything else is an ordinary small Django site.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

SECRET_KEY = "portal-example-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.staticfiles",
    "rollouts",  # rollouts: the app
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "tests.portal.urls"
WSGI_APPLICATION = "tests.portal.wsgi.application"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        # The tests give each run its own database; never a file inside the checkout.
        "NAME": os.environ.get("PORTAL_DB", str(Path(tempfile.gettempdir()) / "portal.sqlite3")),
    }
}
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ]
        },
    }
]
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # rollouts: step indexes live in a byte-limited cache of their own.
    "rollouts": {
        "BACKEND": "rollouts.cache.ByteLimitedCache",
        "OPTIONS": {"MAX_BYTES": 256 * 1024 * 1024, "MAX_ENTRIES": 10},
    },
}
STATIC_URL = "/static/"
WHITENOISE_USE_FINDERS = True
WHITENOISE_ALLOW_ALL_ORIGINS = False  # no wildcard CORS on static files
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# rollouts: what to show, and who may see it.
ROLLOUTS_DATA_DIR = os.environ.get("PORTAL_ROLLOUTS_DIR")
ROLLOUTS_ACCESS = "rollouts.access.require_login"
