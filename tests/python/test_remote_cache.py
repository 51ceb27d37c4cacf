"""Remote datasets through the node-local cache (f-cache's ShardCache behind the ShardOpener
seam): the batches are the uncached ones; two processes sharing one cache directory download each
shard object once (counted at a proxy in front of the S3 server); `stoker prefetch` stages what a
rank reads first, so that its first steps make no shard request. Remote data is cached by default
in the cache root's shards/ (under $XDG_CACHE_HOME: conftest.py gives each test its own), local
data never; under global shuffle with a cache smaller than the dataset only the .idx files are
cached and documents are ranged GETs.
The plan's caches share the root (each kind in its own subdirectory), which a session-wide
$XDG_CACHE_HOME shows: a Megatron prefix planned, then a remote dataset read."""

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

import stoker  # noqa: E402
from remote_testlib import (BUCKET, pack_test_corpus, proxy_in_env, s3_env,  # noqa: E402,F401
                            s3_session)
from remote_testlib import run_cli as run  # noqa: E402

PREFIX = "remote-cache"  # this module's objects in the session's moto server (remote_testlib)


@pytest.fixture(scope="module")
def s3(s3_session):
    return s3_session


@pytest.fixture
def proxy(s3, monkeypatch):
    p = proxy_in_env(s3, monkeypatch)
    yield p
    p.close()


@pytest.fixture(scope="module")
def dataset(stoker_cli, s3, tmp_path_factory):
    d = tmp_path_factory.mktemp("cache-corpus")
    uri = f"s3://{BUCKET}/{PREFIX}/ds"
    manifest = pack_test_corpus(stoker_cli, s3, d, uri, 800, seed=4, min_shards=8)
    return {"local": d / "local", "uri": uri, "manifest": manifest}


def batches(loader):
    return [np.asarray(b["input_ids"]).copy() for b in loader]


def shard_gets(proxy):
    return {p: n for p, n in proxy.get_paths.items() if p.endswith((".bin", ".idx"))}


def test_batches_through_the_cache_are_the_uncached_ones(dataset, proxy, tmp_path):
    kw = dict(seq_len=64, batch_size=4, num_workers=2, pin_memory=False, shuffle="block", seed=9)
    want = batches(stoker.Loader(str(dataset["local"]), **kw))
    # A budget of a few shards: smaller than the dataset, so the cache evicts and keeps going.
    # Three loaders one after the other: the cache's download threads outlived the first one's
    # dataset and counted into its freed metrics (heap corruption within 2-4 loaders, or at once
    # under ASan), until the backend owned them.
    for i in range(3):
        loader = stoker.Loader(dataset["uri"], cache_dir=str(tmp_path / f"c{i}"),
                               cache_size="96KiB", **kw)
        got = batches(loader)
        assert len(got) == len(want) > 0
        for a, b in zip(want, got):
            np.testing.assert_array_equal(a, b)
        stats = loader.stats()["storage"]
        assert stats["cache_hits"] > 0, stats
        del loader
    with pytest.raises(ValueError, match="cache_size needs a cache"):
        stoker.Loader(dataset["uri"], cache_dir=None, cache_size="1GiB", **kw)


def test_two_processes_share_a_cache_and_download_each_shard_once(stoker_cli, s3, dataset,
                                                                  proxy, tmp_path):
    cache = tmp_path / "shared"
    args = ["bench", dataset["uri"], "--seq-len", 64, "--batch-size", 4, "--shuffle", "block",
            "--batches", 1000, "--warmup-batches", 1, "--num-workers", 2, "--cache-dir", cache,
            "--cache-size", "64MiB", "--json"]
    results = [None, None]

    def one(i):
        results[i] = run(stoker_cli, s3, proxy.endpoint, *args)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gets = shard_gets(proxy)
    objects = 2 * len(dataset["manifest"]["shards"])
    assert len(gets) == objects, gets  # every shard was read (1000 batches: more than an epoch)...
    assert set(gets.values()) == {1}, gets  # ...and downloaded once for both processes
    hits = [json.loads(r.stdout)["storage"]["cache_hits"] for r in results]
    assert sum(hits) > 0


