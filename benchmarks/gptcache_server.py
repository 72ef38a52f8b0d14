"""GPTCache behind the same HTTP shape as ``/v1/check``, for the side-by-side load benchmark.

``python -m benchmarks.gptcache_server --data-dir DIR --port N`` serves ``POST /v1/check``: the
call becomes one prompt, GPTCache looks it up (sqlite + faiss, ``SearchDistanceEvaluation``,
the packaged MiniLM through the same ONNX int8 embedder as tooldedup) and, on a miss, stores it
as the claim, reusing the lookup's embedding. Like GPTCache's own ``gptcache_server``, the
endpoint is ``async`` and calls GPTCache on the event loop: its faiss store is not safe to add
to while another thread searches.
"""

from __future__ import annotations

import argparse
import os
import uuid
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request

__all__ = ["cosine_to_threshold", "create_app", "main"]


def cosine_to_threshold(cosine: float) -> float:
    """GPTCache's similarity_threshold that accepts exactly the hits at or above ``cosine``.

    For unit vectors faiss L2 gives d = 2 - 2cos; the evaluation's rank is 4 - d out of 4.
    """
    return (4.0 - (2.0 - 2.0 * cosine)) / 4.0


def create_app(data_dir: Path, cache_dir: Path, min_cosine: float) -> FastAPI:
    """A FastAPI app answering checks from a GPTCache store in ``data_dir``."""
    from gptcache import Cache, Config
    from gptcache.adapter.adapter import adapt
    from gptcache.manager import manager_factory
    from gptcache.processor.pre import get_prompt
    from gptcache.similarity_evaluation import SearchDistanceEvaluation

    from benchmarks.gptcache_store import gptcache_prompt
    from tooldedup.index.settings import ServiceSettings
    from tooldedup.index.wiring import build_embedder

    # The same embedder as tooldedup's default, built the same way.
    embedder = build_embedder(ServiceSettings(cache_dir=cache_dir))

    def embed(data: str, **_: Any) -> Any:
        return embedder.embed([data])[0]

    manager = manager_factory(
        "sqlite,faiss",
        data_dir=str(data_dir),
        vector_params={"dimension": 384, "top_k": 1},
        eviction_params={"max_size": 100_000_000},
    )
    cache = Cache()
    cache.init(
        pre_embedding_func=get_prompt,
        embedding_func=embed,
        data_manager=manager,
        similarity_evaluation=SearchDistanceEvaluation(),
        # auto_flush would rewrite the whole faiss file every 20 misses; it is kept off.
        config=Config(similarity_threshold=cosine_to_threshold(min_cosine), auto_flush=10**9),
    )
    app = FastAPI()

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/check")
    async def check(request: Request) -> dict[str, Any]:
        body = await request.json()
        claimed: list[str] = []

        def claim(*_: Any, **__: Any) -> str:
            claimed.append("call_" + uuid.uuid4().hex)
            return claimed[0]

        def store(data: Any, update: Any, *_: Any, **__: Any) -> Any:
            update(data)
            return data

        prompt = gptcache_prompt(body["tool"], body["args"])
        answer = adapt(claim, lambda data: data, store, prompt=prompt, cache_obj=cache)
        if claimed:
            return {"decision": "proceed", "call_id": answer, "match": None}
        return {"decision": "duplicate", "call_id": answer, "match": {"stage": "semantic"}}

    return app


def main() -> None:
    """Serve GPTCache on 127.0.0.1."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "tooldedup")
    parser.add_argument("--min-cosine", type=float, default=0.85)
    args = parser.parse_args()
    import uvicorn

    app = create_app(args.data_dir, args.cache_dir, args.min_cosine)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
