"""Global shuffle over a remote (s3://) dataset, the default shuffle (issue 30).

When every shard fits the node-local cache's budget, the loader fetches whole shards into the
cache in the order the plan first touches them, several at once, and serves documents from disk:
each .bin and .idx is one GET (counted at a proxy in front of the S3 server), a later epoch makes
no shard request, and the batches are the local dataset's, under injected faults too. A cache of a
quarter of the dataset falls back to ranged GETs of document pieces (only the .idx files
cached), runs its epoch to the end with the local batches, resumes exactly, and says once that
request latency bounds it. bench and doctor report requests per batch and the time spent waiting
on storage, and doctor names request latency when it is the limit."""

import json

import numpy as np
import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

import stoker  # noqa: E402
from remote_testlib import (BUCKET, Proxy, max_in_flight, pack_test_corpus,  # noqa: E402,F401
                            proxy_in_env, s3_env, s3_session)
from remote_testlib import run_cli as run  # noqa: E402

PREFIX = "remote-gshuf"  # this module's objects in the session's moto server (remote_testlib)
WARNING = "is read under global shuffle by ranged GETs of its document pieces"


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
    d = tmp_path_factory.mktemp("gshuf-corpus")
    uri = f"s3://{BUCKET}/{PREFIX}/ds"
    manifest = pack_test_corpus(stoker_cli, s3, d, uri, 600, seed=30, min_shards=6)
    names = [s["prefix"] + e for s in manifest["shards"] for e in (".bin", ".idx")]
    total = sum((d / "local" / n).stat().st_size for n in names)
    return {"local": d / "local", "uri": uri, "manifest": manifest, "names": names,
            "bytes": total}


KW = dict(seq_len=64, batch_size=4, num_workers=2, pin_memory=False, shuffle="global", seed=7)


def epoch(loader):
    return [np.asarray(b["input_ids"]).copy() for b in loader]


def assert_same(want, got):
    assert len(want) == len(got) > 0
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


def shard_gets(proxy):
    return {p.rsplit("/", 1)[-1]: n for p, n in proxy.get_paths.items()
            if p.endswith((".bin", ".idx"))}


def cached_names(cache):
    return sorted(p.name.split("-", 1)[1] for p in (cache / "data").iterdir())


