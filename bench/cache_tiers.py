"""The loader's storage tiers side by side (issue 11), one epoch each, block shuffle:

  local disk | S3 without cache | S3 cold cache | S3 warm cache | boto3 (same bytes)

then the same cold cache, and no cache, behind a proxy that adds LATENCY_MS to every request,
against a stated training rate (tokens/s per rank): look-ahead in plan order keeps the loader ahead
of training although each request waits. Then --rounds rounds, alternating, of three ways to get
the same objects (every shard's .bin and .idx) through the same proxy:

  - a cold-cache epoch, timed from the loader's open (which starts the look-ahead) to its last
    batch: downloads to local disk, verified, published, and read into batches;
  - boto3 into memory: get_object(...)["Body"].read() from a pool of 8 threads. It lands no byte
    on disk and makes no batch, so it is an upper bound on what any download can do here;
    cold_cache_over_boto3 is the median ratio to it (the figure of earlier sessions);
  - boto3 to files: s3transfer's TransferManager (the code under boto3's download_fileobj and
    `aws s3 cp --recursive`) with 8 requests in flight, each object into its own file, sizes given
    (as the CLI has them from its LIST: no HEAD). This is the plain parallel download that does
    the cache's job, landing the bytes on local disk; cold_cache_over_boto3_files is the median
    ratio to it.

With --matrix (issue 30) it runs instead the shuffle matrix of the default options: --shuffle
global and block, 0 / 20 / 50 ms added to every request, a cache that holds the dataset and one
of a quarter of it (the dataset four times the cache): a cold first epoch (a fresh cache
directory, timed from the loader's open), the next 3 epochs of the same loader (the later
epochs), and a second run on the same directory (a new loader, timed from its open), against local
disk (the same loader on the local copy, its epochs after the first) and a boto3 parallel download
of the same bytes to local files (8 threads, through the same proxy).
first_epoch_vs_download_plus_local = (download s + local epoch s) / cold epoch s (the target is
>= 0.8); later_vs_local = later epochs' tokens/s / local tokens/s (the target is >= 0.9). Ranged reads
(global shuffle with a cache too small) are measured over their first --ranged-batches batches
(their GETs include those of the pieces the read-ahead fetched for up to 128 steps beyond),
not a whole epoch (an epoch at 50 ms a request would take minutes). The ranged rows run twice:
with the loader's read-ahead (its default) and without it (STOKER_READ_AHEAD_REQUESTS=0: each
worker's own request, one at a time), side by side, with the most .bin GETs in flight at the
proxy; --only-ranged runs those rows alone. Prints a markdown table and a JSON object:

  STOKER_CLI=build/stoker .venv/bin/python bench/cache_tiers.py --matrix [--mib 32] \
      [--shard-size 1MiB] [--ranged-batches 200] [--only-ranged]

Each round also gives the mean GETs in flight of the cache and of boto3 into memory (from the
proxy's request intervals). The S3 server is moto (Python, on loopback) and the proxy and boto3
run in this process, so they share its GIL with the loader's Python iteration and the same two
cores with moto: absolute figures are far below S3's; compare within one run. Prints one JSON
object; runs in well under a minute.

  STOKER_CLI=build/stoker .venv/bin/python bench/cache_tiers.py \\
      [--mib 64] [--shard-size 2MiB] [--latency-ms 20] [--train-tokens-per-s 1000000] [--rounds 3]
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))
from remote_testlib import (BUCKET, Proxy, max_in_flight, s3_env, start_moto,  # noqa: E402
                            upload_dir)
from storage_remote import corpus, epoch  # noqa: E402

CLI = os.environ.get("STOKER_CLI", "build/stoker")


def in_flight(intervals):
    """Mean requests in flight between the first request's start and the last one's end."""
    if not intervals:
        return 0.0
    busy = sum(b - a for a, b in intervals)
    span = max(b for _, b in intervals) - min(a for a, _ in intervals)
    return round(busy / span, 2) if span > 0 else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=64, help="dataset size (tokens as uint16)")
    ap.add_argument("--shard-size", default="2MiB")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--latency-ms", type=float, default=20)
    ap.add_argument("--rounds", type=int, default=3,
                    help="cold cache vs boto3 rounds (the median ratio is reported)")
    ap.add_argument("--train-tokens-per-s", type=float, default=1e6,
                    help="the stated training rate one rank must be fed at")
    ap.add_argument("--matrix", action="store_true",
                    help="the issue-30 matrix: shuffle x latency x cache size, cold and warm")
    ap.add_argument("--only-ranged", action="store_true",
                    help="--matrix: only global shuffle with the quarter cache (ranged reads), "
                         "with and without the loader's read-ahead")
    ap.add_argument("--ranged-batches", type=int, default=200,
                    help="--matrix: batches measured of a ranged-read (latency-bound) run")
    args = ap.parse_args()
    if args.matrix:
        return matrix(args)
    import stoker

    tmp = Path(tempfile.mkdtemp(prefix="stoker-bench-tiers-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "xdg")  # never the user's cache
    proc, s3 = start_moto(tmp)
    plain = Proxy(s3["port"])
    slow = Proxy(s3["port"], latency_s=args.latency_ms / 1000)
    out = {"dataset_mib": args.mib, "shard_size": args.shard_size, "workers": args.workers,
           "load_average": os.getloadavg()[0]}

    def use(proxy):
        for k, v in s3_env(s3, proxy.endpoint).items():
            if k.startswith("AWS_"):
                os.environ[k] = v

    try:
        corpus(tmp / "in.jsonl", args.mib)
        local = tmp / "local"
        r = subprocess.run([CLI, "pack", str(tmp / "in.jsonl"), "-o", str(local), "--shard-size",
                            args.shard_size], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(r.stderr)
        upload_dir(s3["client"], local, "tiers/ds")
        uri = f"s3://{BUCKET}/tiers/ds"
        manifest = json.loads((local / "manifest.json").read_text())
        keys = [s["prefix"] + e for s in manifest["shards"] for e in (".bin", ".idx")]
        total = sum((local / k).stat().st_size for k in keys)
        out["shards"] = len(manifest["shards"])
        out["dataset_bytes"] = total
        kw = dict(seq_len=2048, batch_size=8, num_workers=args.workers, pin_memory=False,
                  shuffle="block", persistent_workers=False)

        def run(name, source, **extra):
            loader = stoker.Loader(source, **kw, **extra)
            tokens, seconds = epoch(loader)
            out[f"{name}_tokens_per_s"] = round(tokens / seconds)
            out[f"{name}_bytes_per_s"] = round(total / seconds)
            if source == uri:
                st = loader.stats()["storage"]
                out[f"{name}_requests"] = dict(st["requests"], cache_hits=st["cache_hits"])
            return tokens / seconds

        use(plain)
        local_rate = run("local", str(local))
        run("s3_no_cache", uri, cache_dir=None)
        cache = tmp / "cache"
        cold = run("s3_cold_cache", uri, cache_dir=str(cache))
        warm = run("s3_warm_cache", uri, cache_dir=str(cache))
        out["warm_over_local"] = round(warm / local_rate, 3)
        out["cold_over_local"] = round(cold / local_rate, 3)

        import boto3

        direct = boto3.client("s3", endpoint_url=plain.endpoint, region_name="us-east-1",
                              aws_access_key_id=s3["key_id"], aws_secret_access_key=s3["secret"])

        def boto3_round():
            t0 = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                got = sum(pool.map(lambda k: len(direct.get_object(
                    Bucket=BUCKET, Key=f"tiers/ds/{k}")["Body"].read()), keys))
            assert got == total
            return total / (time.perf_counter() - t0)

        from s3transfer.manager import TransferConfig, TransferManager
        from s3transfer.subscribers import BaseSubscriber

        class KnownSize(BaseSubscriber):  # as the CLI's LIST gives it: no HEAD per object
            def __init__(self, size):
                self.size = size

            def on_queued(self, future, **kwargs):
                future.meta.provide_transfer_size(self.size)

        def boto3_files_round(r):
            dest = tmp / f"boto3-files-{r}"
            dest.mkdir()
            t0 = time.perf_counter()
            with TransferManager(direct, TransferConfig(max_request_concurrency=8)) as tm:
                futures = [tm.download(BUCKET, f"tiers/ds/{k}", str(dest / k.replace("/", "_")),
                                       subscribers=[KnownSize((local / k).stat().st_size)])
                           for k in keys]
                for f in futures:
                    f.result()
            seconds = time.perf_counter() - t0
            assert sum(p.stat().st_size for p in dest.iterdir()) == total
            return total / seconds

        # Cold cache against boto3, alternating, each round on a fresh cache directory. The cold
        # loader is timed from its open (which starts the look-ahead) to the epoch's end; the
        # proxy's request intervals give the mean number of GETs in flight of each.
        rounds = []
        for r in range(args.rounds):
            plain.reset_counts()
            t0 = time.perf_counter()
            loader = stoker.Loader(uri, **kw, cache_dir=str(tmp / f"cache-round-{r}"))
            epoch(loader)
            cold_s = time.perf_counter() - t0
            cold_flight = in_flight(plain.intervals)
            del loader
            plain.reset_counts()
            boto_bps = boto3_round()
            boto_flight = in_flight(plain.intervals)
            files_bps = boto3_files_round(r)
            rounds.append({"cold_cache_bytes_per_s": round(total / cold_s),
                           "boto3_bytes_per_s": round(boto_bps),
                           "boto3_files_bytes_per_s": round(files_bps),
                           "ratio": round(total / cold_s / boto_bps, 3),
                           "ratio_files": round(total / cold_s / files_bps, 3),
                           "cold_cache_gets_in_flight": cold_flight,
                           "boto3_gets_in_flight": boto_flight,
                           "load_average": os.getloadavg()[0]})
        out["cold_vs_boto3_rounds"] = rounds
        out["boto3_8_threads_bytes_per_s"] = rounds[-1]["boto3_bytes_per_s"]
        out["cold_cache_over_boto3"] = sorted(r["ratio"] for r in rounds)[len(rounds) // 2]
        out["cold_cache_over_boto3_files"] = sorted(
            r["ratio_files"] for r in rounds)[len(rounds) // 2]

        # Latency on every request: cold cache (look-ahead in plan order) and no cache.
        use(slow)
        rate = args.train_tokens_per_s
        out["latency_ms"] = args.latency_ms
        out["train_tokens_per_s"] = rate
        lat_cold = run("latency_cold_cache", uri, cache_dir=str(tmp / "cache-latency"))
        lat_none = run("latency_no_cache", uri, cache_dir=None)
        out["latency_cold_cache_over_training_rate"] = round(lat_cold / rate, 2)
        out["latency_no_cache_over_training_rate"] = round(lat_none / rate, 2)
        out["load_average_end"] = os.getloadavg()[0]
    finally:
        plain.close()
        slow.close()
        proc.kill()
        proc.wait()
        s3["log"].close()
    print(json.dumps(out, indent=1))


def limited_epoch(loader, max_batches=None):
    """(tokens, seconds, batches) of one epoch, or of its first max_batches batches."""
    t0 = time.perf_counter()
    tokens = batches = 0
    for b in loader:
        tokens += b["input_ids"].numel()
        batches += 1
        if max_batches is not None and batches >= max_batches:
            break
    return tokens, time.perf_counter() - t0, batches


LATER_EPOCHS = 3  # the later epochs measured together (one epoch of the matrix is ~0.05 s locally)


def later_epochs_rate(loader, epochs, max_batches=None):
    """tokens/s over the next `epochs` epochs of an open loader (each cut at max_batches)."""
    tokens = seconds = 0
    for _ in range(epochs):
        t, s, _ = limited_epoch(loader, max_batches)
        tokens += t
        seconds += s
    return tokens / seconds


def matrix(args):
    import stoker
    import boto3

    tmp = Path(tempfile.mkdtemp(prefix="stoker-bench-matrix-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "xdg")  # never the user's cache
    proc, s3 = start_moto(tmp)
    proxies = {}
    mib = args.mib if args.mib != 64 else 32  # the matrix's default size
    shard_size = args.shard_size if args.shard_size != "2MiB" else "1MiB"
    out = {"dataset_mib": mib, "shard_size": shard_size, "workers": args.workers,
           "load_average": os.getloadavg()[0], "rows": []}
    try:
        corpus(tmp / "in.jsonl", mib)
        local = tmp / "local"
        r = subprocess.run([CLI, "pack", str(tmp / "in.jsonl"), "-o", str(local), "--shard-size",
                            shard_size], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(r.stderr)
        upload_dir(s3["client"], local, "matrix/ds")
        uri = f"s3://{BUCKET}/matrix/ds"
        manifest = json.loads((local / "manifest.json").read_text())
        keys = [s["prefix"] + e for s in manifest["shards"] for e in (".bin", ".idx")]
        sizes = {k: (local / k).stat().st_size for k in keys}
        total = sum(sizes.values())
        out["shards"] = len(manifest["shards"])
        out["dataset_bytes"] = total
        caches = {"fits": 2 * total, "quarter": total // 4}
        out["cache_bytes"] = caches
        base = dict(seq_len=2048, batch_size=8, num_workers=args.workers, pin_memory=False,
                    persistent_workers=False)
        local_rate = {}
        for shuffle in ("global", "block"):
            rates = []
            for _ in range(3):
                loader = stoker.Loader(str(local), shuffle=shuffle, **base)
                epoch_tokens, _, _ = limited_epoch(loader)  # the first: pages cached
                rates.append(later_epochs_rate(loader, LATER_EPOCHS))
            local_rate[shuffle] = sorted(rates)[1]
            out[f"local_{shuffle}_tokens_per_s"] = round(local_rate[shuffle])
        for latency_ms in (0, 20, 50):
            proxy = proxies[latency_ms] = Proxy(s3["port"], latency_s=latency_ms / 1000)
            for k, v in s3_env(s3, proxy.endpoint).items():
                if k.startswith("AWS_"):
                    os.environ[k] = v
            client = boto3.client("s3", endpoint_url=proxy.endpoint, region_name="us-east-1",
                                  aws_access_key_id=s3["key_id"],
                                  aws_secret_access_key=s3["secret"])
            dest = tmp / f"boto3-{latency_ms}"
            dest.mkdir()

            def fetch(k, client=client, dest=dest):
                body = client.get_object(Bucket=BUCKET, Key=f"matrix/ds/{k}")["Body"].read()
                (dest / k.replace("/", "_")).write_bytes(body)
                return len(body)

            t0 = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                assert sum(pool.map(fetch, keys)) == total
            download_s = time.perf_counter() - t0
            out[f"boto3_download_s_{latency_ms}ms"] = round(download_s, 3)
            variants = [(s, c, True) for s in ("global", "block") for c in caches]
            # The ranged rows again without the read-ahead (STOKER_READ_AHEAD_REQUESTS=0): the
            # workers' own requests alone, one at a time each.
            variants.insert(2, ("global", "quarter", False))
            if args.only_ranged:
                variants = [v for v in variants if v[:2] == ("global", "quarter")]
            for shuffle, cache_name, read_ahead in variants:
                budget = caches[cache_name]
                local_s = epoch_tokens / local_rate[shuffle]
                cache_dir = tmp / f"cache-{latency_ms}-{shuffle}-{cache_name}-{read_ahead}"
                row = {"latency_ms": latency_ms, "shuffle": shuffle, "cache": cache_name}
                if read_ahead:
                    os.environ.pop("STOKER_READ_AHEAD_REQUESTS", None)
                else:
                    os.environ["STOKER_READ_AHEAD_REQUESTS"] = "0"

                def open_loader():
                    return stoker.Loader(uri, shuffle=shuffle, cache_dir=str(cache_dir),
                                         cache_size=str(budget), **base)

                # Cold: a fresh cache directory, from the open to the first epoch's end.
                proxy.reset_counts()
                t0 = time.perf_counter()
                loader = open_loader()
                ranged = loader.stats()["storage"]["ranged_datasets"] > 0
                limit = args.ranged_batches if ranged else None
                tokens, _, batches = limited_epoch(loader, limit)
                rate = tokens / (time.perf_counter() - t0)
                row["mode"] = ("whole shards" if not ranged
                               else "ranged" if read_ahead else "ranged, no read-ahead")
                row["cold_tokens_per_s"] = round(rate)
                row["cold_batches"] = batches
                row["cold_gets_per_batch"] = round(proxy.counts["GET"] / batches, 2)
                row["cold_max_gets_in_flight"] = max_in_flight(
                    [i for i in proxy.get_intervals if i[2].endswith(".bin")])
                row["cold_full_epoch"] = limit is None
                row["first_epoch_vs_download_plus_local"] = round(
                    (download_s + local_s) * rate / epoch_tokens, 3)
                # Later epochs of the same loader (what the "later epochs" are).
                proxy.reset_counts()
                later = later_epochs_rate(loader, LATER_EPOCHS, limit)
                row["later_tokens_per_s"] = round(later)
                row["later_gets_per_batch"] = round(
                    proxy.counts["GET"] / (LATER_EPOCHS * batches), 2)
                row["later_vs_local"] = round(later / local_rate[shuffle], 3)
                del loader
                # A second run on the same cache directory, from its open (requests at open
                # included: the manifest and length index are not cached).
                proxy.reset_counts()
                t0 = time.perf_counter()
                tokens, _, batches = limited_epoch(open_loader(), limit)
                row["second_run_tokens_per_s"] = round(tokens / (time.perf_counter() - t0))
                row["second_run_gets_per_batch"] = round(proxy.counts["GET"] / batches, 2)
                out["rows"].append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
            os.environ.pop("STOKER_READ_AHEAD_REQUESTS", None)
        out["load_average_end"] = os.getloadavg()[0]
    finally:
        for p in proxies.values():
            p.close()
        proc.kill()
        proc.wait()
        s3["log"].close()
    print("| latency | shuffle | cache | mode | cold tokens/s | cold GETs/batch | "
          "most .bin GETs in flight | cold vs download + local | later epochs tokens/s | "
          "later GETs/batch | later vs local | second run tokens/s |")
    print("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in out["rows"]:
        part = "" if r["cold_full_epoch"] else f" (first {r['cold_batches']} batches)"
        print(f"| {r['latency_ms']} ms | {r['shuffle']} | {r['cache']} | {r['mode']} | "
              f"{r['cold_tokens_per_s'] / 1e6:.2f} M{part} | {r['cold_gets_per_batch']} | "
              f"{r['cold_max_gets_in_flight']} | {r['first_epoch_vs_download_plus_local']} | "
              f"{r['later_tokens_per_s'] / 1e6:.2f} M | {r['later_gets_per_batch']} | "
              f"{r['later_vs_local']} | {r['second_run_tokens_per_s'] / 1e6:.2f} M |")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
