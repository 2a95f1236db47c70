"""HTTP in, store calls, HTTP out: the app's pages and their JSON twins, and the JSON API.

`decorators` wraps every view (method, run, access, errors); `header` is the navigation every
page of a bucket shows; the other modules are one family of pages each. The face is the URL
patterns (`routes`), which `rollouts.urls` serves.
"""

from .routes import urlpatterns

__all__ = ["urlpatterns"]
