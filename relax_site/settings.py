"""The standalone viewer. Every deployment knob comes from the environment, so gunicorn can run
`relax_site.wsgi` unchanged; `manage.py visualize` sets the same knobs from its flags.

RELAX_DATA_DIR          the data directory (a run's rollout_result/, or a folder of step files)
RELAX_DATA_DIRS         several runs, NAME=PATH or PATH separated by ':' (a run picker)
RELAX_RUNS_DIR          a folder of runs, listed while serving (a run picker; runs come and go)
RELAX_BASE_PATH         URL prefix when served behind a proxy, e.g. /absproxy/8080
RELAX_ALLOWED_HOSTS     comma-separated host names, besides the loopback names (always allowed)
RELAX_CACHE_MEMORY_MB   byte budget of the index cache in MB (default 4096)
RELAX_CACHE_ENTRIES     most step indexes kept at once (default 20)
RELAX_MASK_STR          regex of pad tokens collapsed when shown
RELAX_DISK_CACHE        directory of the per-step disk cache ("off": none; default: user cache dir)
RELAX_POLL_MS           milliseconds between an open page's polls for new steps (default 3000)
RELAX_INDEX_PROCESSES   processes that decode a bucket's steps for its trends (default: CPUs, <= 4)
RELAX_TOKENIZER         a local tokenizer.json: token ids shown as text on the sample page
RELAX_TENSORBOARD       directory of the run's TensorBoard event files ("off": none; default:
                        tensorboard_log/ in the data directory or beside its rollout_result/)
RELAX_SECRET_KEY        only needed for stable CSRF/signing across restarts (random otherwise)
RELAX_DEBUG             "1" for Django's debug pages (never in production)

Each is checked when this module is imported (`relax_site.environment`): a value the viewer
cannot use stops it with one line naming the variable and what it takes (exit status 3, which
gunicorn takes as "the worker cannot boot" rather than restarting it forever).
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

from relax_site.environment import BadVariable, read_environment
from rollouts.conf import DEFAULT_MASK_STR

BASE_DIR = Path(__file__).resolve().parent.parent

try:
    ENV = read_environment()
except BadVariable as exc:
    sys.stderr.write(f"relax-viewer: {exc}\n")
    sys.stderr.flush()
    raise SystemExit(3) from None

SECRET_KEY = ENV.secret_key or secrets.token_urlsafe(50)
DEBUG = ENV.debug
# Host names are checked by rollouts.web.HostCheckMiddleware (which logs why it refuses
# one, and also takes IP literals when `visualize --host 0.0.0.0` asks for it), not by Django.
ALLOWED_HOSTS = ["*"]
RELAX_HOSTS = list(ENV.allowed_hosts)
RELAX_ACCEPT_IP_HOSTS = False

INSTALLED_APPS = [
    "django.contrib.staticfiles",
    "rollouts",
]

MIDDLEWARE = [
    # First: a HEAD gets the GET's headers and no body, whoever answered (the host check too).
    "relax_site.middleware.HeadMiddleware",
    "rollouts.web.HostCheckMiddleware",
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
            "MAX_BYTES": ENV.cache_memory_mb * 1024 * 1024,
            "MAX_ENTRIES": ENV.cache_entries,
        },
    },
}

# Behind a proxy prefix every generated URL carries it; an absolute STATIC_URL keeps the prefix
# for whitenoise too. BasePathMiddleware accepts requests whether or not the proxy strips it.
BASE_PATH = ENV.base_path
FORCE_SCRIPT_NAME = BASE_PATH or None
STATIC_URL = f"{BASE_PATH}/static/"
# Only for deployments that run collectstatic; whitenoise warns about a missing directory.
STATIC_ROOT = ENV.static_root
# The standalone tool serves static files straight from the apps: no collectstatic step.
WHITENOISE_USE_FINDERS = True
# whitenoise sends `Access-Control-Allow-Origin: *` with static files by default; nothing of
# ours is meant for other origins, so no wildcard CORS anywhere.
WHITENOISE_ALLOW_ALL_ORIGINS = False
WHITENOISE_AUTOREFRESH = DEBUG

ROLLOUTS_DATA_DIR = ENV.data_dir
ROLLOUTS_DATA_DIRS = ENV.data_dirs
ROLLOUTS_RUNS_DIR = ENV.runs_dir
ROLLOUTS_MASK_STR = DEFAULT_MASK_STR if ENV.mask_str is None else ENV.mask_str
# Unset: the user's cache directory; "off" (or ""): no disk cache.
ROLLOUTS_DISK_CACHE = ENV.disk_cache
ROLLOUTS_POLL_MS = ENV.poll_ms
ROLLOUTS_INDEX_PROCESSES = ENV.index_processes
ROLLOUTS_TOKENIZER = ENV.tokenizer
# Unset: found in or beside the data directory; "off" (or ""): no TensorBoard scalars.
ROLLOUTS_TENSORBOARD = ENV.tensorboard

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
USE_TZ = True
TIME_ZONE = "UTC"  # log lines of the worker and of gunicorn agree
LANGUAGE_CODE = "en-us"
# Nothing is translated. With translation on, every reverse() and every number a template shows
# asks for the active language through one lock shared by all threads (asgiref's Local): 39 % of
# a worker's time under 50 concurrent requests (py-spy, bench/bench_compare.py --load).
USE_I18N = False

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "rollouts": {"handlers": ["console"], "level": "INFO"},
        "relax_site": {"handlers": ["console"], "level": "INFO"},
    },
}
