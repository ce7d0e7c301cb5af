"""Drives nl2sql's MCP server with the official Python MCP SDK (`mcp` on PyPI).

Run by crates/nl2sql-cli/tests/it/mcp.rs with one JSON argument:

    {"transports": [
        {"name": "stdio", "command": "...", "args": [...], "env": {...}, "data_dir": "..."},
        {"name": "http", "url": "http://127.0.0.1:PORT/mcp", "key": "...", "rest": "http://.../api/v1"},
        ...],
     "slow": [same shapes, over servers whose planner never answers],
     "expect": {"factories": 3, "denied_column": "serial_number"}}

Over every transport it initialises, lists the tools and resources, calls each tool
(answers checked against the values the Rust test read with SQL), checks the refusals
(a stacked DROP, a denied column, a question that asks to change data), reads the schema
resource, and over the slow servers cancels a long `ask` and checks that the run was
recorded as cancelled. Prints one line per check; exits 1 on the first failure.
"""

from __future__ import annotations

import glob
import json
import os
import sys
import time

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLS = {"ask", "validate_sql", "list_datasources", "describe_datasource", "explain"}


def check(cond: bool, what: str, detail: object = "") -> None:
    if not cond:
        print(f"FAIL {what}: {detail}", flush=True)
        sys.exit(1)
    print(f"ok   {what}", flush=True)


def structured(result) -> dict:
    data = result.structured_content
    if data is None:
        data = json.loads(result.content[0].text)
    return data


def connect(t: dict):
    """An async context manager yielding (read, write) for transport `t`."""
    if t["name"].startswith("stdio"):
        params = StdioServerParameters(
            command=t["command"], args=t["args"], env={**os.environ, **t.get("env", {})}
        )
        return stdio_client(params)
    client = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {t['key']}"},
        timeout=httpx2.Timeout(30.0, read=300.0),
    )
    return _http(t["url"], client)


class _http:
    def __init__(self, url: str, client) -> None:
        self.url, self.client, self.inner = url, client, None

    async def __aenter__(self):
        await self.client.__aenter__()
        self.inner = streamable_http_client(self.url, http_client=self.client)
        return await self.inner.__aenter__()

    async def __aexit__(self, *exc):
        await self.inner.__aexit__(*exc)
        await self.client.__aexit__(*exc)


