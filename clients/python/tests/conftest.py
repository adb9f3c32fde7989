"""A live `paramine serve` for the client's tests: a small index built from the demo corpus with the default
models (what scripts/setup fetched), served on a free loopback port, with an API key (writes need it)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CLI = REPO / "dist" / "cli.js"
KEY = "test-key-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def service(tmp_path_factory):
    if not CLI.exists() or shutil.which("node") is None:
        pytest.fail(f"needs node and {CLI}: run scripts/setup")
    root = tmp_path_factory.mktemp("serve")
    lines = (REPO / "examples" / "demo-corpus.jsonl").read_text(encoding="utf-8").splitlines()[:400]
    corpus = root / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = root / "index"
    subprocess.run(
        ["node", str(CLI), "index", "--input", str(corpus), "--out", str(index)],
        check=True,
        cwd=REPO,
        capture_output=True,
    )
    port = free_port()
    log = open(root / "serve.log", "w")
    child = subprocess.Popen(
        ["node", str(CLI), "serve", "--index", str(index), "--host", "127.0.0.1", "--port", str(port)]
        + ["--jobs-dir", str(root / "jobs"), "--annotations-dir", str(root / "annotations")],
        cwd=REPO,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PARAMINE_API_KEYS": f"tester:{KEY}"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if child.poll() is not None:
            pytest.fail(f"serve exited {child.returncode}: {(root / 'serve.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.2)
    else:
        child.kill()
        pytest.fail("serve was not ready in 180 s")
    yield {"url": url, "key": KEY, "texts": [json.loads(x)["text"] for x in lines]}
    child.terminate()
    try:
        child.wait(10)
    except subprocess.TimeoutExpired:
        child.kill()
