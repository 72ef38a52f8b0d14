"""Drive ``POST /v1/check`` with wrk (C, its own process) from a list of request bodies."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["WrkResult", "run_wrk", "wrk_available"]

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
    table = work / "bodies.lua"
    encoded = (json.dumps(b, separators=(",", ":")) for b in bodies)
    table.write_text("return {\n" + ",\n".join(_lua_string(e) for e in encoded) + "\n}\n")
    script = work / "check.lua"
    script.write_text(_SCRIPT % {"threads": threads})
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
    env = {"TOOLDEDUP_WRK_BODIES": str(table), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr or done.stdout}")
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