def test_whole_shards_are_fetched_once_when_the_dataset_fits_the_cache(dataset, proxy, tmp_path,
                                                                       capfd):
    local = stoker.Loader(str(dataset["local"]), **KW)
    want = [epoch(local), epoch(local)]
    cache = tmp_path / "c"
    loader = stoker.Loader(dataset["uri"], cache_dir=str(cache), cache_size="64MiB", **KW)
    assert_same(want[0], epoch(loader))
    # Every .bin and .idx of the dataset, one GET each (each is below the 8 MiB download part):
    # whole objects, not a GET per document.
    assert shard_gets(proxy) == {n.rsplit("/", 1)[-1]: 1 for n in dataset["names"]}
    assert cached_names(cache) == sorted(n.rsplit("/", 1)[-1] for n in dataset["names"])
    stats = loader.stats()["storage"]
    assert stats["whole_shard_datasets"] == 1 and stats["ranged_datasets"] == 0, stats
    assert stats["request_s"] > 0, stats
    # The second epoch reads from the cache: no shard request at all.
    proxy.reset_counts()
    assert_same(want[1], epoch(loader))
    assert shard_gets(proxy) == {}, shard_gets(proxy)
    # Exact resume from the middle of the first epoch, on the warm cache.
    kw = dict(KW, cache_dir=str(cache), cache_size="64MiB")
    first = stoker.Loader(dataset["uri"], **kw)
    it = iter(first)
    head = [np.asarray(next(it)["input_ids"]).copy() for _ in range(len(want[0]) // 2)]
    state = json.loads(json.dumps(first.state_dict()))
    del it, first
    resumed = stoker.Loader(dataset["uri"], **kw)
    resumed.load_state_dict(state)
    assert_same(want[0], head + epoch(resumed))
    assert shard_gets(proxy) == {}, shard_gets(proxy)
    assert WARNING not in capfd.readouterr().err


def test_whole_shards_under_injected_faults_give_the_local_batches(s3, dataset, tmp_path,
                                                                   monkeypatch):
    faulty = Proxy(s3["port"], fail=0.08, slowdown=0.08, reset=0.05, truncate=0.05, seed=30)
    try:
        for k, v in s3_env(s3, faulty.endpoint).items():
            if k.startswith("AWS_"):
                monkeypatch.setenv(k, v)
        want = epoch(stoker.Loader(str(dataset["local"]), **KW))
        loader = stoker.Loader(dataset["uri"], cache_dir=str(tmp_path / "c"), cache_size="64MiB",
                               **KW)
        assert_same(want, epoch(loader))
        assert sum(faulty.faults.values()) > 0, faulty.faults
        stats = loader.stats()["storage"]
        assert stats["whole_shard_datasets"] == 1 and stats["retries"] > 0, stats
    finally:
        faulty.close()


def test_a_cache_of_a_quarter_of_the_dataset_reads_ranges_and_finishes(dataset, proxy, tmp_path,
                                                                      capfd):
    """The shards do not fit: ranged GETs of document pieces, only .idx files cached. The
    epoch runs to its end (no deadlock on a cache too small for the working set), batch for batch
    the local one, and a resume from the middle gives the rest exactly. The loader says once that
    request latency bounds it."""
    quarter = dataset["bytes"] // 4
    local = stoker.Loader(str(dataset["local"]), **KW)
    want = epoch(local)
    cache = tmp_path / "c"
    kw = dict(KW, cache_dir=str(cache), cache_size=str(quarter))
    loader = stoker.Loader(dataset["uri"], **kw)
    got = epoch(loader)
    assert_same(want, got)
    err = capfd.readouterr().err
    assert err.count(WARNING) == 1, err
    assert "exceed the cache budget" in err and "--shuffle block" in err, err
    names = cached_names(cache)
    assert names and all(n.endswith(".idx") for n in names), names
    bins = {p: n for p, n in shard_gets(proxy).items() if p.endswith(".bin")}
    assert sum(bins.values()) > 2 * len(bins), bins  # many ranged GETs per shard
    stats = loader.stats()["storage"]
    assert stats["ranged_datasets"] == 1 and stats["whole_shard_datasets"] == 0, stats
    # Exact resume: stop after a third of the epoch, restore into a new loader.
    first = stoker.Loader(dataset["uri"], **kw)
    it = iter(first)
    head = [np.asarray(next(it)["input_ids"]).copy() for _ in range(len(want) // 3)]
    state = json.loads(json.dumps(first.state_dict()))
    del it, first
    resumed = stoker.Loader(dataset["uri"], **kw)
    resumed.load_state_dict(state)
    assert_same(want, head + epoch(resumed))


def test_ranged_reads_are_fetched_ahead_many_at_once(s3, dataset, tmp_path, monkeypatch):
    """Behind 20 ms a request, a dataset four times the cache: the loader fetches the pieces of
    the steps ahead, many GETs in flight at once (two workers alone would make two), one GET for
    pieces stored close together, and its workers take them from memory. The batches
    are the local ones; a resume from the middle restarts the read-ahead there and gives the rest
    exactly."""
    slow = proxy_in_env(s3, monkeypatch, latency_s=0.02)
    try:
        want = epoch(stoker.Loader(str(dataset["local"]), **KW))
        kw = dict(KW, cache_dir=str(tmp_path / "c"), cache_size=str(dataset["bytes"] // 4))
        loader = stoker.Loader(dataset["uri"], **kw)
        assert_same(want, epoch(loader))
        bins = [i for i in slow.get_intervals if i[2].endswith(".bin")]
        assert len(bins) > 2 * len(dataset["manifest"]["shards"]), len(bins)  # ranged GETs
        assert max_in_flight(bins) >= 8, max_in_flight(bins)
        stats = loader.stats()["storage"]
        assert stats["ranged_datasets"] == 1, stats
        pieces = stats["pieces_read_ahead"] + stats["pieces_read_on_demand"]
        assert stats["pieces_read_ahead"] >= 0.5 * pieces > 0, stats
        # Documents of up to 400 tokens at seq_len 64 are cut across several rows; the pieces of
        # one document in consecutive rows, and pieces stored within 64 KiB of each other, are
        # read with one GET (one GET per run of one document made 0.24 per piece).
        assert len(bins) < 0.15 * pieces, (len(bins), stats)
        first = stoker.Loader(dataset["uri"], **kw)
        it = iter(first)
        head = [np.asarray(next(it)["input_ids"]).copy() for _ in range(len(want) // 2)]
        state = first.state_dict()
        del it, first
        resumed = stoker.Loader(dataset["uri"], **kw)
        resumed.load_state_dict(state)
        assert_same(want, head + epoch(resumed))
        assert resumed.stats()["storage"]["pieces_read_ahead"] > 0
    finally:
        slow.close()


def test_a_mixture_fits_its_datasets_into_one_shared_budget(dataset, proxy, tmp_path, capfd):
    """Two remote datasets of one mixture, a cache that holds one and a half of them: the first is
    read whole through the cache, the second (which would fit alone) by ranges, since the first
    took its room. The batches are the local mixture's."""
    local = str(dataset["local"])
    want = epoch(stoker.Loader([(1.0, local), (1.0, local)], **KW))
    kw = dict(KW, cache_dir=str(tmp_path / "c"), cache_size=str(dataset["bytes"] * 3 // 2))
    loader = stoker.Loader([(1.0, dataset["uri"]), (1.0, dataset["uri"])], **kw)
    assert_same(want, epoch(loader))
    stats = loader.stats()["storage"]
    assert stats["whole_shard_datasets"] == 1 and stats["ranged_datasets"] == 1, stats
    err = capfd.readouterr().err
    assert err.count(WARNING) == 1 and "that the mixture's other datasets read whole" in err, err


def test_bench_and_doctor_report_requests_and_request_latency(stoker_cli, s3, dataset, tmp_path):
    """Behind 20 ms per request: ranged reads (a cache of a quarter of the dataset) are bound by
    request latency, which bench's figures show and doctor names with the cache budget that would
    fetch whole shards; with a cache that holds the dataset, doctor says nothing of latency."""
    slow = Proxy(s3["port"], latency_s=0.02)
    try:
        common = [dataset["uri"], "--seq-len", 64, "--batch-size", 4, "--num-workers", 2,
                  "--shuffle", "global", "--batches", 15, "--warmup-batches", 2, "--json"]
        quarter = ["--cache-dir", tmp_path / "q", "--cache-size", dataset["bytes"] // 4]
        r = run(stoker_cli, s3, slow.endpoint, "bench", *common, *quarter)
        j = json.loads(r.stdout)
        assert r.stderr.count(WARNING) == 1, r.stderr
        assert j["storage"]["read_mode"] == "ranged", j["storage"]
        assert j["requests_per_batch"] > 0, j  # below 1 where neighbouring pieces join
        assert j["storage_wait_s"] > 0 and j["mean_request_ms"] >= 20, j
        r = run(stoker_cli, s3, slow.endpoint, "doctor", *common, *quarter,
                "--train-tokens-per-s", "1e9", check=False)
        assert r.returncode == 1, r.stderr
        d = json.loads(r.stdout)
        assert d["latency_bound"] is True, d
        advice = " ".join(d["advice"])
        assert "Request latency limits delivery" in advice and "--cache-size" in advice, advice
        assert "local NVMe cache" not in advice, advice
        # A cache that holds the dataset: whole shards, no warning, no latency verdict.
        whole = ["--cache-dir", tmp_path / "w", "--cache-size", "64MiB"]
        r = run(stoker_cli, s3, slow.endpoint, "doctor", *common, *whole,
                "--train-tokens-per-s", "1e12", check=False)
        assert WARNING not in r.stderr
        d = json.loads(r.stdout)
        assert d["bench"]["storage"]["read_mode"] == "whole_shards", d["bench"]["storage"]
        assert d["latency_bound"] is False, d
        assert "Request latency" not in " ".join(d["advice"])
    finally:
        slow.close()