def test_prefetch_stages_the_first_steps(stoker_cli, s3, dataset, proxy, tmp_path):
    cache = tmp_path / "staged"
    flags = ["--seq-len", 64, "--batch-size", 4, "--shuffle", "block", "--seed", 2,
             "--world-size", 2, "--rank", 1]
    out = run(stoker_cli, s3, proxy.endpoint, "prefetch", dataset["uri"], "--cache-dir", cache,
              "--steps", 5, *flags).stdout
    assert "staged" in out and "rank 1 of 2" in out
    staged = shard_gets(proxy)
    assert staged and set(staged.values()) == {1}
    # Staged: the same prefetch again is served from the cache, without a shard request.
    proxy.reset_counts()
    run(stoker_cli, s3, proxy.endpoint, "prefetch", dataset["uri"], "--cache-dir", cache,
        "--steps", 5, *flags)
    assert shard_gets(proxy) == {}, shard_gets(proxy)


def cached_names(cache_dir):
    data = cache_dir / "data"
    return sorted(os.listdir(data)) if data.is_dir() else []


def test_remote_data_is_cached_by_default_and_local_data_is_not(stoker_cli, s3, dataset, proxy):
    default = Path(os.environ["XDG_CACHE_HOME"]) / "stoker" / "shards"
    kw = dict(seq_len=64, batch_size=4, num_workers=2, pin_memory=False, shuffle="block", seed=1,
              persistent_workers=False)
    want = batches(stoker.Loader(str(dataset["local"]), **kw))
    assert not default.exists()  # local data: no cache
    shards = len(dataset["manifest"]["shards"])
    cold = stoker.Loader(dataset["uri"], **kw)  # no cache_dir: the default one
    got = batches(cold)
    assert len(got) == len(want)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)
    assert (default / "stoker-cache.json").is_file()
    assert len(cached_names(default)) == 2 * shards
    # Each shard object is one GET (sizes from the manifest: no HEAD but the manifest's).
    gets = shard_gets(proxy)
    assert len(gets) == 2 * shards and set(gets.values()) == {1}, gets
    assert proxy.counts["HEAD"] == 1 and cold.stats()["storage"]["requests"]["HEAD"] == 1
    # A second run: every shard from the cache, no shard request at the server.
    proxy.reset_counts()
    warm = stoker.Loader(dataset["uri"], **kw)
    for a, b in zip(want, batches(warm)):
        np.testing.assert_array_equal(a, b)
    assert shard_gets(proxy) == {}, shard_gets(proxy)
    assert dict(proxy.counts) == {"HEAD": 1, "GET": 2}, proxy.counts  # manifest, lengths
    stats = warm.stats()["storage"]
    assert stats["cache_hits"] >= 2 * shards and stats["requests"]["GET"] == 2, stats
    # Turned off: straight from the server again, and the cache is left as it was.
    proxy.reset_counts()
    assert len(batches(stoker.Loader(dataset["uri"], cache_dir=None, **kw))) == len(want)
    assert len(shard_gets(proxy)) == 2 * shards
    assert stoker.Loader(dataset["uri"], cache_dir=None, **kw).stats()["storage"][
        "cache_hits"] == 0
    # The CLI the same: bench finds the default cache warm; --no-cache reads from the server.
    flags = ["--seq-len", 64, "--batch-size", 4, "--shuffle", "block", "--batches", 20,
             "--warmup-batches", 1, "--json"]
    proxy.reset_counts()
    hot = json.loads(run(stoker_cli, s3, proxy.endpoint, "bench", dataset["uri"], *flags).stdout)
    assert hot["storage"]["cache_hits"] > 0 and shard_gets(proxy) == {}, hot["storage"]
    off = json.loads(run(stoker_cli, s3, proxy.endpoint, "bench", dataset["uri"], "--no-cache",
                         *flags).stdout)
    assert off["storage"]["cache_hits"] == 0 and shard_gets(proxy), off["storage"]
    # prefetch stages into the default cache too, and names it.
    out = run(stoker_cli, s3, proxy.endpoint, "prefetch", dataset["uri"], "--steps", 2,
              "--seq-len", 64, "--batch-size", 4, "--shuffle", "block").stdout
    assert str(default) in out