async def suite(t: dict, expect: dict) -> None:
    name = t["name"]
    async with connect(t) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            check(init.server_info.name == "nl2sql", f"{name}: initialise", init.server_info)

            tools = await s.list_tools()
            names = {tool.name for tool in tools.tools}
            check(names == TOOLS, f"{name}: list tools", names)
            for tool in tools.tools:
                check(
                    tool.input_schema.get("type") == "object",
                    f"{name}: {tool.name} has an input schema",
                    tool.input_schema,
                )

            r = await s.call_tool("list_datasources", {})
            ids = [d["id"] for d in structured(r)["datasources"]]
            check(not r.is_error and ids == ["plant"], f"{name}: list_datasources", ids)

            r = await s.call_tool("describe_datasource", {"datasource": "plant"})
            tables = {tb["name"]: tb for tb in structured(r)["tables"]}
            factories = tables.get("factories", {})
            check(
                factories.get("row_count") == expect["factories"]
                and any(c["name"] == "id" and c["primary_key"] for c in factories["columns"]),
                f"{name}: describe_datasource (row counts, keys)",
                factories,
            )
            machine_cols = [c["name"] for c in tables["machines"]["columns"]]
            check(
                expect["denied_column"] not in machine_cols and "name" in machine_cols,
                f"{name}: describe_datasource hides the denied column",
                machine_cols,
            )
            check(
                any(fk["references"] == "factories" for fk in tables["machines"]["foreign_keys"]),
                f"{name}: describe_datasource lists foreign keys",
                tables["machines"]["foreign_keys"],
            )

            r = await s.call_tool("describe_datasource", {"datasource": "nowhere"})
            check(
                r.is_error and structured(r)["error_code"] == "NOT_FOUND",
                f"{name}: describe_datasource of an unknown datasource is a tool error",
                structured(r),
            )

            progress: list[str] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                progress.append(message or "")

            r = await s.call_tool(
                "ask", {"question": "How many factories do we have?"}, progress_callback=on_progress
            )
            out = structured(r)
            check(not r.is_error, f"{name}: ask answers", out)
            check(out["rows"] == [[expect["factories"]]], f"{name}: ask's value is right", out["rows"])
            check(
                "factories" in (out["subqueries"][0]["sql"] or "").lower(),
                f"{name}: ask returns the SQL",
                out["subqueries"],
            )
            check(
                out["truncated"] is False and out["trace_id"] and out["status"] == "succeeded",
                f"{name}: ask returns status, trace id, truncated",
                out,
            )
            check(
                any(m.startswith("run ") for m in progress)
                and any(m.startswith("sql:") for m in progress),
                f"{name}: ask sends progress notifications",
                progress,
            )

            r = await s.call_tool(
                "ask", {"question": "List all products", "max_rows": 2}
            )
            out = structured(r)
            check(
                not r.is_error and len(out["rows"]) == 2 and out["truncated"] is True
                and out["row_count"] > 2,
                f"{name}: ask caps rows with max_rows and says truncated",
                out,
            )

            r = await s.call_tool("ask", {"question": "Delete every factory"})
            out = structured(r)
            check(
                r.is_error and out["error_code"] == "INTENT_VIOLATION",
                f"{name}: ask that changes data is a tool error",
                out,
            )

            r = await s.call_tool("ask", {"question": "Show me machines with serial numbers"})
            out = structured(r)
            check(
                r.is_error or expect["denied_column"] not in json.dumps(out["columns"]),
                f"{name}: ask never returns the denied column",
                out,
            )

            r = await s.call_tool("explain", {"question": "How many factories do we have?"})
            out = structured(r)
            check(
                not r.is_error
                and out["dag"] is not None
                and "factories" in out["subqueries"][0]["sql"].lower()
                and out["subqueries"][0]["plan"] is not None,
                f"{name}: explain returns the DAG, plan and SQL",
                out,
            )

            r = await s.call_tool(
                "validate_sql", {"sql": "SELECT name FROM factories", "datasource": "plant"}
            )
            out = structured(r)
            check(not r.is_error and out["status"] == "ok" and out["physical"]["dry_run"]["is_valid"], f"{name}: validate_sql passes", out)

            r = await s.call_tool(
                "validate_sql", {"sql": "SELECT 1; DROP TABLE factories", "dialect": "sqlite"}
            )
            out = structured(r)
            check(
                r.is_error and out["status"] != "ok"
                and any(i["code"] == "SECURITY_VIOLATION" for i in out["issues"]),
                f"{name}: validate_sql refuses a stacked DROP",
                out,
            )

            r = await s.call_tool(
                "validate_sql",
                {"sql": f"SELECT {expect['denied_column']} FROM machines", "datasource": "plant"},
            )
            out = structured(r)
            check(
                r.is_error and out["status"] != "ok",
                f"{name}: validate_sql refuses a denied column",
                out,
            )

            r = await s.call_tool("validate_sql", {"sql": "SELECT 1", "bogus": True})
            check(
                r.is_error and structured(r)["error_code"] == "BAD_REQUEST",
                f"{name}: bad arguments are a tool error",
                structured(r),
            )

            res = await s.list_resources()
            uris = [str(x.uri) for x in res.resources]
            check(uris == ["nl2sql://datasource/plant/schema"], f"{name}: list resources", uris)
            content = await s.read_resource(uris[0])
            schema = json.loads(content.contents[0].text)
            check(
                schema["datasource_id"] == "plant"
                and any(tb["name"] == "factories" for tb in schema["tables"]),
                f"{name}: read the schema resource",
                schema,
            )


async def recorded_status(t: dict, trace_id: str) -> str | None:
    """The recorded status of run `trace_id`, when it is recorded."""
    if t["name"].startswith("stdio"):
        pattern = os.path.join(t["data_dir"], "**", "runs", f"{trace_id}.response.json")
        for path in glob.glob(pattern, recursive=True):
            with open(path) as f:
                return json.load(f)["response"]["status"]
        return None
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {t['key']}"}) as c:
        resp = await c.get(f"{t['rest']}/query/{trace_id}")
        return resp.json().get("status") if resp.status_code == 200 else None


async def cancel_suite(t: dict) -> None:
    name = t["name"]
    async with connect(t) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            trace: list[str] = []
            started = anyio.Event()

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                if message and message.startswith("run "):
                    trace.append(message.split()[1])
                # The slow planner is the model behind the decomposer: once that node
                # has started, the run is waiting on it.
                if trace and (message or "").startswith("node_started") and '"decomposer"' in message:
                    started.set()

            async def long_ask(scope: anyio.CancelScope) -> None:
                with scope:
                    await s.call_tool(
                        "ask", {"question": "How many factories do we have?"},
                        progress_callback=on_progress,
                    )
                    print(f"FAIL {name}: the long ask answered", flush=True)
                    sys.exit(1)

            scope = anyio.CancelScope()
            async with anyio.create_task_group() as tg:
                tg.start_soon(long_ask, scope)
                with anyio.fail_after(120):
                    await started.wait()
                scope.cancel()
            check(bool(trace), f"{name}: the long ask told its trace id", trace)
            status = None
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                status = await recorded_status(t, trace[0])
                if status:
                    break
                await anyio.sleep(0.2)
            check(status == "cancelled", f"{name}: cancelling the ask cancelled its run", status)
            # The session is still usable after a cancellation.
            r = await s.call_tool("list_datasources", {})
            check(not r.is_error, f"{name}: the session goes on after a cancellation", r)


async def main() -> None:
    spec = json.loads(sys.argv[1])
    for t in spec["transports"]:
        await suite(t, spec["expect"])
    for t in spec["slow"]:
        await cancel_suite(t)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    anyio.run(main)
