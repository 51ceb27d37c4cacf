"""Later epochs of a cached remote dataset against the same dataset on local disk (issue 30).

A global-shuffle loader over an s3:// dataset (moto on loopback) whose cache holds all of it reads
its first epoch through downloads and every later epoch from the cache's copy. This runs ROUNDS
rounds, each a local loader and then a cached remote one, each with one warm-up epoch and then
EPOCHS epochs timed, and prints per round the two rates and their ratio, and the median ratio
(the issue's target: later epochs within 10% of local disk, a ratio >= 0.9). A fresh cache
directory per round. Not a test.

  STOKER_CLI=build/stoker .venv/bin/python bench/later_epochs.py [--mib 64] [--rounds 9] [--epochs 8]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cache_tiers as tiers  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=64, help="dataset size (tokens as uint16)")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--epochs", type=int, default=8, help="epochs timed per loader")
    args = ap.parse_args()
    import stoker

    tmp = Path(tempfile.mkdtemp(prefix="stoker-bench-later-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "xdg")  # never the user's cache
    proc, s3 = tiers.start_moto(tmp)
    try:
        tiers.corpus(tmp / "in.jsonl", args.mib)
        local = tmp / "local"
        subprocess.run([tiers.CLI, "pack", str(tmp / "in.jsonl"), "-o", str(local),
                        "--shard-size", "1MiB"], check=True, capture_output=True)
        tiers.upload_dir(s3["client"], local, "later/ds")
        for k, v in tiers.s3_env(s3, s3["endpoint"]).items():
            if k.startswith("AWS_"):
                os.environ[k] = v
        uri = f"s3://{tiers.BUCKET}/later/ds"
        kw = dict(seq_len=2048, batch_size=8, num_workers=4, pin_memory=False, shuffle="global",
                  persistent_workers=False)
        print(f"later_epochs: {args.mib} MiB, {args.rounds} rounds of {args.epochs} epochs, "
              f"load average {os.getloadavg()[0]:.2f}")
        ratios = []
        for r in range(args.rounds):
            local_loader = stoker.Loader(str(local), **kw)
            tiers.limited_epoch(local_loader)
            local_rate = tiers.later_epochs_rate(local_loader, args.epochs)
            remote = stoker.Loader(uri, cache_dir=str(tmp / f"cache-{r}"), cache_size="4GiB", **kw)
            tiers.limited_epoch(remote)
            remote_rate = tiers.later_epochs_rate(remote, args.epochs)
            storage = remote.stats()["storage"]
            if storage["whole_shard_datasets"] != 1:
                raise SystemExit(f"the cache did not hold the dataset whole: {storage}")
            ratios.append(remote_rate / local_rate)
            print(f"round {r}: local {local_rate / 1e6:.0f} M tokens/s, cached remote "
                  f"{remote_rate / 1e6:.0f} M, ratio {ratios[-1]:.3f}", flush=True)
        print(f"median ratio {statistics.median(ratios):.3f} "
              f"(range {min(ratios):.3f}-{max(ratios):.3f}); load average "
              f"{os.getloadavg()[0]:.2f}")
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
