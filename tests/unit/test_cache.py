"""ByteLimitedCache: the Django cache API, byte/entry bounds, LRU order, by-reference values."""

from __future__ import annotations

import pickle
import random
import sys
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import caches
from django.core.cache.backends.base import CacheKeyWarning
from django.core.exceptions import ImproperlyConfigured

from rollouts import cache as cache_mod
from rollouts.cache import ByteLimitedCache

START = 1_000_000.0


class FakeClock:
    """Stands in for the `time` module inside rollouts.cache: expiry without sleeping."""

    def __init__(self) -> None:
        self.now = START

    def time(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Blob:
    """A by-reference value whose reported size the test controls exactly."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.sized = 0

    def cache_nbytes(self) -> int:
        self.sized += 1
        return self.n


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(cache_mod, "time", fake)
    return fake


@pytest.fixture
def make_cache() -> Iterator[Callable[..., ByteLimitedCache]]:
    names: list[str] = []

    def make(name: str | None = None, **options: Any) -> ByteLimitedCache:
        params = options.pop("params", {})
        name = name or f"test-{uuid.uuid4().hex}"
        names.append(name)
        return ByteLimitedCache(name, {**params, "OPTIONS": options})

    yield make
    for name in names:
        cache_mod._stores.pop(name, None)


@pytest.fixture
def rollouts_cache() -> Iterator[ByteLimitedCache]:
    cache = caches["rollouts"]
    assert isinstance(cache, ByteLimitedCache)
    cache.clear()
    cache.reset_stats()
    yield cache
    cache.clear()
    cache.reset_stats()


def pickled_size(cache: ByteLimitedCache, key: str, value: Any, version: int | None = None) -> int:
    return len(pickle.dumps(value, pickle.HIGHEST_PROTOCOL)) + len(cache.make_key(key, version))


def blob_size(cache: ByteLimitedCache, key: str, blob: Blob) -> int:
    return blob.n + len(cache.make_key(key))


def stored_keys(cache: ByteLimitedCache) -> list[str]:
    """Raw keys in LRU order (oldest first), without touching recency or counters."""
    with cache._lock:
        return list(cache._store.entries)


# -- configuration ------------------------------------------------------------------


def test_defaults_are_4_gib_and_20_entries(make_cache):
    stats = make_cache().stats()
    assert stats["max_bytes"] == 4096 * 1024 * 1024
    assert stats["max_entries"] == 20


def test_options_limits_win_over_basecache_max_entries_and_cull_frequency(make_cache):
    # locmem semantics with CULL_FREQUENCY=0 would empty the whole cache when full.
    cache = make_cache(MAX_ENTRIES=3, MAX_BYTES=10_000, CULL_FREQUENCY=0)
    assert cache._max_entries == 3
    for i in range(5):
        cache.set(f"k{i}", i)
    assert stored_keys(cache) == [":1:k2", ":1:k3", ":1:k4"]
    assert cache.stats()["max_bytes"] == 10_000


def test_settings_options_dict_is_not_mutated(make_cache):
    options = {"MAX_BYTES": 1234, "MAX_ENTRIES": 7}
    ByteLimitedCache(f"test-{uuid.uuid4().hex}", {"OPTIONS": options})
    assert options == {"MAX_BYTES": 1234, "MAX_ENTRIES": 7}


@pytest.mark.parametrize("option", ["MAX_BYTES", "MAX_ENTRIES"])
@pytest.mark.parametrize("bad", [0, -5, "lots", None])
def test_invalid_limits_raise_improperly_configured(make_cache, option, bad):
    with pytest.raises(ImproperlyConfigured, match=option):
        make_cache(**{option: bad})


def test_string_limits_are_converted_to_int(make_cache):
    stats = make_cache(MAX_BYTES="2048", MAX_ENTRIES="4").stats()
    assert (stats["max_bytes"], stats["max_entries"]) == (2048, 4)


# -- basic API ----------------------------------------------------------------------


def test_get_returns_fresh_copy_of_pickled_value(make_cache):
    cache = make_cache()
    original = {"rows": [1, 2, 3]}
    cache.set("k", original)
    first = cache.get("k")
    assert first == original
    assert first is not original
    first["rows"].append(4)
    assert cache.get("k") == {"rows": [1, 2, 3]}


def test_get_missing_returns_default(make_cache):
    cache = make_cache()
    assert cache.get("nope") is None
    assert cache.get("nope", "fallback") == "fallback"


def test_set_overwrites_and_replaces_byte_accounting(make_cache):
    cache = make_cache()
    cache.set("k", "a" * 10)
    cache.set("k", "b" * 300)
    assert cache.get("k") == "b" * 300
    assert cache.stats()["entries"] == 1
    assert cache.stats()["bytes"] == pickled_size(cache, "k", "b" * 300)


def test_add_stores_only_when_key_absent(make_cache):
    cache = make_cache()
    assert cache.add("k", "first") is True
    assert cache.add("k", "second") is False
    assert cache.get("k") == "first"


def test_delete_reports_existence_and_releases_bytes(make_cache):
    cache = make_cache()
    cache.set("a", "x" * 50)
    cache.set("b", "y" * 20)
    assert cache.delete("a") is True
    assert cache.delete("a") is False
    assert cache.get("a") is None
    assert cache.stats()["bytes"] == pickled_size(cache, "b", "y" * 20)


def test_get_many_set_many_delete_many(make_cache):
    cache = make_cache()
    assert cache.set_many({"a": 1, "b": [2], "c": "3"}) == []
    assert cache.get_many(["a", "b", "c", "missing"]) == {"a": 1, "b": [2], "c": "3"}
    cache.delete_many(["a", "c"])
    assert cache.get_many(["a", "b", "c"]) == {"b": [2]}
    assert cache.stats()["bytes"] == pickled_size(cache, "b", [2])


def test_get_or_set_stores_default_once(make_cache):
    cache = make_cache()
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return 42

    assert cache.get_or_set("k", compute) == 42
    assert cache.get_or_set("k", compute) == 42
    assert calls == [1]
    assert cache.get_or_set("plain", "value") == "value"
    assert cache.get("plain") == "value"


def test_has_key_and_in_operator(make_cache):
    cache = make_cache()
    cache.set("k", 0)  # falsy value still counts as present
    assert cache.has_key("k") is True
    assert "k" in cache
    assert cache.has_key("other") is False
    assert "other" not in cache


def test_incr_and_decr_update_value_and_size(make_cache):
    cache = make_cache()
    cache.set("n", 10)
    assert cache.incr("n") == 11
    assert cache.incr("n", 5) == 16
    assert cache.decr("n", 20) == -4
    assert cache.get("n") == -4
    big = 10**30
    assert cache.incr("n", big) == big - 4
    assert cache.stats()["bytes"] == pickled_size(cache, "n", big - 4)


@pytest.mark.parametrize("op", ["incr", "decr"])
def test_incr_decr_on_missing_key_raise_value_error(make_cache, op):
    cache = make_cache()
    with pytest.raises(ValueError, match="not found"):
        getattr(cache, op)("missing")
    assert cache.stats()["entries"] == 0


def test_incr_on_expired_key_raises_value_error(make_cache, clock):
    cache = make_cache()
    cache.set("n", 1, timeout=5)
    clock.advance(5)
    with pytest.raises(ValueError):
        cache.incr("n")


# -- timeouts -----------------------------------------------------------------------


def test_default_timeout_comes_from_params(make_cache, clock):
    cache = make_cache(params={"TIMEOUT": 30})
    cache.set("k", "v")
    clock.advance(29.9)
    assert cache.get("k") == "v"
    clock.advance(0.1)
    assert cache.get("k") is None


def test_explicit_timeout_expires_entry_and_releases_bytes(make_cache, clock):
    cache = make_cache()
    cache.set("short", "v", timeout=10)
    cache.set("long", "w", timeout=100)
    clock.advance(10)
    assert cache.get("short") is None
    assert cache.get("long") == "w"
    assert cache.stats()["entries"] == 1
    assert cache.stats()["bytes"] == pickled_size(cache, "long", "w")


def test_timeout_none_never_expires(make_cache, clock):
    cache = make_cache(params={"TIMEOUT": 1})
    cache.set("k", "v", timeout=None)
    clock.advance(10**9)
    assert cache.get("k") == "v"


@pytest.mark.parametrize("timeout", [0, -1])
def test_non_positive_timeout_stores_nothing_and_drops_old_value(make_cache, clock, timeout):
    cache = make_cache()
    cache.set("k", "old")
    cache.set("k", "new", timeout=timeout)
    assert cache.get("k") is None
    assert cache.stats()["entries"] == 0
    assert cache.stats()["bytes"] == 0


def test_add_with_zero_timeout_reports_success_but_stores_nothing(make_cache, clock):
    cache = make_cache()
    assert cache.add("k", "v", timeout=0) is True
    assert cache.has_key("k") is False
    assert cache.stats()["bytes"] == 0


def test_add_succeeds_over_expired_entry(make_cache, clock):
    cache = make_cache()
    cache.set("k", "old", timeout=5)
    clock.advance(6)
    assert cache.add("k", "new") is True
    assert cache.get("k") == "new"


def test_touch_extends_expiry(make_cache, clock):
    cache = make_cache()
    cache.set("k", "v", timeout=10)
    clock.advance(8)
    assert cache.touch("k", timeout=10) is True
    clock.advance(8)  # 16s after set, 8s after touch
    assert cache.get("k") == "v"
    clock.advance(2)
    assert cache.get("k") is None


def test_touch_with_none_makes_entry_permanent(make_cache, clock):
    cache = make_cache()
    cache.set("k", "v", timeout=10)
    assert cache.touch("k", timeout=None) is True
    clock.advance(10**6)
    assert cache.get("k") == "v"


def test_touch_with_zero_timeout_expires_entry(make_cache, clock):
    cache = make_cache()
    cache.set("k", "v")
    assert cache.touch("k", timeout=0) is True
    assert cache.stats()["bytes"] == 0  # released at once, not at the next lookup
    assert cache.get("k") is None


def test_touch_missing_or_expired_key_returns_false(make_cache, clock):
    cache = make_cache()
    assert cache.touch("missing") is False
    cache.set("k", "v", timeout=1)
    clock.advance(1)
    assert cache.touch("k") is False


def test_incr_keeps_existing_expiry(make_cache, clock):
    cache = make_cache()
    cache.set("n", 1, timeout=10)
    clock.advance(5)
    assert cache.incr("n") == 2
    clock.advance(5)
    assert cache.get("n") is None


def test_expired_entries_are_removed_before_live_lru_victims(make_cache, clock):
    cache = make_cache(MAX_ENTRIES=2)
    cache.set("old_live", "a")  # least recently used, but never expires
    cache.set("fresh_expiring", "b", timeout=5)
    clock.advance(5)
    cache.set("new", "c")
    assert stored_keys(cache) == [":1:old_live", ":1:new"]
    assert cache.stats()["evictions"] == 0  # dropping an expired entry is not an eviction


# -- versions and keys --------------------------------------------------------------


def test_versions_are_separate_keys(make_cache):
    cache = make_cache()
    cache.set("k", "v1")
    cache.set("k", "v2", version=2)
    assert cache.get("k") == "v1"
    assert cache.get("k", version=2) == "v2"
    assert cache.get("k", version=3) is None
    cache.delete("k", version=2)
    assert cache.get("k") == "v1"


def test_version_param_sets_default_version(make_cache):
    cache = make_cache(params={"VERSION": 7})
    cache.set("k", "v")
    assert cache.get("k", version=7) == "v"
    assert stored_keys(cache) == [":7:k"]


def test_incr_version_and_decr_version_move_value(make_cache):
    cache = make_cache()
    cache.set("k", "v")
    assert cache.incr_version("k") == 2
    assert cache.get("k") is None
    assert cache.get("k", version=2) == "v"
    assert cache.decr_version("k", version=2) == 1
    assert cache.get("k") == "v"
    assert cache.stats()["entries"] == 1
    assert cache.stats()["bytes"] == pickled_size(cache, "k", "v")
    with pytest.raises(ValueError):
        cache.incr_version("missing")


def test_key_prefix_is_part_of_stored_key(make_cache):
    cache = make_cache(params={"KEY_PREFIX": "pfx"})
    cache.set("k", "v")
    assert stored_keys(cache) == ["pfx:1:k"]


@pytest.mark.parametrize(
    "call",
    [
        lambda c, k: c.get(k),
        lambda c, k: c.set(k, 1),
        lambda c, k: c.add(k, 1),
        lambda c, k: c.delete(k),
        lambda c, k: c.touch(k),
        lambda c, k: c.has_key(k),
        lambda c, k: c.get_many([k]),
    ],
    ids=["get", "set", "add", "delete", "touch", "has_key", "get_many"],
)
@pytest.mark.parametrize("bad_key", ["has space", "x" * 300], ids=["space", "too-long"])
def test_non_portable_keys_warn(make_cache, call, bad_key):
    cache = make_cache()
    with pytest.warns(CacheKeyWarning):
        call(cache, bad_key)


def test_incr_with_bad_key_warns_before_raising(make_cache):
    cache = make_cache()
    with pytest.warns(CacheKeyWarning), pytest.raises(ValueError):
        cache.incr("bad key")


def test_good_keys_do_not_warn(make_cache):
    cache = make_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheKeyWarning)
        cache.set("good:key", 1)
        assert cache.get("good:key") == 1


# -- bounds and LRU -----------------------------------------------------------------


def test_entry_limit_evicts_least_recently_read(make_cache):
    cache = make_cache(MAX_ENTRIES=3)
    for key in "abc":
        cache.set(key, key)
    assert cache.get("a") == "a"  # a becomes most recent; b is now the oldest
    cache.set("d", "d")
    assert cache.get_many(["a", "b", "c", "d"]) == {"a": "a", "c": "c", "d": "d"}
    assert cache.stats()["evictions"] == 1


def test_touch_refreshes_recency(make_cache):
    cache = make_cache(MAX_ENTRIES=2)
    cache.set("a", 1)
    cache.set("b", 2)
    cache.touch("a")
    cache.set("c", 3)
    assert stored_keys(cache) == [":1:a", ":1:c"]


def test_byte_limit_evicts_least_recently_used(make_cache):
    # Each key ":1:x" adds 4 bytes: blobs of 36 weigh 40, of 16 weigh 20, of 6 weigh 10.
    cache = make_cache(MAX_BYTES=100, MAX_ENTRIES=100)
    cache.set("a", Blob(36))
    cache.set("b", Blob(36))
    cache.get("a")  # b is now least recently used
    cache.set("c", Blob(16))
    assert cache.stats()["bytes"] == 100  # exactly at the limit: nothing evicted
    cache.set("d", Blob(6))
    assert stored_keys(cache) == [":1:a", ":1:c", ":1:d"]
    assert cache.stats()["bytes"] == 70
    assert cache.stats()["evictions"] == 1


def test_byte_limit_with_pickled_values_evicts_several_to_fit(make_cache):
    values = {key: key * 200 for key in "abcd"}
    sizes = {key: pickled_size(make_cache(), key, value) for key, value in values.items()}
    cache = make_cache(MAX_BYTES=sizes["a"] + sizes["b"] + sizes["c"])
    for key in "abc":
        cache.set(key, values[key])
    assert cache.stats()["evictions"] == 0
    big = "z" * (sizes["a"] + 10)
    # Freeing a alone is not enough room for d, freeing a and b is: c must survive.
    assert sizes["a"] < pickled_size(cache, "d", big) <= sizes["a"] + sizes["b"]
    cache.set("d", big)
    assert stored_keys(cache) == [":1:c", ":1:d"]
    assert cache.stats()["bytes"] == sizes["c"] + pickled_size(cache, "d", big)
    assert cache.stats()["evictions"] == 2


def test_bytes_and_entries_limits_both_enforced(make_cache):
    cache = make_cache(MAX_BYTES=1000, MAX_ENTRIES=2)
    cache.set("a", Blob(10))
    cache.set("b", Blob(10))
    cache.set("c", Blob(10))  # bytes fine, entries over
    assert stored_keys(cache) == [":1:b", ":1:c"]
    cache.set("d", Blob(990))  # entries over and bytes over: both b and c must go
    assert stored_keys(cache) == [":1:d"]
    assert cache.stats()["evictions"] == 3


# -- oversized values ---------------------------------------------------------------


def test_value_larger_than_budget_is_refused_without_raising(make_cache):
    cache = make_cache(MAX_BYTES=100)
    cache.set("other", Blob(10))
    cache.set("k", Blob(50))
    cache.set("k", Blob(97))  # 97 + len(":1:k") = 101 > 100
    assert cache.get("k") is None  # the older, now stale value is gone too
    assert stored_keys(cache) == [":1:other"]  # the rest of the cache was not flushed
    stats = cache.stats()
    assert stats["rejected"] == 1
    assert stats["bytes"] == 10 + len(":1:other")
    assert stats["evictions"] == 0


def test_value_exactly_the_budget_is_accepted(make_cache):
    cache = make_cache(MAX_BYTES=100)
    cache.set("other", Blob(10))
    blob = Blob(96)  # 96 + 4 == 100
    cache.set("k", blob)
    assert cache.get("k") is blob
    assert cache.stats()["rejected"] == 0
    assert stored_keys(cache) == [":1:k"]


def test_pickled_value_larger_than_budget_is_refused(make_cache):
    cache = make_cache(MAX_BYTES=500)
    cache.set("k", "small")
    cache.set("k", "x" * 600)
    assert cache.get("k") is None
    assert cache.stats()["rejected"] == 1


def test_add_of_oversized_value_returns_false(make_cache):
    cache = make_cache(MAX_BYTES=100)
    assert cache.add("k", Blob(200)) is False
    assert cache.has_key("k") is False
    assert cache.stats()["rejected"] == 1


def test_add_on_existing_key_is_not_a_rejection_and_keeps_value(make_cache):
    cache = make_cache(MAX_BYTES=100)
    cache.set("k", "v")
    assert cache.add("k", Blob(200)) is False
    assert cache.get("k") == "v"
    assert cache.stats()["rejected"] == 0


# -- by-reference values ------------------------------------------------------------


def test_cache_nbytes_values_are_stored_by_reference(make_cache):
    cache = make_cache()
    blob = Blob(1000)
    cache.set("idx", blob)
    assert cache.get("idx") is blob
    assert cache.get("idx") is blob
    assert cache.stats()["bytes"] == blob_size(cache, "idx", blob)


def test_cache_nbytes_is_measured_at_set_only(make_cache):
    cache = make_cache()
    blob = Blob(10)
    cache.set("idx", blob)
    cache.get("idx")
    cache.has_key("idx")
    assert blob.sized == 1


def test_cache_nbytes_is_called_outside_the_lock(make_cache):
    cache = make_cache()
    seen: list[bool] = []

    class Probe(Blob):
        def cache_nbytes(self) -> int:
            seen.append(cache._lock.locked())
            return self.n

    cache.set("k", Probe(5))
    assert seen == [False]


def test_reset_of_grown_object_updates_byte_accounting(make_cache):
    cache = make_cache(MAX_BYTES=500)
    blob = Blob(100)
    cache.set("other", Blob(200))
    cache.set("idx", blob)
    assert cache.stats()["bytes"] == 300 + len(":1:other") + len(":1:idx")
    blob.n = 300  # the owner grew it in place; accounting is stale until re-set
    assert cache.stats()["bytes"] == 300 + len(":1:other") + len(":1:idx")
    cache.set("idx", blob)
    assert cache.get("idx") is blob
    # 300 + 200 + keys no longer fits 500: the older entry is evicted.
    assert stored_keys(cache) == [":1:idx"]
    assert cache.stats()["bytes"] == 300 + len(":1:idx")


def test_class_with_cache_nbytes_used_as_value_is_pickled(make_cache):
    # Only instances opt in; a class object itself is an ordinary (pickled) value.
    cache = make_cache()
    cache.set("cls", Blob)
    assert cache.get("cls") is Blob  # classes unpickle to themselves
    assert cache.stats()["bytes"] == pickled_size(cache, "cls", Blob)


# -- stats --------------------------------------------------------------------------


def test_stats_count_exact_hits_misses_evictions_rejections(make_cache):
    cache = make_cache(MAX_ENTRIES=2, MAX_BYTES=1000)
    cache.set("a", 1)
    cache.set("b", 2)
    cache.get("a")  # hit
    cache.get("zzz")  # miss
    cache.get_many(["a", "b", "c"])  # 2 hits, 1 miss; b is read last
    cache.has_key("a")  # hit (a lookup, but not a use: recency unchanged)
    cache.has_key("nope")  # miss
    cache.set("c", 3)  # evicts a
    cache.set("d", 4)  # evicts b
    cache.delete("c")  # explicit delete: not an eviction
    cache.set("huge", Blob(5000))  # rejected
    assert cache.stats() == {
        "entries": 1,
        "bytes": pickled_size(cache, "d", 4),
        "max_bytes": 1000,
        "max_entries": 2,
        "hits": 4,
        "misses": 3,
        "evictions": 2,
        "rejected": 1,
    }
    assert all(type(v) is int for v in cache.stats().values())


def test_expiry_counts_as_miss_not_eviction(make_cache, clock):
    cache = make_cache()
    cache.set("k", 1, timeout=1)
    clock.advance(1)
    cache.get("k")
    stats = cache.stats()
    assert (stats["hits"], stats["misses"], stats["evictions"]) == (0, 1, 0)


def test_clear_empties_entries_but_keeps_counters(make_cache):
    cache = make_cache(MAX_ENTRIES=1)
    cache.set("a", 1)
    cache.set("b", 2)  # one eviction
    cache.get("b")
    cache.get("a")
    cache.clear()
    stats = cache.stats()
    assert (stats["entries"], stats["bytes"]) == (0, 0)
    assert (stats["hits"], stats["misses"], stats["evictions"]) == (1, 1, 1)
    assert cache.get("b") is None


def test_reset_stats_zeroes_counters_but_keeps_entries(make_cache):
    cache = make_cache(MAX_ENTRIES=1, MAX_BYTES=100)
    cache.set("a", 1)
    cache.set("b", 2)
    cache.set("c", Blob(500))
    cache.get("b")
    cache.get("x")
    cache.reset_stats()
    stats = cache.stats()
    assert (stats["hits"], stats["misses"], stats["evictions"], stats["rejected"]) == (0, 0, 0, 0)
    assert stats["entries"] == 1
    assert stats["bytes"] == pickled_size(cache, "b", 2)


# -- sharing ------------------------------------------------------------------------


def test_instances_with_same_name_share_entries_and_stats(make_cache):
    name = f"shared-{uuid.uuid4().hex}"
    first = make_cache(name)
    second = make_cache(name)
    first.set("k", "v")
    assert second.get("k") == "v"
    assert first.stats()["hits"] == 1
    second.clear()
    assert first.get("k") is None


def test_differently_named_caches_do_not_share(make_cache):
    one = make_cache("one-" + uuid.uuid4().hex)
    two = make_cache("two-" + uuid.uuid4().hex)
    one.set("k", "v")
    assert two.get("k") is None
    assert two.stats()["entries"] == 0
    assert one.stats()["entries"] == 1


def test_caches_alias_uses_backend_and_settings_options(rollouts_cache):
    assert isinstance(rollouts_cache, ByteLimitedCache)
    stats = rollouts_cache.stats()
    assert stats["max_bytes"] == 64 * 1024 * 1024
    assert stats["max_entries"] == 50
    rollouts_cache.set("k", [1, 2])
    assert caches["rollouts"].get("k") == [1, 2]


def test_caches_alias_shares_data_across_threads(rollouts_cache):
    rollouts_cache.set("k", "from-main")
    seen: dict[str, Any] = {}

    def worker() -> None:
        other = caches["rollouts"]
        seen["same_instance"] = other is rollouts_cache
        seen["value"] = other.get("k")
        other.set("k2", "from-thread")

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == {"same_instance": False, "value": "from-main"}
    assert rollouts_cache.get("k2") == "from-thread"


# -- concurrency --------------------------------------------------------------------


@pytest.fixture
def frequent_thread_switches() -> Iterator[None]:
    """Switch threads as often as possible so unlocked read-modify-writes would interleave."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


@pytest.mark.usefixtures("frequent_thread_switches")
def test_concurrent_hammer_keeps_accounting_consistent(make_cache):
    max_entries, max_bytes = 10, 6000
    cache = make_cache(MAX_ENTRIES=max_entries, MAX_BYTES=max_bytes)
    keys = [f"k{i}" for i in range(30)]
    errors: list[BaseException] = []
    gets = [0] * 8
    barrier = threading.Barrier(8)

    def worker(index: int) -> None:
        rng = random.Random(index)
        try:
            barrier.wait()
            for _ in range(3000):
                key = rng.choice(keys)
                op = rng.random()
                if op < 0.4:
                    size = rng.randint(1, 2000)
                    value: Any = Blob(size) if rng.random() < 0.3 else b"x" * size
                    cache.set(key, value)
                elif op < 0.8:
                    cache.get(key)
                    gets[index] += 1
                elif op < 0.9:
                    cache.delete(key)
                else:
                    cache.set(key, Blob(max_bytes + 1))  # always rejected
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    with cache._lock:
        entries = dict(cache._store.entries)
    stats = cache.stats()
    assert stats["bytes"] == sum(entry.nbytes for entry in entries.values())
    assert stats["entries"] == len(entries) <= max_entries
    assert stats["bytes"] <= max_bytes
    assert stats["hits"] + stats["misses"] == sum(gets)
    assert stats["rejected"] > 0
    for key, entry in entries.items():
        if entry.by_ref:
            assert entry.nbytes == entry.value.n + len(key)
        else:
            assert entry.nbytes == len(entry.value) + len(key)


@pytest.mark.usefixtures("frequent_thread_switches")
def test_concurrent_incr_loses_no_updates(make_cache):
    cache = make_cache()
    cache.set("n", 0)
    threads_count, per_thread = 8, 500
    barrier = threading.Barrier(threads_count)

    def worker() -> None:
        barrier.wait()
        for _ in range(per_thread):
            cache.incr("n")

    threads = [threading.Thread(target=worker) for _ in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.get("n") == threads_count * per_thread
    assert cache.stats()["bytes"] == pickled_size(cache, "n", threads_count * per_thread)
