"""The HTTP backend against Debian's nginx on loopback: Range reads in parts, redirects, and a
location that ignores Range (max_ranges 0), which stoker must refuse rather than misread."""

import os
import shutil
import subprocess

import pytest
from remote_testlib import free_port, start_nginx_conf

MIB = 1 << 20
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

CONF = """
daemon off;
master_process off;
worker_processes 1;
{user}
pid {d}/nginx.pid;
error_log stderr notice;
events {{ worker_connections 64; }}
http {{
  log_format conn '$connection $status $request';
  access_log {d}/access.log conn;
  client_body_temp_path {d}/body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
  server {{
    listen 127.0.0.1:{port};
    root {d}/www;
    location /norange/ {{ alias {d}/www/; max_ranges 0; }}
    location = /moved.bin {{ return 302 /data.bin; }}
  }}
}}
"""


@pytest.fixture(scope="session")
def nginx(tmp_path_factory):
    if not os.path.exists(NGINX):
        pytest.skip("nginx is not installed (scripts/setup installs it)")
    d = tmp_path_factory.mktemp("nginx")
    (d / "www").mkdir()
    data = os.urandom(3 * MIB + 123)
    (d / "www" / "data.bin").write_bytes(data)
    (d / "www" / "empty.bin").write_bytes(b"")
    port = free_port()
    user = "user root;" if os.geteuid() == 0 else ""
    (d / "nginx.conf").write_text(CONF.format(d=d, port=port, user=user))
    proc, log = start_nginx_conf(NGINX, d)
    try:
        yield {"url": f"http://127.0.0.1:{port}", "data": data, "dir": d}
    finally:
        proc.kill()
        proc.wait()
        log.close()


def storage(stoker_cli, *args):
    return subprocess.run([stoker_cli, "storage", *map(str, args)], capture_output=True,
                          timeout=60)


def test_stat_and_whole_read(stoker_cli, nginx):
    url = nginx["url"] + "/data.bin"
    stat = storage(stoker_cli, "stat", url)
    assert stat.returncode == 0, stat.stderr.decode()
    assert stat.stdout.decode().split("\t")[1] == str(len(nginx["data"]))
    cat = storage(stoker_cli, "cat", url, "--part-size-mib", 1)
    assert cat.returncode == 0, cat.stderr.decode()
    assert cat.stdout == nginx["data"]
    # Four ranged GETs of at most 1 MiB each, plus the HEAD, reached the server, all on one
    # connection: the pooled handle keeps it open between requests.
    log = [line.split(" ", 2) for line in (nginx["dir"] / "access.log").read_text().splitlines()]
    cat_lines = log[-5:]
    assert [status for _, status, _ in cat_lines] == ["200", "206", "206", "206", "206"], cat_lines
    assert cat_lines[0][2].startswith("HEAD /data.bin")
    assert len({conn for conn, _, _ in cat_lines}) == 1, cat_lines


def test_ranged_reads(stoker_cli, nginx):
    data = nginx["data"]
    for offset, length in [(0, 1), (5, 1000), (MIB - 3, 7), (2 * MIB, MIB + 123), (len(data) - 1, 9)]:
        cat = storage(stoker_cli, "cat", nginx["url"] + "/data.bin", "--offset", offset,
                      "--length", length, "--part-size-mib", 1)
        assert cat.returncode == 0, cat.stderr.decode()
        assert cat.stdout == data[offset:offset + length]


def test_redirect_is_followed(stoker_cli, nginx):
    cat = storage(stoker_cli, "cat", nginx["url"] + "/moved.bin", "--offset", 10, "--length", 20)
    assert cat.returncode == 0, cat.stderr.decode()
    assert cat.stdout == nginx["data"][10:30]


def test_server_that_ignores_range_is_refused(stoker_cli, nginx):
    cat = storage(stoker_cli, "cat", nginx["url"] + "/norange/data.bin", "--offset", 100,
                  "--length", 50)
    assert cat.returncode == 2
    err = cat.stderr.decode()
    assert "ignores Range" in err and "/norange/data.bin" in err, err
    assert cat.stdout == b""


def test_empty_object_and_missing_object(stoker_cli, nginx):
    cat = storage(stoker_cli, "cat", nginx["url"] + "/empty.bin")
    assert cat.returncode == 0 and cat.stdout == b""
    missing = storage(stoker_cli, "cat", nginx["url"] + "/nope.bin")
    assert missing.returncode == 2
    assert "404" in missing.stderr.decode()


def test_http_is_read_only_and_unlisted(stoker_cli, nginx, tmp_path):
    (tmp_path / "f").write_bytes(b"x")
    put = storage(stoker_cli, "put", nginx["url"] + "/new.bin", tmp_path / "f")
    assert put.returncode == 2 and "read-only" in put.stderr.decode()
    ls = storage(stoker_cli, "ls", nginx["url"] + "/")
    assert ls.returncode == 2 and "cannot be listed" in ls.stderr.decode()


def test_unserved_scheme_names_the_served_ones(stoker_cli):
    proc = storage(stoker_cli, "stat", "gs://bucket/key")
    assert proc.returncode == 2
    assert "s3://bucket/key" in proc.stderr.decode() and "http://" in proc.stderr.decode()
