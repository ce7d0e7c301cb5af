"""Load on nl2sql's MCP endpoint over loopback, with the official Python MCP SDK.

Run by `cargo xtask mcp-load` (xtask/src/mcp_load.rs):

    python mcp_load.py NL2SQL_BINARY FIXTURE_DB SESSIONS SECONDS

It sets up a copy of the SQLite fixture in a temporary directory, starts `nl2sql serve`
on a free port, and runs SESSIONS concurrent MCP sessions over streamable HTTP for
SECONDS. Each session calls, in turn: `ask` (two questions), `explain`, `validate_sql`
(a stacked DROP, refused), `list_datasources` and `describe_datasource`. While it runs it
samples the server's resident memory every second. Then it stops the server (Ctrl-C) and
checks what it wrote: every run log line is whole JSON, every run record is whole JSON,
no temporary file is left, and there is one run record per `ask`/`explain` answered.

Prints one JSON object: calls per tool, answers, tool errors by code, failures (protocol
or transport errors) by kind, latency percentiles, the server's memory over time, and the
checks of the data directory.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

KEY = "load-test-key-0123456789"

CALLS = [
    ("ask", {"question": "How many factories do we have?"}),
    ("validate_sql", {"sql": "SELECT 1; DROP TABLE factories", "dialect": "sqlite"}),
    ("ask", {"question": "How many machines are there in each factory?"}),
    ("list_datasources", {}),
    ("explain", {"question": "List all products"}),
    ("describe_datasource", {"datasource": "plant"}),
]


def setup(dir_: str, fixture: str) -> None:
    shutil.copy(fixture, os.path.join(dir_, "plant.db"))
    with open(os.path.join(dir_, "nl2sql.toml"), "w") as f:
        f.write('version = 1\n\n[[datasources]]\nid = "plant"\nurl = "sqlite://plant.db"\n')
    with open(os.path.join(dir_, "keys.toml"), "w") as f:
        f.write(f'version = 1\n\n[[keys]]\nkey = "{KEY}"\nuser_id = "load"\nroles = []\n')


def start(binary: str, dir_: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [binary, "serve", "--config", os.path.join(dir_, "nl2sql.toml"),
         "--api-keys", os.path.join(dir_, "keys.toml"),
         "--data-dir", os.path.join(dir_, "data"), "--bind", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("listening on http://"):
            return proc, line.split("http://", 1)[1].split("/", 1)[0]
    raise SystemExit(f"the server did not start (exit {proc.wait()})")


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


async def session(url: str, deadline: float, stats: dict, offset: int) -> None:
    client = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {KEY}"}, timeout=httpx2.Timeout(60.0, read=300.0)
    )
    try:
        async with client, streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                i = offset
                while time.monotonic() < deadline:
                    name, args = CALLS[i % len(CALLS)]
                    i += 1
                    t = time.monotonic()
                    try:
                        r = await s.call_tool(name, args)
                        body = r.structured_content or {}
                        if r.is_error:
                            code = body.get("error_code") or body.get("status") or "?"
                            stats["tool_errors"][f"{name}:{code}"] = stats["tool_errors"].get(f"{name}:{code}", 0) + 1
                        else:
                            stats["answers"][name] = stats["answers"].get(name, 0) + 1
                            if name in ("ask", "explain"):
                                stats["traces"].add(body["trace_id"])
                    except Exception as e:  # a protocol or transport failure
                        kind = f"{name}:{type(e).__name__}"
                        stats["failures"][kind] = stats["failures"].get(kind, 0) + 1
                    stats["latency"].setdefault(name, []).append((time.monotonic() - t) * 1000)
    except Exception as e:
        kind = f"session:{type(e).__name__}:{e}"
        stats["failures"][kind] = stats["failures"].get(kind, 0) + 1


async def sample(pid: int, deadline: float, samples: list[int]) -> None:
    while time.monotonic() < deadline:
        samples.append(rss_kib(pid))
        await asyncio.sleep(1)


def check_data(data: str, traces: set[str]) -> dict:
    logs = glob.glob(os.path.join(data, "**", "runs", "*.jsonl"), recursive=True)
    records = glob.glob(os.path.join(data, "**", "runs", "*.response.json"), recursive=True)
    bad_lines = 0
    for path in logs:
        with open(path) as f:
            text = f.read()
        if text and not text.endswith("\n"):
            bad_lines += 1
        for line in text.splitlines():
            try:
                json.loads(line)
            except ValueError:
                bad_lines += 1
    bad_records = 0
    recorded = set()
    for path in records:
        try:
            with open(path) as f:
                recorded.add(json.load(f)["response"]["trace_id"])
        except (ValueError, KeyError):
            bad_records += 1
    leftovers = [
        p for p in glob.glob(os.path.join(data, "**", "*"), recursive=True)
        if os.path.isfile(p) and (".partial" in p or ".tmp" in p or p.endswith("~"))
    ]
    artifacts = glob.glob(os.path.join(data, "**", "*.parquet"), recursive=True)
    return {
        "run_logs": len(logs),
        "run_log_lines_not_whole": bad_lines,
        "run_records": len(records),
        "run_records_not_whole": bad_records,
        "answered_runs_without_record": len(traces - recorded),
        "temporary_files_left": len(leftovers),
        "artifacts": len(artifacts),
        "artifacts_empty": sum(1 for p in artifacts if os.path.getsize(p) == 0),
    }


async def main() -> None:
    binary, fixture, sessions, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    dir_ = tempfile.mkdtemp(prefix="nl2sql-mcp-load-")
    setup(dir_, fixture)
    proc, addr = start(binary, dir_)
    url = f"http://{addr}/mcp"
    stats = {"answers": {}, "tool_errors": {}, "failures": {}, "latency": {}, "traces": set()}
    samples: list[int] = []
    began = time.monotonic()
    deadline = began + seconds
    await asyncio.gather(
        sample(proc.pid, deadline, samples),
        *(session(url, deadline, stats, i) for i in range(sessions)),
    )
    elapsed = time.monotonic() - began
    proc.send_signal(signal.SIGINT)
    exit_code = proc.wait(timeout=60)
    calls = sum(len(v) for v in stats["latency"].values())
    third = max(1, len(samples) // 3)
    report = {
        "sessions": sessions,
        "seconds": round(elapsed, 1),
        "calls": calls,
        "calls_per_second": round(calls / elapsed, 1),
        "answers": stats["answers"],
        "tool_errors": stats["tool_errors"],
        "failures": stats["failures"],
        "latency_ms": {
            name: {"p50": round(percentile(v, 0.5), 1), "p90": round(percentile(v, 0.9), 1),
                   "p99": round(percentile(v, 0.99), 1), "n": len(v)}
            for name, v in sorted(stats["latency"].items())
        },
        "server_rss_mib": {
            "start": round(samples[0] / 1024, 1) if samples else None,
            "max": round(max(samples) / 1024, 1) if samples else None,
            "first_third_mean": round(sum(samples[:third]) / third / 1024, 1) if samples else None,
            "last_third_mean": round(sum(samples[-third:]) / third / 1024, 1) if samples else None,
        },
        "server_exit_code": exit_code,
        "data": check_data(os.path.join(dir_, "data"), stats["traces"]),
    }
    shutil.rmtree(dir_, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
