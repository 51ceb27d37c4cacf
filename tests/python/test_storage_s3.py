"""The S3 backend against a real S3 server on loopback: moto's standalone server with its IAM
authentication on, so that SigV4 is checked and a wrong secret is refused. stoker is driven
through `stoker storage` and the C++ conformance suite (storage_tests); boto3 (which moto brings)
is the reference that writes and reads the same objects."""

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

from remote_testlib import s3_session  # noqa: E402,F401

BUCKET = "stoker-test"
MIB = 1 << 20


@pytest.fixture(scope="session")
def s3(s3_session):
    """The session's moto server (remote_testlib.start_moto: IAM auth on after the three calls
    that make our user and key), with this module's own bucket."""
    s3_session["client"].create_bucket(Bucket=BUCKET)
    return s3_session


@pytest.fixture
def run_s3(stoker_cli, s3, tmp_path):
    """run_s3(*args, secret=None, stdin=None) -> CompletedProcess (bytes), with the credentials
    in the environment; asserts that the secret appears nowhere in what stoker printed."""

    def run(*args, secret=None, stdin=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ACCESS_KEY_ID=s3["key_id"], AWS_SECRET_ACCESS_KEY=secret or s3["secret"],
                   AWS_REGION="us-east-1", AWS_ENDPOINT_URL=s3["endpoint"],
                   AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
                   AWS_CONFIG_FILE=str(tmp_path / "none"))
        proc = subprocess.run([stoker_cli, "storage", *map(str, args)], input=stdin, env=env,
                              capture_output=True, timeout=120)
        for s in {s3["secret"], secret or s3["secret"]}:
            assert s.encode() not in proc.stdout + proc.stderr
        return proc

    return run


def pattern(n, seed):
    return random.Random(seed).randbytes(n)


@pytest.mark.parametrize("size", [0, 1, 5 * MIB - 1, 5 * MIB, 5 * MIB + 1, 11 * MIB + 3])
def test_put_then_get_round_trips(run_s3, s3, tmp_path, size):
    data = pattern(size, size)
    assert len(data) == size
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    uri = f"s3://{BUCKET}/roundtrip/{size}.bin"
    put = run_s3("put", uri, src, "--write-part-size-mib", 5)
    assert put.returncode == 0, put.stderr.decode()
    # boto3 reads what stoker wrote; a multipart upload has an ETag ending in -<parts>.
    obj = s3["client"].get_object(Bucket=BUCKET, Key=f"roundtrip/{size}.bin")
    assert obj["Body"].read() == data
    parts = size // (5 * MIB) + (1 if size % (5 * MIB) else 0)
    if size >= 5 * MIB:
        assert obj["ETag"].strip('"').endswith(f"-{parts}")
    cat = run_s3("cat", uri, "--part-size-mib", 1)
    assert cat.returncode == 0, cat.stderr.decode()
    assert cat.stdout == data
    stat = run_s3("stat", "--json", uri)
    assert json.loads(stat.stdout)["size_bytes"] == size


def test_ranged_reads_equal_the_bytes(run_s3, s3):
    data = os.urandom(3 * MIB + 17)
    s3["client"].put_object(Bucket=BUCKET, Key="ranged.bin", Body=data)
    for offset, length in [(0, 1), (1, 100), (MIB - 1, 2), (MIB, 2 * MIB + 17), (3 * MIB, 999)]:
        cat = run_s3("cat", f"s3://{BUCKET}/ranged.bin", "--offset", offset, "--length", length,
                     "--part-size-mib", 1)
        assert cat.returncode == 0, cat.stderr.decode()
        assert cat.stdout == data[offset:offset + length]


