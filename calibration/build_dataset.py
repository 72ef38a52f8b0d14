"""Build calibration/data/pairs.jsonl: labelled duplicate/distinct pairs of agent tool calls.

Run from the repository root (network access to PyPI is needed unless --cache holds the wheels):
    python -m tooldedup.calibration.build_dataset --out calibration/data/pairs.jsonl [--cache DIR]
Standard library only; output is deterministic for a given --seed.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import hashlib
import itertools
import json
import random
import re
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from tooldedup.calibration import dataset_sources as ds

HERE = Path(__file__).resolve().parent
PARAPHRASES = HERE / "data" / "paraphrases.jsonl"
# Hand-written hard negatives and hard paraphrases, each against a hand-written entry's call.
HARD_PAIRS = HERE / "data" / "hard_pairs.jsonl"
# Hand-written sets since 0.3: a base call with its paraphrases, different content, number
# variants, hard negatives and hard paraphrases (``hard``), each set reviewed by a second
# writer. Read after the rest, so that the pairs built before keep their ids.
TEXT_SETS = HERE / "data" / "text_sets.jsonl"
# Each release's sets come after the last, so the ids of earlier pairs never change.
MORE_TEXT_SETS = HERE / "data" / "text_sets_2.jsonl"
THIRD_TEXT_SETS = HERE / "data" / "text_sets_3.jsonl"
# In the order they are read, each with the name of its random stream.
SET_FILES: tuple[tuple[str, Path], ...] = (
    ("sets", TEXT_SETS),
    ("sets_2", MORE_TEXT_SETS),
    ("sets_3", THIRD_TEXT_SETS),
)
TARGETS = {"reissue": 700, "equivalent": 280, "natural": 560, "critical": 560}
# Kinds built from hand-written entries: split by entry, never by pair.
TEXT_KINDS = frozenset({"paraphrase", "different", "hard_negative"})
LABELS = {
    "reissue": "duplicate",
    "equivalent": "duplicate",
    "paraphrase": "duplicate",
    "natural": "distinct",
    "critical": "distinct",
    "different": "distinct",
    "hard_negative": "distinct",
}
# Attempt identifiers only: a retry gets fresh ones. Timestamps and nonces are arguments
# (a stored pair cannot hold "now"; the HTTP tests cover attempt stamps).
VOLATILE = [
    "request_id",
    "trace_id",
    "span_id",
    "correlation_id",
    "idempotency_key",
    "tool_call_id",
]
CRITICAL_KEY = re.compile(
    r"(^|_)id$|Id$|amount|price|qty|quantity|count|date|time|email|^to$|recipient|receiver|"
    r"path|file|folder|dest|source|city|location|query|adults|number|rooms|account|symbol|"
    r"stock|booking|ticket|order|user|destination|from|airport|zip|value|limit|start|channel",
    re.I,
)
DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(T[\d:]+(?:Z|[+-]\d{2}:\d{2})?)?")
CLOCK = re.compile(r"(\d{2}):(\d{2})")
HEX = "0123456789abcdef"
ALNUM = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789"
NAMES = [
    "alice.nguyen",
    "b.okafor",
    "carlos.mendes",
    "dana.kowalski",
    "e.fischer",
    "farah.haddad",
    "g.rossi",
    "hiro.tanaka",
    "ines.garcia",
    "j.lindqvist",
    "kwame.asante",
    "li.wei",
]


def volatile_value(name: str, rng: random.Random) -> object:
    """A fresh random-looking value for a volatile envelope field."""

    def h(n: int) -> str:
        return "".join(rng.choice(HEX) for _ in range(n))

    if name == "request_id":
        return f"{h(8)}-{h(4)}-4{h(3)}-{rng.choice('89ab')}{h(3)}-{h(12)}"
    if name == "tool_call_id":
        return "call_" + "".join(rng.choice(ALNUM) for _ in range(24))
    return {"trace_id": h(32), "span_id": h(16), "correlation_id": h(24)}.get(name, "idem_" + h(20))


def leaves(obj: object, path: tuple = ()) -> list[tuple[tuple, object]]:
    """All (path, scalar) leaves of a nested args structure."""
    if isinstance(obj, dict):
        return [lf for k, v in obj.items() for lf in leaves(v, (*path, k))]
    if isinstance(obj, list):
        return [lf for i, v in enumerate(obj) for lf in leaves(v, (*path, i))]
    return [(path, obj)]


def set_at(obj: dict, path: tuple, value: object) -> None:
    """Set the leaf at path inside a nested args structure."""
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def reorder(obj: Any, rng: random.Random) -> Any:
    """Copy of obj with the keys of every dict shuffled (a different order where possible)."""
    if isinstance(obj, list):
        return [reorder(v, rng) for v in obj]
    if not isinstance(obj, dict):
        return obj
    keys = list(obj)
    if len(keys) > 1:
        while keys == list(obj):
            rng.shuffle(keys)
    return {k: reorder(obj[k], rng) for k in keys}


def respace(text: str, rng: random.Random) -> str:
    """Whitespace-only rewrite: padding and/or a doubled inner space."""
    if " " in text.strip() and rng.random() < 0.5:
        spots = [i for i, c in enumerate(text) if c == " "]
        i = rng.choice(spots)
        text = text[:i] + "  " + text[i + 1 :]
        return text if rng.random() < 0.5 else text + " "
    return rng.choice([" " + text, text + " ", "  " + text + " ", text + "\n"])


def reissue(args: dict, rng: random.Random) -> tuple[dict, dict, str]:
    """Mechanical re-issue of a call: reordered keys, int->float, volatile field, whitespace."""
    a, b, notes = copy.deepcopy(args), copy.deepcopy(args), []
    ints = [p for p, v in leaves(b) if isinstance(v, int) and not isinstance(v, bool)]
    texts = [
        p
        for p, v in leaves(b)
        if isinstance(v, str) and re.search(r"[A-Za-z]", v) and (" " in v or len(v) <= 40)
    ]
    ops = (["float"] if ints else []) + (["space"] if texts else [])
    ops = rng.sample(ops, rng.randint(0, len(ops)))
    if not ops or len(b) < 2 or rng.random() < 0.7:
        ops.append("volatile")
    for op in ops:
        if op == "float":
            for p in rng.sample(ints, rng.randint(1, len(ints))):
                set_at(b, p, float(_get(b, p)))
                notes.append(f"{'.'.join(map(str, p))} int->float")
        elif op == "space":
            for p in rng.sample(texts, rng.randint(1, min(2, len(texts)))):
                set_at(b, p, respace(_get(b, p), rng))
                notes.append(f"whitespace in {'.'.join(map(str, p))}")
        else:
            name = rng.choice([n for n in VOLATILE if n not in b])
            if rng.random() < 0.4:
                a[name] = volatile_value(name, rng)
            notes.append(f"{name} {'changed' if name in a else 'added'}")
            b[name] = volatile_value(name, rng)
    shuffled = reorder(b, rng)
    if json.dumps(shuffled) != json.dumps(b):
        b = shuffled
        notes.append("keys reordered")
    return a, b, "; ".join(notes)


def _get(obj: Any, path: tuple) -> Any:
    """Leaf value at path."""
    for key in path:
        obj = obj[key]
    return obj


def mutate(tool: str, key: str, value: object, pools: dict, rng: random.Random) -> object:
    """A plausible different value for one critical argument, or None when none fits."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        if re.search(r"id$|Id$", key):
            return _swap(tool, key, value, pools, rng) or value + rng.choice([1, 2, 7, 13])
        return rng.choice([value + 1, value + 2, value * 2, value + 10])
    if isinstance(value, float):
        if re.search(r"lat|lon", key, re.I):
            return _swap(tool, key, value, pools, rng)
        new = round(value * rng.choice([0.5, 0.8, 1.25, 1.5, 2.0]), 2)
        return new if new != value else value + 1.0
    if not isinstance(value, str) or not value.strip() or len(value.split()) > 6:
        return None
    if m := DATE.fullmatch(value):
        day = dt.date.fromisoformat(m[1]) + dt.timedelta(days=rng.choice([-7, -1, 1, 2, 3, 7, 14]))
        return day.isoformat() + (m[2] or "")
    if m := CLOCK.fullmatch(value):
        return f"{(int(m[1]) + rng.choice([1, 2, 3, 21, 22])) % 24:02d}:{m[2]}"
    if re.fullmatch(r"[^@\s]+@[^@\s]+\.\w+", value):
        local, domain = value.split("@")
        return rng.choice([n for n in NAMES if n != local]) + "@" + domain
    m = re.fullmatch(r"([A-Za-z]{0,8}[_#-]?|\+?[\d\s-]{6,})(\d+)", value)
    if m and (m[1] or len(value) > 3):
        num = (int(m[2]) + rng.choice([1, 2, 3, 5, 9])) % 10 ** len(m[2])
        return m[1] + str(num).zfill(len(m[2]))
    return _swap(tool, key, value, pools, rng)


