"""Review tagging on a Redis stream: a consumer killed after its decision, before its commit.

A scripted "model" tags each review differently on every call. The first consumer tags
review r1, writes the tags to a search index, reports them to tooldedup, and is killed
(SIGKILL) just before it acks. The broker redelivers r1 to the next consumer, which is told
`duplicate` and writes the stored tags again instead of asking the model. Review r2 is
published twice (a publisher's retry): its logical key makes the second one a duplicate too.
The index ends with the first decision's tags only.

Needs Debian's redis-server (`make test` installs it). Run it against `make run`:
    .venv/bin/python docs/examples/review_tagging.py
"""

import asyncio
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis
from tooldedup_client import AsyncTooldedup
from tooldedup_client.consumer import ConsumerRunner, ConsumerSettings, Message, field_key
from tooldedup_client.consumer.redis_streams import RedisStreamsBroker

URL = os.environ.get("TOOLDEDUP_URL", "http://127.0.0.1:8000")
# The model's answers, one per call: asked again, it would answer otherwise.
ANSWERS = [["helpful", "shipping"], ["detailed", "packaging"], ["long", "courier"]]


class SearchIndex:
    """The read model: one row per review, written by upsert (never appended to)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with self._db() as db:
            db.execute("CREATE TABLE IF NOT EXISTS docs (doc_id TEXT PRIMARY KEY, tags TEXT)")

    def _db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def upsert(self, doc_id: str, tags: list[str]) -> None:
        with self._db() as db:
            db.execute("INSERT OR REPLACE INTO docs VALUES (?, ?)", (doc_id, json.dumps(tags)))

    def tags(self) -> dict[str, list[str]]:
        with self._db() as db:
            return {d: json.loads(t) for d, t in db.execute("SELECT doc_id, tags FROM docs")}


class ScriptedModel:
    """Answers from ANSWERS in turn, and logs each call (the log outlives a SIGKILL)."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def calls(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def tag(self, review_id: str) -> list[str]:
        answer = ANSWERS[len(self.calls()) % len(ANSWERS)]
        with self.log.open("a") as out:
            out.write(review_id + "\n")
        return answer


class DiesBeforeCommit(RedisStreamsBroker):
    """The crash of the story: the process dies after its report, just before its ack."""

    async def ack(self, delivery: object) -> None:
        os.kill(os.getpid(), signal.SIGKILL)


async def consume(work: Path, redis_url: str, stream: str, die: bool) -> None:
    """One consumer process: check, call the model, write the index, report, ack."""
    index, model = SearchIndex(work / "index.db"), ScriptedModel(work / "model.log")

    def tag_review(message: Message) -> dict[str, object]:
        tags = model.tag(message.body["review_id"])
        index.upsert(message.body["review_id"], tags)
        return {"tags": tags}

    def rebuild(message: Message, stored: dict[str, list[str]]) -> None:
        # A duplicate: the stored decision goes to the index again, the model is not asked.
        index.upsert(message.body["review_id"], stored["tags"])

    kind = DiesBeforeCommit if die else RedisStreamsBroker
    broker = kind(redis_url, stream, "taggers", "tagger-1")
    settings = ConsumerSettings(tool="tag_review", poll_seconds=0.5, batch=1)
    async with AsyncTooldedup(URL) as td:
        runner = ConsumerRunner(
            broker, td, tag_review, settings, key=field_key(["review_id"]), on_duplicate=rebuild
        )
        try:
            await runner.run(until_idle=True)
        finally:
            await broker.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def main() -> None:
    server = shutil.which("redis-server")
    if server is None:
        sys.exit("this example needs Debian's redis-server: apt-get install redis-server")
    work = Path(tempfile.mkdtemp(prefix="review-tagging-"))
    port = free_port()
    redis_proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(work)],
        stdout=subprocess.DEVNULL,
    )
    redis_url = f"redis://127.0.0.1:{port}/0"
    stream = "reviews-" + uuid.uuid4().hex[:8]  # a new stream per run: each run starts afresh
    try:
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        r1 = {"review_id": "r1", "text": "Arrived in two days, well packed. Five stars."}
        r2 = {"review_id": "r2", "text": "The manual is missing pages."}
        for review in (r1, r2, r2):  # r2 twice: the publisher retried
            client.xadd(stream, review)
        client.close()
        me = [sys.executable, __file__, "--consume", str(work), redis_url, stream]
        first = subprocess.run([*me, "--die"])
        print("first consumer killed by", signal.Signals(-first.returncode).name)
        subprocess.run(me, check=True)
        index, model = SearchIndex(work / "index.db"), ScriptedModel(work / "model.log")
        print("search index:", index.tags())
        assert index.tags() == {"r1": ANSWERS[0], "r2": ANSWERS[1]}
        for review in ("r1", "r2"):
            print(f"model for {review} ran {model.calls().count(review)} time(s)")
        print(f"session: {stream}:taggers")
    finally:
        redis_proc.terminate()
        redis_proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--consume"]:
        folder, url, name = sys.argv[2:5]
        asyncio.run(consume(Path(folder), url, name, die="--die" in sys.argv))
    else:
        main()
