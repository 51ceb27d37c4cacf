"""Helpers for the remote-dataset tests: a moto S3 server with IAM auth on (as in
test_storage_s3.py), credentials for it in an environment, and a proxy in front of it that
counts every request by kind and, when asked, misbehaves: 500s, 503 SlowDown, connections reset
unanswered, GET bodies cut short (with the full Content-Length promised), added latency."""

import collections
import http.client
import http.server
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time

BUCKET = "stoker-remote"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerLog(threading.Thread):
    """Copies a server's output, line by line, to `path`, and says when the server is ready: when
    a line holds `ready`, which the server writes once it listens (so nothing polls its port).
    close() waits for the copy to end (the caller has stopped the server)."""

    def __init__(self, proc, path, ready):
        super().__init__(daemon=True)
        self.proc, self.path, self.ready_text = proc, path, ready
        self.ready = False
        self.seen = threading.Event()  # the ready line, or the end of the output
        self.start()

    def run(self):
        with open(self.path, "w") as log:
            for line in self.proc.stdout:
                log.write(line)
                log.flush()
                if self.ready_text in line and not self.ready:
                    self.ready = True
                    self.seen.set()
        self.seen.set()

    def wait_ready(self, what):
        # The minute is a guard against a hang, not a guess at a start-up time.
        if not self.seen.wait(60) or not self.ready:
            self.proc.kill()
            self.proc.wait()
            self.join()
            raise RuntimeError(f"{what} did not start: {self.path.read_text()}")

    def close(self):
        self.join(60)


def start_server(cmd, log_path, ready, what, env=None):
    """Starts `cmd` with its output copied to `log_path`, and returns (proc, ServerLog) once the
    output holds `ready`."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace")
    log = ServerLog(proc, log_path, ready)
    log.wait_ready(what)
    return proc, log


def start_moto(log_dir):
    """Starts moto's server; returns (proc, info) with endpoint, boto3 client, key id, secret."""
    import boto3

    port = free_port()
    env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="3")
    # werkzeug writes "Running on" once its socket listens.
    proc, log = start_server(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        log_dir / "moto.log", f"Running on http://127.0.0.1:{port}", "moto server", env=env)
    endpoint = f"http://127.0.0.1:{port}"
    iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                       aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
    iam.create_user(UserName="stoker")
    iam.put_user_policy(UserName="stoker", PolicyName="s3", PolicyDocument=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    key = iam.create_access_key(UserName="stoker")["AccessKey"]
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id=key["AccessKeyId"],
                          aws_secret_access_key=key["SecretAccessKey"])
    client.create_bucket(Bucket=BUCKET)
    info = {"endpoint": endpoint, "port": port, "client": client, "key_id": key["AccessKeyId"],
            "secret": key["SecretAccessKey"], "log": log}
    return proc, info


def s3_env(s3, endpoint=None, base=None):
    """An environment with the credentials and `endpoint` (default: the server itself)."""
    env = {k: v for k, v in (base or os.environ).items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID=s3["key_id"], AWS_SECRET_ACCESS_KEY=s3["secret"],
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint or s3["endpoint"],
               AWS_SHARED_CREDENTIALS_FILE="/nonexistent", AWS_CONFIG_FILE="/nonexistent")
    return env


def run_cli(stoker_cli, s3, endpoint, *args, check=True):
    """The CLI with the credentials in its environment, against `endpoint`; the secret must never
    be printed."""
    proc = subprocess.run([stoker_cli, *map(str, args)], env=s3_env(s3, endpoint),
                          capture_output=True, text=True, timeout=300)
    assert s3["secret"] not in proc.stdout + proc.stderr
    if check:
        assert proc.returncode == 0, (args, proc.stderr)
    return proc


def pack_test_corpus(stoker_cli, s3, d, uri, documents, seed, min_shards):
    """Packs `documents` lines of "I xxxx..." (seeded lengths) into d/"local" and into `uri`
    (16 KiB shards, one thread) and returns the local manifest; asserts at least `min_shards`."""
    rng = random.Random(seed)
    with open(d / "in.jsonl", "w") as f:
        for i in range(documents):
            f.write(json.dumps({"text": f"{i} " + "abcdefgh"[i % 8] * rng.randint(5, 400)}) + "\n")
    for out in (d / "local", uri):
        run_cli(stoker_cli, s3, s3["endpoint"], "pack", d / "in.jsonl", "-o", out,
                "--shard-size", "16KiB", "--num-workers", "1")
    manifest = json.loads((d / "local" / "manifest.json").read_text())
    assert len(manifest["shards"]) >= min_shards
    return manifest