def test_list_pages_through_more_keys_than_a_page(run_s3, s3):
    keys = [f"listing/k{i:03d}" for i in range(23)]
    for k in keys:
        s3["client"].put_object(Bucket=BUCKET, Key=k, Body=k.encode())
    s3["client"].put_object(Bucket=BUCKET, Key="listing-other", Body=b"x")
    ls = run_s3("ls", "--json", f"s3://{BUCKET}/listing/", "--page-keys", 5)
    assert ls.returncode == 0, ls.stderr.decode()
    got = json.loads(ls.stdout)
    assert [o["uri"] for o in got] == [f"s3://{BUCKET}/{k}" for k in keys]
    assert all(o["size_bytes"] == len(k) for o, k in zip(got, keys))
    # boto3's own listing, page by page, says the same.
    pages = s3["client"].get_paginator("list_objects_v2").paginate(
        Bucket=BUCKET, Prefix="listing/", PaginationConfig={"PageSize": 5})
    assert [o["Key"] for p in pages for o in p["Contents"]] == keys


def test_wrong_secret_is_one_clear_error_without_the_secret(run_s3, s3):
    wrong = "WrongSecretKeyThatMustNeverBePrinted0123"
    s3["client"].put_object(Bucket=BUCKET, Key="secret-test.bin", Body=b"abc")
    for verb in (("stat", f"s3://{BUCKET}/secret-test.bin"),
                 ("cat", f"s3://{BUCKET}/secret-test.bin"),
                 ("ls", f"s3://{BUCKET}/")):
        proc = run_s3(*verb, secret=wrong)
        assert proc.returncode == 2
        err = proc.stderr.decode()
        assert err.count("\n") == 1, err
        assert "403" in err and s3["key_id"] in err, err
        assert wrong not in err and s3["secret"] not in err


def test_missing_object_is_not_found(run_s3):
    proc = run_s3("stat", f"s3://{BUCKET}/no/such/key")
    assert proc.returncode == 2
    assert "404" in proc.stderr.decode()


def test_faults_and_truncation_give_the_same_bytes_after_retries(run_s3, s3):
    data = os.urandom(6 * MIB + 5)
    s3["client"].put_object(Bucket=BUCKET, Key="faulty.bin", Body=data)
    cat = run_s3("cat", f"s3://{BUCKET}/faulty.bin", "--part-size-mib", 1, "--stats",
                 "--fault-fail-fraction", 0.3, "--fault-truncate-fraction", 0.3,
                 "--fault-seed", 7, "--retries", 40, "--retry-base-ms", 1)
    assert cat.returncode == 0, cat.stderr.decode()
    assert cat.stdout == data
    stats = json.loads(cat.stderr.decode().strip().splitlines()[-1])
    # Seven 1 MiB reads, some failed or cut short and repeated.
    assert stats["retries"] > 0 and stats["requests"]["GET"] > 7, stats
    # A fault that outlasts the attempts is one error saying so, never wrong bytes.
    down = run_s3("cat", f"s3://{BUCKET}/faulty.bin", "--fault-fail-fraction", 1,
                  "--retries", 3, "--retry-base-ms", 1)
    assert down.returncode == 2 and down.stdout == b""
    assert "injected fault" in down.stderr.decode() and "after 3 attempts" in down.stderr.decode()


