"""In-process LRU cache backend bounded by total bytes as well as entry count.

locmem only bounds the entry count, which says nothing about memory when one entry is a
50 KB page and the next a multi-GB step index. ``ByteLimitedCache`` evicts least-recently
used entries after every write until both ``MAX_ENTRIES`` and ``MAX_BYTES`` hold::

    "OPTIONS": {"MAX_BYTES": 4 * 1024**3, "MAX_ENTRIES": 20}  # the defaults

Sizing, and the ``cache_nbytes`` protocol:

* Ordinary values are pickled, as in locmem, so no caller can mutate what is cached;
  ``get`` returns a fresh copy. Size = ``len(pickled) + len(key)``.
* An instance whose class defines ``cache_nbytes(self) -> int`` is stored *by
  reference*: ``get`` returns the very same object, because pickling a step index
  (arrays of offsets and columns) per request would cost more than reading the step.
  Size = ``cache_nbytes() + len(key)``, measured once per ``set``, before the lock is
  taken so a slow measurement never blocks other threads. An owner that grows the
  object must ``set`` it again for the accounting to follow.

A value larger than all of ``MAX_BYTES`` is refused instead of flushing the whole cache
for nothing: ``set`` stores nothing and drops any older value under the key (a stale
value must not be served), ``add`` returns False; both count ``rejected``. A timeout
<= 0 likewise stores nothing (``set`` acts as a delete, as on memcached).

Like locmem, instances of the same name (``LOCATION``) share one store and its stats:
Django gives each thread its own backend instance. Limits belong to the writing
instance. ``has_key`` counts in hits/misses, like the ``get``-based default it replaces.
``clear()`` keeps the counters (they describe the process); ``reset_stats()`` zeroes them.
"""

from __future__ import annotations

import pickle
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from threading import Lock
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.exceptions import ImproperlyConfigured

from .conf import DEFAULT_CACHE_ENTRIES, DEFAULT_CACHE_MEMORY_MB

DEFAULT_MAX_BYTES = DEFAULT_CACHE_MEMORY_MB * 1024 * 1024
DEFAULT_MAX_ENTRIES = DEFAULT_CACHE_ENTRIES


@dataclass(frozen=True, slots=True)
class _Entry:
    # Frozen so that "same object" means "unchanged": incr relies on it to detect a
    # concurrent write while it computed the new value outside the lock.
    value: Any  # pickled bytes, or the object itself when by_ref
    nbytes: int
    by_ref: bool
    expires: float | None  # None = never


class _Store:
    """Everything instances of one name share; guarded by ``lock``."""

    def __init__(self) -> None:
        self.lock = Lock()
        # Iteration order is recency: first = least recently used.
        self.entries: OrderedDict[str, _Entry] = OrderedDict()
        self.nbytes = 0
        self.hits = self.misses = self.evictions = self.rejected = 0


_stores: dict[str, _Store] = {}


def _positive_int(options: dict[str, Any], name: str, default: int) -> int:
    raw = options.pop(name, default)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if value < 1:
        raise ImproperlyConfigured(f"{name} must be at least 1, got {value}")
    return value