def _swap(tool: str, key: str, value: object, pools: dict, rng: random.Random) -> object:
    """Another real value seen for the same argument (same tool first) that is not equivalent."""
    for pool in (pools.get((tool, key), []), pools.get(("*", key), [])):
        options = [v for v in pool if distinct_values(value, v, pools["_eq"])]
        if options:
            return rng.choice(options)
    return None


def distinct_values(x: object, y: object, eqclass: dict) -> bool:
    """True when two argument values clearly ask for different things."""
    nx, ny = ds.norm(x), ds.norm(y)
    both_num = isinstance(nx, float) and isinstance(ny, float)
    if nx == ny or (type(x) is not type(y) and not both_num):
        return False
    if isinstance(nx, str) and isinstance(ny, str):
        if nx in ny or ny in nx or eqclass.get(nx, nx) == eqclass.get(ny, ny):
            return False
    return True


def truly_distinct(a: dict, b: dict, eqclass: dict) -> bool:
    """True when two real calls differ in at least one shared argument in a clear way."""
    la, lb = dict(leaves(a)), dict(leaves(b))
    shared = [p for p in la if p in lb]
    return any(distinct_values(la[p], lb[p], eqclass) for p in shared)


def critical(call: dict, pools: dict, rng: random.Random) -> tuple[dict, str] | None:
    """Change exactly one critical argument of a call to another plausible value."""
    cands = [
        (p, v)
        for p, v in leaves(call["args"])
        if p
        and isinstance(p[-1], str)
        and not re.search(r"token$|password|secret|api_key", p[-1], re.I)
    ]
    rng.shuffle(cands)
    cands.sort(key=lambda pv: not CRITICAL_KEY.search(pv[0][-1]))
    for path, value in cands:
        new = mutate(call["tool"], path[-1], value, pools, rng)
        if new is not None and distinct_values(value, new, pools["_eq"]):
            b = copy.deepcopy(call["args"])
            set_at(b, path, new)
            return b, f"{'.'.join(map(str, path))}: {value!r} -> {new!r}"
    return None