def test_cpp_conformance_suite_passes_on_s3(stoker_cli, s3):
    binary = Path(stoker_cli).parent / "tests" / "storage_tests"
    if not binary.is_file():
        pytest.skip(f"{binary} not built")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID=s3["key_id"], AWS_SECRET_ACCESS_KEY=s3["secret"],
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=s3["endpoint"],
               STOKER_TEST_S3_PREFIX=f"s3://{BUCKET}/conformance/")
    proc = subprocess.run([str(binary), "--gtest_filter=Backends/ConformanceTest.*/s3"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "[  PASSED  ] 8 tests" in proc.stdout, proc.stdout[-2000:]


class FaultyProxy:
    """An HTTP proxy in front of the S3 server that misbehaves on a fixed schedule: of every four
    requests, the second gets 503 SlowDown, and the fourth is cut — a GET body truncated half-way
    (with the full Content-Length promised), any other request's connection closed unanswered.
    Signed requests pass unchanged (the Host header too), so signatures still verify."""

    def __init__(self, upstream_port):
        import http.client
        import http.server
        import threading

        proxy = self
        self.counts = {}
        self.lock = threading.Lock()
        self.n = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_any(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                with proxy.lock:
                    proxy.n += 1
                    n = proxy.n
                    proxy.counts[self.command] = proxy.counts.get(self.command, 0) + 1
                if n % 4 == 2:
                    err = (b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>SlowDown</Code>"
                           b"<Message>Please reduce your request rate.</Message></Error>")
                    self.send_response(503)
                    self.send_header("Content-Length", str(len(err)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(err)
                    return
                if n % 4 == 0 and self.command != "GET":
                    self.close_connection = True
                    return  # reset: no answer at all
                conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
                conn.request(self.command, self.path, body=body or None,
                             headers={k: v for k, v in self.headers.items()})
                r = conn.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                length = int(r.getheader("Content-Length", len(data)) or 0)
                self.send_header("Content-Length", str(length if self.command == "HEAD" else len(data)))
                self.end_headers()
                if self.command == "HEAD":
                    return
                if n % 4 == 0 and len(data) > 1:
                    self.wfile.write(data[: len(data) // 2])  # truncated, then closed
                    self.close_connection = True
                    return
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_slowdown_resets_and_truncation_on_the_wire_are_retried(run_s3, s3, tmp_path):
    proxy = FaultyProxy(int(s3["endpoint"].rsplit(":", 1)[1]))
    try:
        data = pattern(11 * MIB + 99, 11)
        src = tmp_path / "wire.bin"
        src.write_bytes(data)
        uri = f"s3://{BUCKET}/wire/obj.bin"
        endpoint = ["--s3-endpoint", f"http://127.0.0.1:{proxy.port}", "--retry-base-ms", 1,
                    "--retries", 8, "--stats"]
        put = run_s3("put", uri, src, "--write-part-size-mib", 5, *endpoint)
        assert put.returncode == 0, put.stderr.decode()
        # Three parts plus create and complete, some repeated after a 503 or a reset.
        assert proxy.counts.get("PUT", 0) >= 3 and proxy.counts.get("POST", 0) >= 2
        assert json.loads(put.stderr.decode().splitlines()[-1])["retries"] > 0
        got = s3["client"].get_object(Bucket=BUCKET, Key="wire/obj.bin")["Body"].read()
        assert got == data
        before = dict(proxy.counts)
        cat = run_s3("cat", uri, "--part-size-mib", 1, *endpoint)
        assert cat.returncode == 0, cat.stderr.decode()
        assert cat.stdout == data
        assert json.loads(cat.stderr.decode().splitlines()[-1])["retries"] > 0
        assert proxy.counts["GET"] - before.get("GET", 0) > 12  # 12 parts, some twice
    finally:
        proxy.close()


def test_credentials_and_region_from_a_profile(stoker_cli, s3, tmp_path):
    s3["client"].put_object(Bucket=BUCKET, Key="profile.bin", Body=b"from a profile")
    (tmp_path / "credentials").write_text(
        f"[default]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = wrong\n\n"
        f"[train]\naws_access_key_id = {s3['key_id']}\n"
        f"aws_secret_access_key = {s3['secret']}\n")
    (tmp_path / "config").write_text(
        f"[default]\nendpoint_url = {s3['endpoint']}\n\n"
        f"[profile train]\nregion = us-east-1\nendpoint_url = {s3['endpoint']}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_PROFILE="train", AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "credentials"),
               AWS_CONFIG_FILE=str(tmp_path / "config"))
    proc = subprocess.run([stoker_cli, "storage", "cat", f"s3://{BUCKET}/profile.bin"], env=env,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == b"from a profile"
    env.pop("AWS_PROFILE")  # the default profile's key is refused, and says where it came from
    proc = subprocess.run([stoker_cli, "storage", "cat", f"s3://{BUCKET}/profile.bin"], env=env,
                          capture_output=True, timeout=60)
    assert proc.returncode == 2
    assert "profile default" in proc.stderr.decode() and s3["secret"] not in proc.stderr.decode()