class ByteLimitedCache(BaseCache):
    pickle_protocol = pickle.HIGHEST_PROTOCOL

    def __init__(self, name: str, params: dict[str, Any]) -> None:
        # Copy: CacheHandler passes the settings' own OPTIONS dict, which must survive.
        options = dict(params.get("OPTIONS") or {})
        max_bytes = _positive_int(options, "MAX_BYTES", DEFAULT_MAX_BYTES)
        max_entries = _positive_int(options, "MAX_ENTRIES", DEFAULT_MAX_ENTRIES)
        super().__init__({**params, "OPTIONS": options})
        # Set after super(): BaseCache would otherwise default _max_entries to 300.
        self._max_bytes = max_bytes
        self._max_entries = max_entries
        self._store = _stores.setdefault(name, _Store())
        self._lock = self._store.lock

    # -- helpers; the ones taking no lock expect the caller to hold it -------------

    def get_backend_timeout(self, timeout: Any = DEFAULT_TIMEOUT) -> float | None:
        # Our own clock (not BaseCache's) so expiry is decided by one time source.
        if timeout is DEFAULT_TIMEOUT:
            timeout = self.default_timeout
        return None if timeout is None else time.time() + timeout

    @staticmethod
    def _dead(expires: float | None) -> bool:
        return expires is not None and expires <= time.time()

    def _encode(self, key: str, value: Any, expires: float | None) -> _Entry:
        if callable(getattr(type(value), "cache_nbytes", None)):
            return _Entry(value, max(0, int(value.cache_nbytes())) + len(key), True, expires)
        pickled = pickle.dumps(value, self.pickle_protocol)
        return _Entry(pickled, len(pickled) + len(key), False, expires)

    @staticmethod
    def _decode(entry: _Entry) -> Any:
        # Only bytes this process pickled itself are ever unpickled.
        return entry.value if entry.by_ref else pickle.loads(entry.value)  # noqa: S301

    def _discard(self, key: str) -> bool:
        entry = self._store.entries.pop(key, None)
        if entry is None:
            return False
        self._store.nbytes -= entry.nbytes
        return True

    def _live(self, key: str) -> _Entry | None:
        entry = self._store.entries.get(key)
        if entry is not None and self._dead(entry.expires):
            self._discard(key)
            return None
        return entry

    def _put(self, key: str, entry: _Entry) -> None:
        store = self._store
        self._discard(key)
        store.entries[key] = entry
        store.nbytes += entry.nbytes
        if len(store.entries) <= self._max_entries and store.nbytes <= self._max_bytes:
            return
        # Expired entries go first: dropping them loses nothing, evicting live ones does.
        for stale in [k for k, e in store.entries.items() if self._dead(e.expires)]:
            self._discard(stale)
        # The new entry is last and fits the budget alone, so it is never evicted.
        while len(store.entries) > self._max_entries or store.nbytes > self._max_bytes:
            _, victim = store.entries.popitem(last=False)
            store.nbytes -= victim.nbytes
            store.evictions += 1

    def _commit(self, key: str, entry: _Entry) -> bool:
        if entry.nbytes > self._max_bytes:
            self._discard(key)  # whatever was there is stale now; never serve it
            self._store.rejected += 1
            return False
        self._put(key, entry)
        return True

    # -- BaseCache API ---------------------------------------------------------------

    def add(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        key = self.make_and_validate_key(key, version=version)
        expires = self.get_backend_timeout(timeout)
        entry = self._encode(key, value, expires)
        with self._lock:
            if self._live(key) is not None:
                return False
            # A timeout <= 0 "adds" a value that has expired already, as in Django.
            return self._dead(expires) or self._commit(key, entry)

    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            entry = self._live(key)
            if entry is None:
                self._store.misses += 1
                return default
            self._store.entries.move_to_end(key)
            self._store.hits += 1
        return self._decode(entry)

    def set(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        key = self.make_and_validate_key(key, version=version)
        expires = self.get_backend_timeout(timeout)
        if self._dead(expires):  # timeout <= 0: behaves as a delete, like memcached
            with self._lock:
                self._discard(key)
            return
        entry = self._encode(key, value, expires)
        with self._lock:
            self._commit(key, entry)

    def touch(self, key: str, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        expires = self.get_backend_timeout(timeout)
        with self._lock:
            entry = self._live(key)
            if entry is None:
                return False
            if self._dead(expires):
                self._discard(key)
            else:
                self._store.entries[key] = replace(entry, expires=expires)
                self._store.entries.move_to_end(key)
            return True

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> Any:
        key = self.make_and_validate_key(key, version=version)
        while True:
            with self._lock:
                entry = self._live(key)
                if entry is None:
                    raise ValueError(f"Key '{key}' not found")
            # Decode/encode outside the lock, then commit only if nobody wrote meanwhile.
            new_value = self._decode(entry) + delta
            fresh = self._encode(key, new_value, entry.expires)
            with self._lock:
                if self._store.entries.get(key) is entry:
                    self._commit(key, fresh)
                    return new_value

    def has_key(self, key: str, version: int | None = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            found = self._live(key) is not None
            self._store.hits += found
            self._store.misses += not found
            return found

    def delete(self, key: str, version: int | None = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            return self._discard(key)

    def clear(self) -> None:
        with self._lock:
            self._store.entries.clear()
            self._store.nbytes = 0

    # -- introspection ---------------------------------------------------------------

    def stats(self) -> dict[str, int]:
        store = self._store
        with self._lock:
            return {
                "entries": len(store.entries),
                "bytes": store.nbytes,
                "max_bytes": self._max_bytes,
                "max_entries": self._max_entries,
                "hits": store.hits,
                "misses": store.misses,
                "evictions": store.evictions,
                "rejected": store.rejected,
            }

    def reset_stats(self) -> None:
        with self._lock:
            store = self._store
            store.hits = store.misses = store.evictions = store.rejected = 0
