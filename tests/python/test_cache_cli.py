"""`stoker cache DIR` against a cache directory written here by hand from docs/cache.md's layout
(so the layout on disk is pinned by an independent writer): what it shows, what --clear removes,
and that a directory with anything else in it is refused and left alone."""

import json
import re

import xxhash


def object_key(uri):
    base = uri.rstrip("/").rsplit("/", 1)[-1][-48:]
    return xxhash.xxh3_64_hexdigest(uri.encode()) + "-" + re.sub(r"[^A-Za-z0-9._-]", "_", base)


def make_cache(root, objects, stats):
    root.mkdir(parents=True)
    (root / "stoker-cache.json").write_text(json.dumps({"format": "stoker-cache", "version": 1}))
    for sub in ("data", "meta", "tmp", "locks"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for uri, data in objects.items():
        key = object_key(uri)
        (root / "data" / key).write_bytes(data)
        (root / "meta" / f"{key}.json").write_text(json.dumps(
            {"uri": uri, "size_bytes": len(data), "xxh3": xxhash.xxh3_64_hexdigest(data)}))
    (root / "stats.json").write_text(json.dumps(stats))


OBJECTS = {"s3://bucket/ds/shard 00.bin": b"a" * 3000, "s3://bucket/ds/shard_01.bin": b"b" * 5000}
STATS = {"hits": 30, "misses": 10, "downloads": 10, "bytes_downloaded": 8000, "refetches": 1,
         "evictions": 2, "reverified": 4, "budget_bytes": 1 << 30}


def test_cache_shows_objects_budget_and_hit_rate(run_stoker, tmp_path):
    make_cache(tmp_path / "c", OBJECTS, STATS)
    res = run_stoker("cache", tmp_path / "c", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert [o["uri"] for o in report["objects"]] == sorted(OBJECTS)
    assert [o["xxh3"] for o in report["objects"]] == [
        xxhash.xxh3_64_hexdigest(OBJECTS[u]) for u in sorted(OBJECTS)]
    assert report["used_bytes"] == 8000
    assert report["budget_bytes"] == 1 << 30
    assert report["hit_rate"] == 0.75
    assert (report["refetches"], report["evictions"], report["reverified"]) == (1, 2, 4)
    text = run_stoker("cache", tmp_path / "c")
    assert text.returncode == 0
    assert "2 objects" in text.stdout and "hit rate 75.0%" in text.stdout
    assert "1 refetches, 2 evictions, 4 re-hashed after a reboot" in text.stdout


def test_clear_removes_only_the_caches_objects(run_stoker, tmp_path):
    root = tmp_path / "c"
    make_cache(root, OBJECTS, STATS)
    res = run_stoker("cache", root, "--clear", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["removed_objects"] == 2
    assert list((root / "data").iterdir()) == [] and list((root / "meta").iterdir()) == []
    assert (root / "stoker-cache.json").exists()
    after = json.loads(run_stoker("cache", root, "--json").stdout)
    assert after["objects"] == [] and after["hits"] == 0


def test_foreign_files_are_refused_and_kept(run_stoker, tmp_path):
    root = tmp_path / "c"
    make_cache(root, OBJECTS, STATS)
    (root / "data" / "checkpoint.pt").write_bytes(b"weights")
    for args in (("cache", root), ("cache", root, "--clear")):
        res = run_stoker(*args)
        assert res.returncode == 2
        assert "checkpoint.pt" in res.stderr and "not written by the stoker cache" in res.stderr
    assert (root / "data" / "checkpoint.pt").read_bytes() == b"weights"
    assert len(list((root / "data").iterdir())) == 3

    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("x")
    res = run_stoker("cache", home, "--clear")
    assert res.returncode == 2 and "not a stoker cache" in res.stderr
    assert (home / "thesis.tex").exists()
