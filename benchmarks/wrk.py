"""Drive ``POST /v1/check`` with wrk (C, its own process) from a list of request bodies."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Timed", "WrkResult", "run_wrk", "run_wrk_timed", "wrk_available"]

# Each wrk thread walks the bodies from its own offset, so no two threads send the same one
# until the list runs out; ``done`` prints one JSON line with what wrk measured.
_SCRIPT = """
local bodies = dofile(os.getenv("TOOLDEDUP_WRK_BODIES"))
local threads = {}
local counter = 0
function setup(thread)
  thread:set("offset", counter * math.floor(#bodies / %(threads)d))
  counter = counter + 1
  table.insert(threads, thread)
end
function init(args)
  sent = 0
end
function request()
  local i = (offset + sent) %% #bodies + 1
  sent = sent + 1
  return wrk.format("POST", "/v1/check", {["Content-Type"] = "application/json"}, bodies[i])
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("sent") end
  local e = summary.errors
  io.write(string.format(
    '{"requests": %%d, "duration_us": %%d, "p50_us": %%d, "p99_us": %%d, "non_2xx": %%d,'
    .. ' "socket_errors": %%d, "bodies": %%d, "sent": %%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout, #bodies, total))
end
"""


# One connection; each response's latency timed in the script (LuaJIT's ffi reads the
# monotonic clock: from when ``request`` hands wrk the next request, which it then writes, to
# ``response``), written with what answered it: the decision, the last stage that ran (the
# last "stage" in the body, which is explain's last stage) and whether explain says borderline.
_TIMED_SCRIPT = """
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } tooldedup_timespec;
int clock_gettime(int clock, tooldedup_timespec *at);
]]
local at = ffi.new("tooldedup_timespec")
local function now_us()
  ffi.C.clock_gettime(1, at)
  return tonumber(at.tv_sec) * 1e6 + tonumber(at.tv_nsec) / 1e3
end
local bodies = dofile(os.getenv("TOOLDEDUP_WRK_BODIES"))
local out, timed_thread
local started = 0
-- A global: ``done`` reads it from the thread.
sent = 0
function setup(thread)
  timed_thread = thread
end
function init(args)
  out = io.open(os.getenv("TOOLDEDUP_WRK_TIMES"), "w")
end
function request()
  local i = sent %% #bodies + 1
  sent = sent + 1
  started = now_us()
  return wrk.format("POST", "/v1/check", {["Content-Type"] = "application/json"}, bodies[i])
end
function response(status, headers, body)
  local took = now_us() - started
  local decision = string.match(body, '"decision":"([%%a_]+)"') or ("http" .. status)
  local stage = "none"
  for name in string.gmatch(body, '"stage":"(%%a+)"') do stage = name end
  local borderline = string.find(body, '"borderline":true', 1, true) and "1" or "0"
  out:write(string.format("%%.1f %%s %%s %%s\\n", took, decision, stage, borderline))
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"sent": %%d, "socket_errors": %%d}\\n',
    timed_thread:get("sent"), e.connect + e.read + e.write + e.timeout))
end
"""


@dataclass(frozen=True, slots=True)
class Timed:
    """One response of a timed run: its latency and what answered it."""

    ms: float
    decision: str
    stage: str  # the last funnel stage that ran ("none" for an answer without explain stages)
    borderline: bool  # explain says the match was left to the borderline action (or an ask)

    @property
    def answer(self) -> str:
        """``decision/stage``, and ``/borderline`` where explain says so."""
        return f"{self.decision}/{self.stage}" + ("/borderline" if self.borderline else "")


@dataclass(frozen=True, slots=True)
class WrkResult:
    """What one wrk run measured."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    non_2xx: int
    socket_errors: int
    wrapped: bool  # the bodies ran out and some were sent twice

    @property
    def per_second(self) -> float:
        """Completed requests per second."""
        return self.requests / self.seconds if self.seconds else 0.0


def wrk_available() -> bool:
    """Whether the ``wrk`` program is on PATH (Debian: ``apt-get install wrk``)."""
    return shutil.which("wrk") is not None


def _lua_string(text: str) -> str:
    level = 1
    while f"]{'=' * level}]" in text:
        level += 1
    return f"[{'=' * level}[{text}]{'=' * level}]"


def _write_bodies(bodies: list[dict[str, Any]], work: Path) -> Path:
    table = work / "bodies.lua"
    encoded = (json.dumps(b, separators=(",", ":")) for b in bodies)
    table.write_text("return {\n" + ",\n".join(_lua_string(e) for e in encoded) + "\n}\n")
    return table


def _wrk(
    script: Path, port: int, threads: int, connections: int, seconds: float, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run wrk with ``script`` against the server; raise if it fails."""
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "-s",
        str(script),
        f"http://127.0.0.1:{port}",
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, env={**env, "PATH": "/usr/bin:/bin"}
    )
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr or done.stdout}")
    return done


def run_wrk(
    port: int,
    bodies: list[dict[str, Any]],
    *,
    connections: int,
    threads: int,
    seconds: float,
    work: Path,
) -> WrkResult:
    """One wrk run of ``seconds`` over ``connections`` keep-alive connections."""
    work.mkdir(parents=True, exist_ok=True)
    table = _write_bodies(bodies, work)
    script = work / "check.lua"
    script.write_text(_SCRIPT % {"threads": threads})
    done = _wrk(script, port, threads, connections, seconds, {"TOOLDEDUP_WRK_BODIES": str(table)})
    line = [x for x in done.stdout.splitlines() if x.startswith("{")][-1]
    data = json.loads(line)
    return WrkResult(
        requests=data["requests"],
        seconds=data["duration_us"] / 1e6,
        p50_ms=data["p50_us"] / 1000.0,
        p99_ms=data["p99_us"] / 1000.0,
        non_2xx=data["non_2xx"],
        socket_errors=data["socket_errors"],
        wrapped=data["sent"] > data["bodies"],
    )


def run_wrk_timed(
    port: int, bodies: list[dict[str, Any]], *, seconds: float, work: Path
) -> list[Timed]:
    """One wrk run of ``seconds`` over one connection, sending ``bodies`` in turn: each
    response's latency and answer, in the order they came."""
    work.mkdir(parents=True, exist_ok=True)
    table = _write_bodies(bodies, work)
    script = work / "timed.lua"
    script.write_text(_TIMED_SCRIPT % {})
    times = work / "times.txt"
    # A script that fails leaves wrk's exit status 0: no file, not the last run's.
    times.unlink(missing_ok=True)
    env = {"TOOLDEDUP_WRK_BODIES": str(table), "TOOLDEDUP_WRK_TIMES": str(times)}
    done = _wrk(script, port, 1, 1, seconds, env)
    summary = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if not times.exists() or not summary:
        raise RuntimeError(f"wrk wrote no timings: {done.stderr or done.stdout}")
    timed = []
    for line in times.read_text().splitlines():
        took, decision, stage, borderline = line.split(" ")
        timed.append(Timed(float(took) / 1000.0, decision, stage, borderline == "1"))
    counts = json.loads(summary[-1])
    # Two requests are never answered: the one wrk asks the script for before it connects,
    # and the one in flight when the run ends.
    if counts["socket_errors"] or counts["sent"] - len(timed) > 2:
        raise RuntimeError(f"wrk sent {counts['sent']}, timed {len(timed)}: {counts}")
    return timed
