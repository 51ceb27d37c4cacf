"""The GIL is released in every blocking call (a Python thread makes progress meanwhile), and
Ctrl-C during iteration stops cleanly."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import stoker
from test_py_data import datasets, write_jsonl  # noqa: F401


def steps_during(call):
    """How many steps a background Python thread takes while `call()` runs.

    The switch interval is made huge, so the main thread never loses the GIL by preemption: the
    background thread can run only while the main thread has released the GIL itself. A call that
    keeps the GIL therefore always yields 0.
    """
    counter = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0)  # gives the GIL back at once, so the main thread can return

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000)
    thread = threading.Thread(target=spin)
    thread.start()
    try:
        before = counter[0]
        result = call()
        return counter[0] - before, result
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)


def progresses(call, attempts=20):
    """True if the background thread moved during one of `attempts` calls."""
    return any(steps_during(call)[0] > 0 for _ in range(attempts))


def test_control_a_call_holding_the_gil_shows_no_progress():
    assert all(steps_during(lambda: sum(range(2_000_000)))[0] == 0 for _ in range(3))


def test_next_releases_the_gil(tmp_path):
    # Batches of 256k tokens from one worker: the consumer waits for nearly every batch.
    path = tmp_path / "big.npy"
    np.save(path, np.arange(400 * 10000, dtype=np.uint16).reshape(400, 10000) % 50000)
    loader = stoker.Loader(str(path), seq_len=8192, batch_size=32, num_workers=1,
                           prefetch_factor=1)
    its = [iter(loader)]

    def one():
        # Several batches back to back: the 2-slot ring is soon empty and next() must wait.
        for _ in range(4):
            b = next(its[0], None)
            if b is None:  # epoch end: the next iteration is the next epoch
                its[0] = iter(loader)
                b = next(its[0])
            del b

    assert progresses(one)


def test_open_pack_plan_and_verify_release_the_gil(datasets, tmp_path):
    src = tmp_path / "big.jsonl"
    write_jsonl(src, 3000, seed=5, alphabet="xyz", max_len=2000)
    counter = [0]

    def do_pack():
        counter[0] += 1
        return stoker.pack([src], tmp_path / f"out{counter[0]}", num_workers=1)

    assert progresses(do_pack, attempts=10)
    out = str(tmp_path / "out1")
    assert progresses(lambda: stoker.verify(out), attempts=30)
    # 200,000 short documents: reading lengths and planning take a while.
    many = tmp_path / "many.npy"
    np.save(many, np.ones((200_000, 2), np.uint16))
    assert progresses(lambda: stoker.Loader(str(many), seq_len=512, batch_size=2, pack="bestfit"),
                      attempts=20)
    assert progresses(lambda: stoker.plan(many, 512, 2, pack="bestfit"), attempts=20)


SCRIPT = textwrap.dedent("""
    import sys, stoker
    loader = stoker.Loader(sys.argv[1], seq_len=64, batch_size=4, num_workers=2)
    steps = 0
    try:
        while True:
            for batch in loader:
                steps += 1
                if steps == 50:
                    print("running", flush=True)
    except KeyboardInterrupt:
        print("interrupted after", steps, "steps; stats", loader.stats()["batches"], flush=True)
        loader.close()
        print("closed", flush=True)
        sys.exit(0)
""")


def interrupt_while_running(script, dataset):
    """Runs `script` over `dataset`, sends SIGINT once it prints "running"; (rc, out, err).

    The child starts as a terminal would start it, with SIGINT at its default disposition: a suite
    launched as a background job of a non-interactive shell (`cmd &` in a script) inherits SIGINT
    ignored, and Python then installs no KeyboardInterrupt handler in the child.
    """
    proc = subprocess.Popen([sys.executable, str(script), dataset], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "running"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err


def test_ctrl_c_during_iteration_stops_cleanly(datasets, tmp_path):
    script = tmp_path / "spin.py"
    script.write_text(SCRIPT)
    rc, out, err = interrupt_while_running(script, datasets["a"])
    assert rc == 0, err
    assert "interrupted after" in out and "closed" in out, (out, err)


def test_uncaught_ctrl_c_exits_with_keyboard_interrupt(datasets, tmp_path):
    script = tmp_path / "spin2.py"
    script.write_text(SCRIPT.replace("except KeyboardInterrupt", "except ZeroDivisionError"))
    rc, out, err = interrupt_while_running(script, datasets["a"])
    assert rc == -signal.SIGINT, err
    assert "KeyboardInterrupt" in err
    assert "Fatal" not in err and "terminate called" not in err
