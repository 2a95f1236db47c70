"""gunicorn settings for the standalone viewer behind a reverse proxy, importable from the installed
package (no checkout needed):

    RELAX_DATA_DIR=/path/to/save/rollout_result RELAX_BASE_PATH=/absproxy/8080 \\
        gunicorn -c python:relax_site.gunicorn_conf relax_site.wsgi

The app itself is configured by the RELAX_* variables of relax_site/settings.py; this module
only decides how gunicorn serves it, from these variables (all optional):

RELAX_BIND            address to bind: HOST:PORT or unix:PATH (default 127.0.0.1:$PORT)
PORT                  port on loopback when RELAX_BIND is unset (default 8080)
RELAX_WORKERS         processes (default 1: each has its own index cache)
RELAX_THREADS         threads per process (default 8)
FORWARDED_ALLOW_IPS   proxies trusted for X-Forwarded-Proto (default 127.0.0.1,::1)

Every RELAX_* variable (the app's too) is checked here, in gunicorn's own process, so a bad one
stops gunicorn with one line before any worker starts.
"""

from __future__ import annotations

import os

from relax_site.environment import BadVariable, read_environment
from rollouts.server import SERVING

try:
    _env = read_environment()
except BadVariable as exc:
    raise SystemExit(str(exc)) from None

_port = os.environ.get("PORT") or "8080"
if not _port.isdigit() or not 0 < int(_port) < 65536:
    raise SystemExit(f"PORT={_port!r} is not usable: PORT takes a TCP port, 1-65535")

# gunicorn alone binds 0.0.0.0:$PORT when PORT is set, which would expose every rollout to the
# network. The proxy runs on this machine, so loopback is all the viewer needs.
bind = [_env.bind or f"127.0.0.1:{_port}"]

# As `manage.py visualize` serves it: threaded workers whose threads get only whole requests
# (slow or idle clients hold none), the timeouts and connection limits, the process name and no
# per-user control socket (rollouts/server.py says why for each).
globals().update(SERVING)

workers = _env.workers
threads = _env.threads

# Only a proxy on this machine may say the browser used HTTPS (X-Forwarded-Proto); gunicorn
# then reports the request as secure. Anyone else sending the header is ignored.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS") or "127.0.0.1,::1"

# Logs to stdout/stderr for journald, docker or whatever runs gunicorn. Behind a proxy every
# peer is 127.0.0.1, so the access log names the client the proxy forwarded for.
accesslog = "-"
errorlog = "-"
access_log_format = '%({x-forwarded-for}i)s %(h)s %(t)s "%(r)s" %(s)s %(b)s %(M)sms'
