"""A real PostgreSQL for the tests, from the binaries the ``pgserver`` wheel ships.

Started on a Unix socket in a private folder; nothing is installed by hand. PostgreSQL
refuses to run as root, so under root the server runs as an unprivileged user.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import psycopg


def _binaries() -> Path:
    # Found, not imported: importing pgserver starts its own server machinery.
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the tests need the pgserver wheel: pip install pgserver")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


_BIN = _binaries()
_SERVICE_USER = "pgserver"  # the same user pgserver itself would create


def _run_as() -> dict[str, Any]:
    """``subprocess`` arguments that drop root, creating the service user once if needed."""
    if os.geteuid() != 0:
        return {}
    try:
        pwd.getpwnam(_SERVICE_USER)
    except KeyError:
        command = ["useradd", "-M", "-s", "/usr/sbin/nologin", _SERVICE_USER]
        made = subprocess.run(command, capture_output=True, text=True)
        # 9: the user exists, made meanwhile by another test process.
        if made.returncode not in (0, 9):
            raise RuntimeError(f"useradd failed: {made.stderr}") from None
    return {"user": _SERVICE_USER}


def _name(url: str) -> str:
    """The database a URL of ``LocalPostgres.url`` names."""
    return url.split("@/", 1)[1].split("?", 1)[0]


class LocalPostgres:
    """One PostgreSQL cluster in a temporary folder, which can be stopped and restarted."""

    def __init__(self, *, durable: bool = False) -> None:
        # Not under pytest's tmp_path: that is private to root, and socket paths are short.
        self.root = Path(tempfile.mkdtemp(prefix="tdpg-"))
        self.data = self.root / "data"
        self._as = _run_as()
        if self._as:
            shutil.chown(self.root, self._as["user"])
            self.root.chmod(0o755)
        self._pg(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        )
        with (self.data / "postgresql.conf").open("a") as conf:
            # Sockets only; tests make many short connections from several processes.
            conf.write("listen_addresses = ''\nmax_connections = 200\n")
            # Tests need no flush to disk; a benchmark keeps PostgreSQL's durable defaults.
            conf.write("" if durable else "fsync = off\n")
            conf.write(f"unix_socket_directories = '{self.root}'\n")
        self.start()

    def _pg(self, program: str, *args: str) -> None:
        subprocess.run(
            [str(_BIN / program), *args], check=True, capture_output=True, text=True, **self._as
        )

    def url(self, database: str = "postgres") -> str:
        """A libpq URL for ``database`` on this cluster's socket."""
        return f"postgresql://postgres@/{database}?host={self.root}"

    def create_database(self, template: str | None = None) -> str:
        """A new database, empty or a copy of the one at URL ``template``; its URL."""
        name = "t_" + uuid.uuid4().hex[:12]
        copied = "" if template is None else f' TEMPLATE "{_name(template)}"'
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"{copied}')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop the database ``create_database`` made at ``url``, closing what it left open."""
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{_name(url)}" WITH (FORCE)')

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        log = str(self.root / "server.log")
        self._pg("pg_ctl", "-D", str(self.data), "-l", log, "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``immediate`` is a crash: no shutdown checkpoint)."""
        self._pg("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def close(self) -> None:
        """Stop the server if it runs, and delete the cluster."""
        try:
            self.stop("immediate")
        except subprocess.CalledProcessError:
            pass  # already stopped
        shutil.rmtree(self.root, ignore_errors=True)
