"""The cost of stoker.metrics in the loader (issue 47): tokens/s with metrics on and off, side by
side. Each round times STEPS steps of a loader without metrics and of the same loader with
``metrics=stoker.metrics.Callback(...)`` (every ``--every`` steps, the default 100), in
alternating order, after a warm-up; prints each round's two rates and the ratio on/off, and the
median ratio (target: >= 0.98, within 2%), and the CPU the consumer thread spends per step with
and without (time.thread_time(): what metrics add to the training process's own thread, less
noisy than the rates on a shared machine). Two Megatron datasets (bench_data.py) mixed 3:1, seq
2048, batch 8, page cache, NumPy output. Not a test.

  .venv/bin/python bench/metrics_overhead.py [--rounds 11] [--steps 2000] [--every 100]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_data import write_megatron  # noqa: E402


def rate(loader, steps):
    it = iter(loader)
    for _ in range(20):  # warm-up: workers started, ring full
        next(it)
    tokens, t0, c0 = 0, time.perf_counter(), time.thread_time()
    for _ in range(steps):
        b = next(it)
        tokens += b["input_ids"].size
        del b
    cpu_us = (time.thread_time() - c0) / steps * 1e6  # the consumer (this) thread's CPU per step
    return tokens / (time.perf_counter() - t0), cpu_us


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    import stoker

    root = Path(os.environ.get("STOKER_BENCH_DATA", tempfile.gettempdir())) / "stoker-metrics-bench"
    web, code = str(root / "web" / "data"), str(root / "code" / "data")
    write_megatron(web, 60_000_000, seed=1)
    write_megatron(code, 20_000_000, seed=2)
    windows = []
    kw = dict(seq_len=2048, batch_size=8, num_workers=args.workers, pin_memory=False,
              output="numpy", seed=7)
    print(f"metrics_overhead: {args.rounds} rounds of {args.steps} steps, metrics every "
          f"{args.every}, load average {os.getloadavg()[0]:.2f}")
    ratios, extra_cpu = [], []
    for r in range(args.rounds):
        rates, cpu = {}, {}
        for on in ((False, True) if r % 2 == 0 else (True, False)):
            extra = dict(metrics=lambda s, m: windows.append(m), metrics_every=args.every) if on \
                else {}
            loader = stoker.Loader([(3.0, web), (1.0, code)], **kw, **extra)
            rates[on], cpu[on] = rate(loader, args.steps)
            loader.close()
        ratios.append(rates[True] / rates[False])
        extra_cpu.append(cpu[True] - cpu[False])
        print(f"round {r}: off {rates[False] / 1e6:.1f} M tokens/s, on {rates[True] / 1e6:.1f} "
              f"M tokens/s, on/off {ratios[-1]:.3f}; consumer CPU per step off "
              f"{cpu[False]:.1f} us, on {cpu[True]:.1f} us")
    print(f"median on/off {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max "
          f"{max(ratios):.3f}); consumer CPU added per step: median "
          f"{statistics.median(extra_cpu):.2f} us; windows written: {len(windows)}; load average "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
