"""Remote datasets side by side (issue 11): loader throughput from a local S3 server (moto, behind
a counting proxy) against the same data on local disk; the loader's cold read of the whole
dataset against a plain boto3 thread-pool download of the same bytes; and the requests one rank
makes at start-up (open, plan, first batch) on a 10,000-shard dataset for 1, 8 and 64 simulated
ranks. Prints one JSON object; see bench/RESULTS.md.

  STOKER_CLI=build/stoker .venv/bin/python bench/storage_remote.py [--mib 128] [--shards 10000]

moto is a Python server: its absolute throughput is far below S3's, which is why every figure is a
ratio against another client of the same server in the same run."""

import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))
from remote_testlib import BUCKET, Proxy, s3_env, start_moto  # noqa: E402

CLI = os.environ.get("STOKER_CLI", "build/stoker")


def sh(env, *args):
    r = subprocess.run([CLI, *map(str, args)], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{args}: {r.stderr}")
    return r.stdout


def corpus(path, mib, seed=1):
    rng = random.Random(seed)
    words = [bytes(rng.randrange(97, 123) for _ in range(rng.randint(2, 9))).decode()
             for _ in range(5000)]
    with open(path, "w") as f:
        size = 0
        while size < mib << 19:  # bytes tokenizer: one uint16 token per byte, so mib/2 of text
            line = json.dumps({"text": " ".join(rng.choices(words, k=rng.randint(50, 900)))})
            f.write(line + "\n")
            size += len(line)


def epoch(loader):
    t0 = time.perf_counter()
    tokens = 0
    for b in loader:
        tokens += b["input_ids"].numel()
    return tokens, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=128, help="dataset size")
    ap.add_argument("--shards", type=int, default=10000, help="shards of the start-up dataset")
    ap.add_argument("--workers", type=int, default=4)
    args = ap.parse_args()
    import stoker

    tmp = Path(tempfile.mkdtemp(prefix="stoker-bench-remote-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "xdg")  # the default cache: never the user's
    proc, s3 = start_moto(tmp)
    proxy = Proxy(s3["port"])
    env = s3_env(s3, proxy.endpoint)
    os.environ.update({k: v for k, v in env.items() if k.startswith("AWS_")})
    out = {"dataset_mib": args.mib, "workers": args.workers}
    try:
        corpus(tmp / "in.jsonl", args.mib)
        local = tmp / "local"
        sh(env, "pack", tmp / "in.jsonl", "-o", local, "--shard-size", "16MiB")
        uri = f"s3://{BUCKET}/bench/ds"
        t0 = time.perf_counter()
        sh(env, "pack", tmp / "in.jsonl", "-o", uri, "--shard-size", "16MiB")
        out["pack_to_s3_s"] = round(time.perf_counter() - t0, 2)
        manifest = json.loads((local / "manifest.json").read_text())
        keys = [s["prefix"] + e for s in manifest["shards"] for e in (".bin", ".idx")]
        total = sum((local / k).stat().st_size for k in keys)
        out["dataset_bytes"] = total

        # 1. Loader throughput, block shuffle, one epoch: local disk (page cache) vs S3 through
        # a cold cache (bench/cache_tiers.py: warm, no cache, latency).
        kw = dict(seq_len=2048, batch_size=8, num_workers=args.workers, pin_memory=False,
                  shuffle="block")
        lt, ls = epoch(stoker.Loader(str(local), **kw))
        proxy.reset_counts()
        remote = stoker.Loader(uri, cache_dir=str(tmp / "cache"), **kw)  # cold
        rt, rs = epoch(remote)
        assert lt == rt
        out["loader_local_tokens_per_s"] = round(lt / ls)
        out["loader_s3_cold_tokens_per_s"] = round(rt / rs)
        out["loader_s3_over_local"] = round((rt / rs) / (lt / ls), 3)
        out["loader_s3_bytes_per_s"] = round(total / rs)
        out["loader_s3_storage"] = remote.stats()["storage"]
        out["loader_s3_requests_at_proxy"] = dict(proxy.counts)

        # 2. The same bytes by boto3, a thread pool of 8 whole-object GETs.
        client = s3["client"].__class__  # noqa: F841  (same server, direct, no proxy in front)
        import boto3

        direct = boto3.client("s3", endpoint_url=proxy.endpoint, region_name="us-east-1",
                              aws_access_key_id=s3["key_id"],
                              aws_secret_access_key=s3["secret"])
        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            got = sum(pool.map(lambda k: len(direct.get_object(
                Bucket=BUCKET, Key=f"bench/ds/{k}")["Body"].read()), keys))
        bs = time.perf_counter() - t0
        assert got == total
        out["boto3_8_threads_bytes_per_s"] = round(total / bs)
        out["loader_cold_over_boto3"] = round((total / rs) / (total / bs), 3)

        # 3. Start-up requests per rank on a many-shard dataset.
        with open(tmp / "many.jsonl", "w") as f:
            for i in range(args.shards):
                f.write(json.dumps({"text": f"doc {i} " + "y" * 1100}) + "\n")
        many = tmp / "many"
        sh(env, "pack", tmp / "many.jsonl", "-o", many, "--shard-size", "1KiB", "--threads", "2")
        m = json.loads((many / "manifest.json").read_text())
        out["startup_shards"] = len(m["shards"])
        t0 = time.perf_counter()
        names = ["lengths.stkidx"] + [s["prefix"] + e for s in m["shards"]
                                      for e in (".bin", ".idx")]
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda n: s3["client"].upload_file(
                str(many / n), BUCKET, f"many/ds/{n}"), names))
        s3["client"].upload_file(str(many / "manifest.json"), BUCKET, "many/ds/manifest.json")
        out["startup_upload_s"] = round(time.perf_counter() - t0, 1)
        per_world = {}
        for world in (1, 8, 64):
            ranks = sorted({0, world // 2, world - 1})
            counts = []
            for rank in ranks:
                proxy.reset_counts()
                j = json.loads(sh(env, "bench", f"s3://{BUCKET}/many/ds", "--seq-len", 256,
                                  "--batch-size", 2, "--batches", 1, "--warmup-batches", 1,
                                  "--shuffle", "block", "--world-size", world, "--rank", rank,
                                  "--workers", 2, "--json"))
                counts.append({"rank": rank, "at_proxy": dict(proxy.counts),
                               "metered": j["storage"]["requests"]})
            per_world[str(world)] = counts
        out["startup_requests_per_rank"] = per_world
    finally:
        proxy.close()
        proc.kill()
        proc.wait()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
