"""The cost of stoker.metrics in the loader (issue 47): tokens/s with metrics on and off, side by
side. Each round times STEPS steps of a loader without metrics and of the same loader with
``metrics=stoker.metrics.Callback(...)`` (every ``--every`` steps, the default 100), in
alternating order, after a warm-up; prints each round's two rates and the ratio on/off, and the
median ratio (target: >= 0.98, within 2%). Wall-clock rates swing by 2x between rounds on a shared
machine, so each round also measures CPU, which the load inflates far less:
- the **process CPU per delivered token** (time.process_time(): every thread of the process, the
  workers that count each piece's tokens per source and the consumer that reads the windows),
  on and off, and their ratio on/off per round: the cost of metrics as a share of the loader's
  own work (target: <= 1.02);
- the CPU the consumer thread spends per step with and without (time.thread_time()).
Prints the median and the spread (min, quartiles, max) of the per-round ratios. With
``--instructions``, instead: the instructions the whole process executes per delivered token, on
and off, counted by valgrind (callgrind) in child processes that deliver SHORT and LONG steps
each (the difference cancels the start-up): not inflated by the load at all. Two Megatron
datasets (bench_data.py) mixed 3:1, seq 2048, batch 8, page cache, NumPy output. Not a test.

  .venv/bin/python bench/metrics_overhead.py [--rounds 21] [--steps 2000] [--every 100]
  .venv/bin/python bench/metrics_overhead.py --instructions [--short 100] [--long 600]
"""
import argparse
import os
import re
import statistics
import subprocess
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
    tokens, t0, c0, p0 = 0, time.perf_counter(), time.thread_time(), time.process_time()
    for _ in range(steps):
        b = next(it)
        tokens += b["input_ids"].size
        del b
    cpu_us = (time.thread_time() - c0) / steps * 1e6  # the consumer (this) thread's CPU per step
    process_ns = (time.process_time() - p0) / tokens * 1e9  # every thread's CPU per token
    return tokens / (time.perf_counter() - t0), cpu_us, process_ns


def spread(values):
    """'median M (min A, quartiles Q1-Q3, max B)' of `values`."""
    q = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
    return (f"median {statistics.median(values):.3f} (min {min(values):.3f}, quartiles "
            f"{q[0]:.3f}-{q[2]:.3f}, max {max(values):.3f})")


def child(args, web, code, kw):
    """--child on|off: delivers --steps steps after the warm-up, nothing else (under valgrind)."""
    import stoker

    on = args.child == "on"
    windows = []
    extra = dict(metrics=lambda s, m: windows.append(m), metrics_every=args.every) if on else {}
    loader = stoker.Loader([(3.0, web), (1.0, code)], **kw, **extra)
    rate(loader, args.steps)
    loader.close()


def instructions(args):
    """Instructions per delivered token, on and off: callgrind's total of a LONG run less a SHORT
    one (the same start-up), over the tokens of the steps between."""
    tokens = (args.long - args.short) * 2048 * 8
    # NumPy's OpenBLAS threads spin after start-up by a count that changes from run to run under
    # valgrind (5.3 M instructions in blas_thread_server in a metrics-on run, none in the off one,
    # though nothing here calls BLAS): one BLAS thread, so the count is the loader's.
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    got = {}
    for on in ("off", "on"):
        counts = []
        for steps in (args.short, args.long):
            p = subprocess.run(
                ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                 __file__, "--child", on, "--steps", str(steps), "--every", str(args.every),
                 "--workers", str(args.workers)],
                capture_output=True, text=True, check=True, env=env)
            counts.append(int(re.search(r"Collected : (\d+)", p.stderr).group(1)))
        got[on] = (counts[1] - counts[0]) / tokens
        print(f"metrics {on}: {counts[0]:,} instructions for {args.short} steps, {counts[1]:,} for "
              f"{args.long}: {got[on]:.2f} per token")
    print(f"instructions per token on/off: {got['on'] / got['off']:.4f} (target <= 1.02)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--instructions", action="store_true")
    ap.add_argument("--short", type=int, default=100)
    ap.add_argument("--long", type=int, default=600)
    ap.add_argument("--child", choices=("on", "off"))
    args = ap.parse_args()
    if args.instructions:
        return instructions(args)
    import stoker

    root = Path(os.environ.get("STOKER_BENCH_DATA", tempfile.gettempdir())) / "stoker-metrics-bench"
    web, code = str(root / "web" / "data"), str(root / "code" / "data")
    write_megatron(web, 60_000_000, seed=1)
    write_megatron(code, 20_000_000, seed=2)
    windows = []
    kw = dict(seq_len=2048, batch_size=8, num_workers=args.workers, pin_memory=False,
              output="numpy", seed=7)
    if args.child:
        return child(args, web, code, kw)
    print(f"metrics_overhead: {args.rounds} rounds of {args.steps} steps, metrics every "
          f"{args.every}, load average {os.getloadavg()[0]:.2f}")
    ratios, extra_cpu, cpu_ratios = [], [], []
    for r in range(args.rounds):
        rates, cpu, per_token = {}, {}, {}
        for on in ((False, True) if r % 2 == 0 else (True, False)):
            extra = dict(metrics=lambda s, m: windows.append(m), metrics_every=args.every) if on \
                else {}
            loader = stoker.Loader([(3.0, web), (1.0, code)], **kw, **extra)
            rates[on], cpu[on], per_token[on] = rate(loader, args.steps)
            loader.close()
        ratios.append(rates[True] / rates[False])
        extra_cpu.append(cpu[True] - cpu[False])
        cpu_ratios.append(per_token[True] / per_token[False])
        print(f"round {r}: off {rates[False] / 1e6:.1f} M tokens/s, on {rates[True] / 1e6:.1f} "
              f"M tokens/s, on/off {ratios[-1]:.3f}; process CPU per token off "
              f"{per_token[False]:.2f} ns, on {per_token[True]:.2f} ns, on/off "
              f"{cpu_ratios[-1]:.3f}; consumer CPU per step off {cpu[False]:.1f} us, on "
              f"{cpu[True]:.1f} us")
    print(f"tokens/s on/off: {spread(ratios)}")
    print(f"process CPU per token on/off: {spread(cpu_ratios)} (target <= 1.02)")
    print(f"consumer CPU added per step: median {statistics.median(extra_cpu):.2f} us; windows "
          f"written: {len(windows)}; load average {os.getloadavg()[0]:.2f}")

if __name__ == "__main__":
    main()
