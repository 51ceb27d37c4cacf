"""Cold-cache ShardCache throughput against a plain parallel download of the same bytes.

Starts a local moto S3 server, uploads OBJECTS objects of SIZE_MIB MiB each, then alternately
(ROUNDS times): downloads them all with boto3 from a thread pool of THREADS workers into files,
and runs build/cache_benchmark (a cold ShardCache with THREADS download threads, then a warm one).
Prints each figure and the cold/boto3 ratio (issue 11's target: >= 0.8).

  .venv/bin/python bench/cache_vs_boto3.py [--objects 8] [--size-mib 8] [--threads 4]
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3

ROOT = Path(__file__).resolve().parent.parent
BUCKET = "bench"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def boto3_download(client, keys, out_dir, threads):
    def one(key):
        body = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        (out_dir / key.replace("/", "_")).write_bytes(body)
        return len(body)

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(one, keys))
    return total, time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=8)
    ap.add_argument("--size-mib", type=int, default=8)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--fsync", action="store_true",
                    help="fdatasync each object before its rename (the default publishes it "
                         "unsynced, tagged with the boot id: src/cache/README.md)")
    ap.add_argument("--binary", default=str(ROOT / "build" / "bench" / "cache_benchmark"))
    args = ap.parse_args()

    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    work = Path(tempfile.mkdtemp(prefix="stoker-cache-bench-"))
    moto = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(os.environ, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id="bench", aws_secret_access_key="bench")
        client.create_bucket(Bucket=BUCKET)
        keys = [f"data/shard_{i:03d}.bin" for i in range(args.objects)]
        for key in keys:
            client.put_object(Bucket=BUCKET, Key=key, Body=os.urandom(args.size_mib << 20))
        for r in range(args.rounds):
            out = work / f"boto3-{r}"
            out.mkdir()
            total, boto_s = boto3_download(client, keys, out, args.threads)
            shutil.rmtree(out)
            cache_dir = work / f"cache-{r}"
            res = subprocess.run([args.binary, f"s3://{BUCKET}/data/", str(cache_dir),
                                  "--threads", str(args.threads)] + (["--fsync"] if args.fsync else []), env=env, capture_output=True,
                                 text=True, check=True)
            shutil.rmtree(cache_dir)
            fig = json.loads(res.stdout)
            boto_mbps = total / boto_s / 1e6
            print(json.dumps({"round": r, "boto3_MBps": round(boto_mbps, 1), **fig,
                              "cold_vs_boto3": round(fig["cold_MBps"] / boto_mbps, 2)}))
    finally:
        moto.kill()
        moto.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
