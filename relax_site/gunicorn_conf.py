"""gunicorn settings for the standalone viewer behind a reverse proxy:

    RELAX_DATA_DIR=/path/to/save/rollout_result RELAX_BASE_PATH=/absproxy/8080 \\
        gunicorn relax_site.wsgi -c relax_site/gunicorn.conf.py

The app itself is configured by the RELAX_* variables of relax_site/settings.py; this file only
decides how gunicorn serves it, from these variables (all optional):

RELAX_BIND            address to bind: HOST:PORT or unix:PATH (default 127.0.0.1:$PORT)
PORT                  port on loopback when RELAX_BIND is unset (default 8080)
RELAX_WORKERS         processes (default 1: each has its own index cache)
RELAX_THREADS         threads per process (default 8)
FORWARDED_ALLOW_IPS   proxies trusted for X-Forwarded-Proto (default 127.0.0.1,::1)
"""

from __future__ import annotations

import os

from rollouts.conf import parse_positive_int
from rollouts.server import SERVING

# gunicorn alone binds 0.0.0.0:$PORT when PORT is set, which would expose every rollout to the
# network. The proxy runs on this machine, so loopback is all the viewer needs.
bind = [os.environ.get("RELAX_BIND") or f"127.0.0.1:{os.environ.get('PORT') or 8080}"]

# As `manage.py visualize` serves it: gthread workers, the timeouts, the process name and no
# per-user control socket (rollouts/server.py says why for each).
globals().update(SERVING)


def _env_int(name: str, default: int) -> int:
    """A positive integer from the environment; a bad value stops gunicorn with one line."""
    raw = os.environ.get(name) or str(default)
    value = parse_positive_int(raw)
    if value is None:
        raise SystemExit(f"{name} must be a positive integer, got {raw!r}")
    return value


workers = _env_int("RELAX_WORKERS", 1)
threads = _env_int("RELAX_THREADS", 8)

# Only a proxy on this machine may say the browser used HTTPS (X-Forwarded-Proto); gunicorn
# then reports the request as secure. Anyone else sending the header is ignored.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS") or "127.0.0.1,::1"

# Logs to stdout/stderr for journald, docker or whatever runs gunicorn. Behind a proxy every
# peer is 127.0.0.1, so the access log names the client the proxy forwarded for.
accesslog = "-"
errorlog = "-"
access_log_format = '%({x-forwarded-for}i)s %(h)s %(t)s "%(r)s" %(s)s %(b)s %(M)sms'