def test_global_shuffle_caches_the_indexes_and_reads_documents_by_range(dataset, proxy,
                                                                          tmp_path):
    """Global shuffle reads single documents spread over every shard. When the shards do not fit
    the cache (here a budget of a quarter of the dataset), whole-shard downloads would evict each
    other: the .idx files are cached and the document pieces are read by ranged GETs, pieces
    stored near each other joined into one. (When they fit, whole shards are cached:
    test_remote_global_shuffle.py.)"""
    kw = dict(seq_len=64, batch_size=4, num_workers=2, prefetch_factor=2, pin_memory=False,
              shuffle="global", seed=5)
    local = stoker.Loader(str(dataset["local"]), **kw)
    want = [b for _, b in zip(range(8), batches(local))]
    cache = tmp_path / "c"
    shards = dataset["manifest"]["shards"]
    quarter = sum((dataset["local"] / (s["prefix"] + e)).stat().st_size
                  for s in shards for e in (".bin", ".idx")) // 4
    loader = stoker.Loader(dataset["uri"], cache_dir=str(cache), cache_size=str(quarter), **kw)
    it = iter(loader)
    got = [np.asarray(next(it)["input_ids"]).copy() for _ in range(8)]
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)
    names = cached_names(cache)
    assert names and all(n.endswith(".idx") for n in names), names
    bin_gets = {p: n for p, n in shard_gets(proxy).items() if p.endswith(".bin")}
    idx_gets = {p: n for p, n in shard_gets(proxy).items() if p.endswith(".idx")}
    assert set(idx_gets.values()) == {1}, idx_gets
    assert sum(bin_gets.values()) > len(bin_gets), bin_gets  # many ranged GETs per shard
    # No .bin byte was cached, and the .bin bytes were read by the read-ahead ahead of the
    # workers. (How many bytes depends on how far the read-ahead got: it joins queued pieces up to
    # 64 KiB apart, and this corpus's 16 KiB shards are dense with them. Requests per piece:
    # test_remote_global_shuffle.py.)
    stats = loader.stats()["storage"]
    assert stats["pieces_read_ahead"] > 0 and stats["bytes_read"] > 0, stats


def test_block_shuffle_with_a_quarter_cache_fetches_each_shard_a_few_times(dataset, proxy,
                                                                           tmp_path):
    """Block shuffle through a cache of a quarter of the dataset: an epoch equal to the local one,
    in a few GETs per shard. Readers hold their shards' pins across reads (leases) down to a budget
    of four shards; when each read took its pin and let go (below 16 shards, until session 27), the
    look-ahead and the other readers evicted the shards being read, and an epoch fetched each shard
    about 50 times."""
    kw = dict(seq_len=64, batch_size=4, num_workers=4, pin_memory=False, shuffle="block",
              block_shards=2, seed=3, persistent_workers=False)
    want = batches(stoker.Loader(str(dataset["local"]), **kw))
    shards = dataset["manifest"]["shards"]
    sizes = [(dataset["local"] / (s["prefix"] + e)).stat().st_size
             for s in shards for e in (".bin", ".idx")]
    quarter = sum(sizes) // 4
    assert quarter >= 4 * max(sizes)  # leases are held from four shards up
    loader = stoker.Loader(dataset["uri"], cache_dir=str(tmp_path / "c"), cache_size=str(quarter),
                           **kw)
    got = batches(loader)
    assert len(got) == len(want) > 0
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)
    gets = shard_gets(proxy)
    assert len(gets) == 2 * len(shards), gets  # every .bin and .idx, none ranged
    assert sum(gets.values()) <= 4 * len(gets), gets