def change_number(text: str, rng: random.Random) -> str | None:
    """Change one number or clock time inside free text, or None if it has none."""
    hits = list(re.finditer(r"(?<![\w.,-])(\d{1,5})(?:\.\d+)?(?![\w%]|[.,]\d)", text))
    if not hits:
        return None
    m = rng.choice(hits)
    n, k = int(m[1]), rng.choice([1, 2])
    if re.match(r"\s*[AaPp]\.?[Mm]", text[m.end() :]):
        new = str((n - 1 + k) % 12 + 1)
    elif text[m.end() : m.end() + 1] == ":":
        new = str((n + k) % 24).zfill(len(m[1]))
    else:
        new = str(n + rng.choice([1, 2, 5, 10]))
    return text[: m.start()] + new + text[m.end(1) :]


def load_handwritten(path: Path = PARAPHRASES) -> list[dict]:
    """Read one of the hand-written JSON Lines files (entries, hard pairs or sets)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def text_pairs(entries: list[dict], real: set, rng: random.Random) -> list[dict]:
    """Paraphrase (duplicate) and different-content (distinct) pairs from hand-written entries."""
    out = []
    for e in entries:
        if e["source"] != "handwritten" and _key(e["tool"], e["args"]) not in real:
            raise SystemExit(f"paraphrase entry {e['id']} does not match a real call")
        field, base = e["field"], e["args"]
        variants = [base] + [{**base, field: text} for text in e["rewrites"]]
        for x, y in itertools.combinations(variants, 2):
            out.append(_pair("paraphrase", e, x, y, f"{field} reworded, same meaning"))
        for other in e.get("different", []):
            diff = {**base, **other} if isinstance(other, dict) else {**base, field: other}
            for x in variants[:2]:
                out.append(_pair("different", e, x, diff, e.get("note") or f"different {field}"))
        numbered = e.get("number_variants") or [change_number(base[field], rng)]
        for text in filter(None, numbered):
            out.append(
                _pair(
                    "different",
                    e,
                    base,
                    {**base, field: text},
                    f"only a number/time inside {field} differs",
                )
            )
    return out


def _pair(kind: str, e: dict, a: dict, b: dict, note: str) -> dict:
    """Assemble one output record (id filled in later).

    Pairs built from one hand-written entry share its id as their ``group``, so that the
    calibration split keeps each entry's texts on one side.
    """
    record = {
        "id": "",
        "source": e["source"],
        "tool": e["tool"],
        "a": a,
        "b": b,
        "label": LABELS[kind],
        "kind": kind,
        "note": note,
    }
    if kind in TEXT_KINDS:
        record["group"] = e["id"]
    return record


def _key(tool: str, args: dict) -> str:
    """Order-insensitive identity of a call."""
    return tool + json.dumps(args, sort_keys=True, ensure_ascii=False)


def build(cache: Path, seed: int) -> list[dict]:
    """Generate every pair kind and return the records in a fixed order."""
    pk = ds.fetch_packages(cache)
    single, equivs = ds.load_bfcl(pk["bfcl-eval"])
    multi = ds.load_bfcl_multi_turn(pk["bfcl-eval"])
    cfb = ds.load_cfb(pk["nestful-wrapper"])
    hand = load_handwritten()
    rngs = {
        k: random.Random(f"{seed}:{k}") for k in [*LABELS, "text", *(name for name, _ in SET_FILES)]
    }
    eqclass = ds.equivalence_classes(equivs)
    real = {_key(c["tool"], c["args"]): c for c in single + multi + cfb if c["args"]}
    calls = list(real.values())
    hand_calls = [
        {"source": "handwritten", "session": e["id"], "tool": e["tool"], "args": e["args"]}
        for e in hand
        if e["source"] == "handwritten"
    ]
    pools: dict = defaultdict(list)
    for c in calls + hand_calls:
        for path, v in leaves(c["args"]):
            if path and isinstance(path[-1], str) and v not in pools[(c["tool"], path[-1])]:
                pools[(c["tool"], path[-1])].append(v)
                if v not in pools[("*", path[-1])]:
                    pools[("*", path[-1])].append(v)
    pools["_eq"] = eqclass
    out = []
    rng = rngs["reissue"]
    n_hand = min(80, len(hand_calls))
    base = rng.sample(calls, TARGETS["reissue"] - n_hand) + rng.sample(hand_calls, n_hand)
    for c in base:
        a, b, note = reissue(c["args"], rng)
        out.append(_pair("reissue", c, a, b, note))
    rng = rngs["equivalent"]
    uniq = {}
    for rec in equivs:
        uniq.setdefault((rec["tool"], rec["path"], json.dumps(rec["alts"])), rec)
    for rec in rng.sample(list(uniq.values()), min(TARGETS["equivalent"], len(uniq))):
        i, j = (
            (0, rng.randrange(1, len(rec["alts"])))
            if rng.random() < 0.7
            else rng.sample(range(len(rec["alts"])), 2)
        )
        a, b = copy.deepcopy(rec["args"]), copy.deepcopy(rec["args"])
        path = tuple(rec["path"].split("."))
        set_at(a, path, rec["alts"][i])
        set_at(b, path, rec["alts"][j])
        note = f"{rec['path']}: {rec['alts'][i]!r} ~ {rec['alts'][j]!r} (BFCL possible_answer)"
        out.append(_pair("equivalent", rec, a, b, note))
    out += natural_pairs(single, multi, cfb, eqclass, rngs["natural"])
    rng = rngs["critical"]
    side = [c for c in calls if c["source"].startswith("bfcl")]
    cfbs = [c for c in calls if not c["source"].startswith("bfcl")]
    want = TARGETS["critical"]
    crit = []
    for group, share in ((hand_calls, 0.1), (cfbs, 0.35), (side, 1.0)):
        picked, quota = 0, min(round(want * share), want - len(crit))
        for c in rng.sample(group, len(group)):
            res = critical(c, pools, rng) if picked < quota else None
            if res:
                crit.append(_pair("critical", c, c["args"], res[0], res[1]))
                picked += 1
    out += crit
    out += text_pairs(hand, set(real), rngs["text"])
    out += hard_pairs(hand, load_handwritten(HARD_PAIRS))
    for name, set_file in SET_FILES:
        sets = load_handwritten(set_file)
        out += text_pairs(sets, set(real), rngs[name])
        out += hard_pairs(sets, [{**h, "base": e["id"]} for e in sets for h in e["hard"]])
    return finalize(out)


def hard_pairs(hand: list[dict], lines: list[dict]) -> list[dict]:
    """Minimal pairs: one hand-written call, one text changed (``base`` names the call)."""
    entries = {e["id"]: e for e in hand}
    out = []
    for h in lines:
        e = entries[h["base"]]
        changed = {**e["args"], e["field"]: h["text"]}
        note = f"{e['field']}: {h['subkind'].replace('_', ' ')}"
        out.append(_pair(h["kind"], e, e["args"], changed, note))
    return out


def natural_pairs(
    single: list, multi: list, cfb: list, eqclass: dict, rng: random.Random
) -> list[dict]:
    """Two different real calls to the same tool: same session first, then across sessions."""
    buckets: dict[str, list] = {"cfb": [], "bfcl": [], "cross": []}
    for name, calls in (("cfb", cfb), ("bfcl", single + multi)):
        by = defaultdict(list)
        for c in calls:
            by[(c["session"], c["tool"])].append(c)
        for group in by.values():
            for x, y in itertools.combinations(group, 2):
                if truly_distinct(x["args"], y["args"], eqclass):
                    buckets[name].append((x, y))
    by_tool = defaultdict(list)
    for c in single + multi:
        by_tool[(c["source"].split(":")[1], c["tool"])].append(c)
    for group in by_tool.values():
        for _ in range(min(3, len(group) // 2)):
            x, y = rng.sample(group, 2)
            if x["session"] != y["session"] and truly_distinct(x["args"], y["args"], eqclass):
                buckets["cross"].append((x, y))
    out = []
    for name, share in (("cfb", 0.45), ("bfcl", 0.35), ("cross", 0.2)):
        per_tool = Counter()
        pairs = rng.sample(buckets[name], len(buckets[name]))
        quota = round(TARGETS["natural"] * share)
        for x, y in pairs:
            if len([o for o in out if o["note"].startswith(name)]) >= quota:
                break
            if per_tool[x["tool"]] >= 40:
                continue
            per_tool[x["tool"]] += 1
            src = (
                x["source"]
                if x["session"] == y["session"]
                else (f"{x['source']},{y['source'].rsplit(':', 1)[1]}")
            )
            note = f"{name}: two real calls" + (" in one session" if name != "cross" else "")
            out.append({**_pair("natural", x, x["args"], y["args"], note), "source": src})
    return out


def finalize(records: list[dict]) -> list[dict]:
    """Drop exact repeats, order by kind, assign ids and validate every line."""
    order = list(LABELS)
    seen, out, per_kind = set(), [], Counter()
    for r in sorted(records, key=lambda r: order.index(r["kind"])):
        k = (r["tool"], json.dumps(r["a"]), json.dumps(r["b"]))
        if k in seen:
            continue
        seen.add(k)
        n = per_kind[r["kind"]]
        per_kind[r["kind"]] += 1
        digest = hashlib.sha1(repr(k).encode()).hexdigest()[:6]
        r["id"] = f"{r['kind']}-{n:04d}-{digest}"
        out.append(r)
    for r in out:
        validate(r)
    return out


def validate(r: dict) -> None:
    """Raise if a record breaks the documented format."""
    ok = (
        isinstance(r["a"], dict)
        and isinstance(r["b"], dict)
        and r["tool"]
        and r["label"] == LABELS.get(r["kind"])
        and r["id"]
        and r["note"]
        and re.match(r"^(bfcl:[^:]+:.+|complexfuncbench:[\d,]+|handwritten)$", r["source"])
        and json.dumps(r["a"]) != json.dumps(r["b"])
    )
    if not ok:
        raise SystemExit(f"invalid record: {json.dumps(r)[:300]}")


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "data" / "pairs.jsonl")
    parser.add_argument("--cache", type=Path, help="directory for the downloaded wheels")
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        records = build(args.cache or Path(tmp), args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    args.out.write_text(text)
    check = [json.loads(line) for line in args.out.read_text().splitlines()]
    for r in check:
        validate(r)
    counts = Counter((r["kind"], r["label"]) for r in check)
    for (kind, label), n in sorted(counts.items(), key=lambda kv: list(LABELS).index(kv[0][0])):
        print(f"{kind:<11} {label:<9} {n:>5}  {100 * n / len(check):5.1f}%")
    labels = dict(Counter(r["label"] for r in check))
    size = len(text.encode()) / 1e6
    print(f"total {len(check)} pairs ({labels}), {size:.2f} MB, 0 invalid lines -> {args.out}")


if __name__ == "__main__":
    main()