def proxy_in_env(s3, monkeypatch, **proxy_options):
    """A counting Proxy in front of the server, its endpoint and the credentials set in this
    process's environment (the CLI and the Python module inherit them). The caller closes it."""
    proxy = Proxy(s3["port"], **proxy_options)
    for k, v in s3_env(s3, proxy.endpoint).items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    return proxy


def max_in_flight(intervals):
    """The most (start, end, ...) intervals that overlap at one time."""
    events = sorted([(i[0], 1) for i in intervals] + [(i[1], -1) for i in intervals])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def upload_dir(client, local_dir, prefix, only=None):
    """Uploads every file under local_dir (or the relative names in `only`) to BUCKET/prefix."""
    names = only if only is not None else [
        os.path.relpath(os.path.join(r, f), local_dir)
        for r, _, fs in os.walk(local_dir) for f in fs]
    for name in names:
        client.upload_file(os.path.join(local_dir, name), BUCKET, f"{prefix}/{name}")


class Proxy:
    """A counting, optionally faulty HTTP proxy in front of `upstream_port`. Each request draws
    one of: pass, 500, 503 SlowDown, reset, truncated body, with the given probabilities
    (seeded); `latency_s` is added to every request. Signed requests pass unchanged. GETs whose
    path contains `stall` are read and then never answered (a server that hangs) until close();
    `stalled` counts them."""

    def __init__(self, upstream_port, fail=0.0, slowdown=0.0, reset=0.0, truncate=0.0,
                 latency_s=0.0, seed=0, stall=None):
        self.counts = collections.Counter()  # GET, HEAD, LIST, PUT, POST, DELETE
        self.faults = collections.Counter()
        self.paths = collections.Counter()  # every request, by path
        self.get_paths = collections.Counter()  # GETs (not LIST), by path
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # notified when `stalled` grows
        self.stalled = 0
        self.intervals = []  # (start, end) of every answered request, time.monotonic()
        self.get_intervals = []  # (start, end, path) of every GET answered whole
        self.get_bytes = 0  # body bytes of the GET answers sent whole
        self.closing = threading.Event()
        rng = random.Random(seed)
        proxy = self

        def draw():
            with proxy.lock:
                x = rng.random()
            for name, p in (("fail", fail), ("slowdown", slowdown), ("reset", reset),
                            ("truncate", truncate)):
                if x < p:
                    return name
                x -= p
            return "pass"

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # The headers and the body go out in two writes: with Nagle on, a small body waits
            # for the client's delayed ACK of the headers (40 ms per small GET on Linux).
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def handle(self):
                try:
                    super().handle()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on the answer (a loader closed mid-transfer)

            def handle_any(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                kind = self.command
                if kind == "GET" and "list-type=2" in self.path:
                    kind = "LIST"
                fault = draw()
                started = time.monotonic()
                with proxy.lock:
                    proxy.counts[kind] += 1
                    proxy.paths[self.path.split("?")[0]] += 1
                    if kind == "GET":
                        proxy.get_paths[self.path.split("?")[0]] += 1
                    if fault != "pass":
                        proxy.faults[fault] += 1
                if stall is not None and kind == "GET" and stall in self.path:
                    with proxy.lock:
                        proxy.stalled += 1
                        proxy.changed.notify_all()
                    proxy.closing.wait()
                    self.close_connection = True
                    return
                if latency_s:
                    time.sleep(latency_s)
                if fault in ("fail", "slowdown"):
                    code, text = ((500, b"InternalError") if fault == "fail"
                                  else (503, b"SlowDown"))
                    err = (b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>" + text +
                           b"</Code><Message>injected</Message></Error>")
                    self.send_response(code)
                    self.send_header("Content-Length", str(len(err)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(err)
                    return
                if fault == "reset" or (fault == "truncate" and self.command != "GET"):
                    self.close_connection = True
                    return
                conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
                conn.request(self.command, self.path, body=body or None,
                             headers={k: v for k, v in self.headers.items()})
                r = conn.getresponse()
                data = r.read()
                conn.close()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                length = int(r.getheader("Content-Length", len(data)) or 0)
                self.send_header("Content-Length",
                                 str(length if self.command == "HEAD" else len(data)))
                self.end_headers()
                if self.command == "HEAD":
                    return
                if fault == "truncate" and len(data) > 1:
                    self.wfile.write(data[: len(data) // 2])
                    self.close_connection = True
                    return
                if self.command == "GET":  # counted first: the client may see the body at once
                    with proxy.lock:
                        proxy.get_bytes += len(data)
                self.wfile.write(data)
                with proxy.lock:
                    ended = time.monotonic()
                    proxy.intervals.append((started, ended))
                    if self.command == "GET":
                        proxy.get_intervals.append((started, ended, self.path.split("?")[0]))

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

        class Server(http.server.ThreadingHTTPServer):
            # Python's default backlog is 5: a burst of new connections (a cache's download
            # threads and a loader's workers at once) overflows it, and each dropped SYN costs
            # the client a 1 s retransmission.
            request_queue_size = 128

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reset_counts(self):
        with self.lock:
            self.counts.clear()
            self.faults.clear()
            self.paths.clear()
            self.get_paths.clear()
            self.intervals.clear()
            self.get_intervals.clear()
            self.get_bytes = 0

    def wait_stalled(self, more_than, timeout):
        """Waits until more than `more_than` GETs are stalled; False after `timeout` seconds."""
        with self.lock:
            return self.changed.wait_for(lambda: self.stalled > more_than, timeout)

    def close(self):
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()


def start_nginx(d):
    """nginx serving d/www (which the caller fills, before or after) on a free port, with its
    access log in d/access.log and its error log in d/error.log; returns (proc, base url)."""
    import shutil
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        return None, None
    (d / "www").mkdir(exist_ok=True)
    port = free_port()
    user = "user root;" if os.geteuid() == 0 else ""
    (d / "nginx.conf").write_text(f"""
daemon off; master_process off; worker_processes 1; {user}
pid {d}/nginx.pid; error_log stderr notice;
events {{ worker_connections 64; }}
http {{
  access_log {d}/access.log;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{ listen 127.0.0.1:{port}; root {d}/www; }}
}}
""")
    proc, _ = start_nginx_conf(nginx, d)
    return proc, f"http://127.0.0.1:{port}"


def start_nginx_conf(nginx, d):
    """Starts `nginx` with d/nginx.conf (which logs errors to stderr at level notice); returns
    (proc, ServerLog) once it listens. Its log goes to d/error.log."""
    # nginx logs its getrlimit notice after it has opened its listening sockets.
    return start_server([nginx, "-c", str(d / "nginx.conf"), "-p", str(d)], d / "error.log",
                        "getrlimit(RLIMIT_NOFILE)", "nginx")


# One server of each kind per test session. pytest makes a separate fixture of a session-scoped
# fixture for every module that imports it (`from remote_testlib import s3_session`): each would
# start its own server. They share this one instead, stopped when the last of them is torn down.
_SHARED = {}  # kind -> [fixtures using it, value, stop]


def _shared_server(kind, start):
    """A generator for a session fixture: yields the one server of `kind`, started by
    `start()` -> (value, stop) the first time."""
    entry = _SHARED.get(kind)
    if entry is None:
        entry = _SHARED[kind] = [0, *start()]
    entry[0] += 1
    try:
        yield entry[1]
    finally:
        entry[0] -= 1
        if entry[0] == 0:
            del _SHARED[kind]
            entry[2]()


def _stop(proc, *files):
    def stop():
        if proc is not None:
            proc.kill()
            proc.wait()
        for f in files:
            f.close()
    return stop


def moto_session_fixture():
    """A session-scoped pytest fixture: one moto server for every test module that imports it
    (`from remote_testlib import s3_session`). Modules share it: each keeps to its own prefixes
    of BUCKET."""
    import pytest

    @pytest.fixture(scope="session")
    def s3_session(tmp_path_factory):
        def start():
            proc, info = start_moto(tmp_path_factory.mktemp("moto-session"))
            return info, _stop(proc, info["log"])

        yield from _shared_server("moto", start)

    return s3_session


def nginx_session_fixture():
    """A session-scoped pytest fixture: one nginx serving {"www": dir, "url": base url,
    "log": access log} for the modules that import it; skips when nginx is not installed."""
    import pytest

    @pytest.fixture(scope="session")
    def nginx_session(tmp_path_factory):
        def start():
            d = tmp_path_factory.mktemp("nginx-session")
            proc, url = start_nginx(d)
            value = None if proc is None else {"www": d / "www", "url": url,
                                               "log": d / "access.log"}
            return value, _stop(proc)

        for value in _shared_server("nginx", start):
            if value is None:
                pytest.skip("nginx is not installed (scripts/setup installs it)")
            yield value

    return nginx_session


s3_session = moto_session_fixture()
nginx_session = nginx_session_fixture()