def write_megatron_prefix(prefix, docs):
    """A Megatron .bin/.idx pair (int32 tokens, one sequence per document), as megatron-core's
    IndexedDatasetBuilder writes it (docs/: the Megatron indexed layout)."""
    sizes = np.array([len(d) for d in docs], dtype=np.int32)
    pointers = np.concatenate([[0], np.cumsum(sizes[:-1].astype(np.int64) * 4)]).astype(np.int64)
    with open(f"{prefix}.bin", "wb") as f:
        for d in docs:
            f.write(np.asarray(d, dtype=np.int32).tobytes())
    with open(f"{prefix}.idx", "wb") as f:
        f.write(b"MMIDIDX\x00\x00")
        f.write(np.array([1], dtype="<u8").tobytes())  # version
        f.write(np.array([4], dtype="<u1").tobytes())  # dtype code 4: int32
        f.write(np.array([len(docs), len(docs) + 1], dtype="<u8").tobytes())  # N, D + 1
        f.write(sizes.tobytes() + pointers.tobytes())
        f.write(np.arange(len(docs) + 1, dtype=np.int64).tobytes())  # document index


def test_one_xdg_cache_home_for_a_megatron_plan_then_a_remote_dataset(dataset, proxy, tmp_path):
    """The issue-27 collision, with the environment users have: one $XDG_CACHE_HOME for the whole
    session. Planning a Megatron prefix writes the plan's totals and lock files into the cache
    root; the default shard cache opened next refused that directory ("not a stoker cache ... holds
    'megatron-….lock'") while both used $XDG_CACHE_HOME/stoker itself."""
    root = Path(os.environ["XDG_CACHE_HOME"]) / "stoker"
    rng = np.random.default_rng(3)
    prefix = tmp_path / "mg_text_document"
    write_megatron_prefix(prefix, [rng.integers(1, 1000, rng.integers(1, 200)) for _ in range(300)])
    kw = dict(seq_len=64, batch_size=4, num_workers=2, pin_memory=False, shuffle="block", seed=1,
              persistent_workers=False)
    assert stoker.plan(str(prefix), seq_len=64, batch_size=4).fingerprint  # counts the totals
    assert list(root.rglob("megatron-*.lock")), list(root.rglob("*"))  # the plan's files
    assert len(batches(stoker.Loader(dataset["uri"], **kw))) > 0  # the default shard cache
    assert (root / "shards" / "stoker-cache.json").is_file()
    assert sorted(p.name for p in root.iterdir()) == ["plan", "shards"]


def test_provenance_keeps_the_loaders_remote_options(dataset, proxy, tmp_path):
    """Provenance is the loader's own: with provenance=True a remote dataset is opened once, with
    the loader's cache_dir and cache_size. The binding used to open the datasets again for the
    provenance map, without them: the shards bypassed the cache (regression test)."""
    kw = dict(seq_len=64, batch_size=4, num_workers=2, pin_memory=False, shuffle="block", seed=9)
    cache = tmp_path / "prov"
    loader = stoker.Loader(dataset["uri"], cache_dir=str(cache), cache_size="64MiB",
                           provenance=True, **kw)
    batch = next(iter(loader))
    assert cached_names(cache), "the shards went through the loader's cache"
    pieces = [p for row in batch["provenance"] for p in row]
    assert pieces and all(p["shard_path"].startswith(dataset["uri"] + "/") for p in pieces), pieces[:2]
    # The manifest was read once: the provenance map is the loader's datasets, not a second open.
    assert proxy.get_paths[f"/{BUCKET}/{PREFIX}/ds/manifest.json"] == 1, proxy.get_paths
