"""WSGI entry point: `gunicorn relax_site.wsgi`, configured by RELAX_* environment variables."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

from rollouts.server import freeze_startup_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "relax_site.settings")

application = get_wsgi_application()

# Each gunicorn worker imports this module: what it holds now is never garbage (see there).
freeze_startup_objects()
