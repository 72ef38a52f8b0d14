"""Loading helpers for calibration/build_dataset.py: fetch, open and parse the source corpora.

Standard library only. Sources: the PyPI packages bfcl-eval (Berkeley Function Calling
Leaderboard data) and nestful-wrapper (ships ComplexFuncBench); both Apache-2.0.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

SOURCES = {"bfcl-eval": "2026.3.23", "nestful-wrapper": "0.1.7"}
BFCL_DIR = "bfcl_eval/data/possible_answer/"
BFCL_FILES = [
    "BFCL_v4_simple_python.json",
    "BFCL_v4_multiple.json",
    "BFCL_v4_parallel.json",
    "BFCL_v4_parallel_multiple.json",
    "BFCL_v4_live_simple.json",
    "BFCL_v4_live_multiple.json",
    "BFCL_v4_live_parallel.json",
    "BFCL_v4_live_parallel_multiple.json",
]
BFCL_MULTI_TURN = "BFCL_v4_multi_turn_base.json"
CFB_MEMBER = "data_v1/complexfuncbench/complexfuncbench-data.json"

# Alternatives that BFCL accepts but that are not the same request; reviewed by hand.
# Key: (function, argument path); value: rejected alternatives, or {"*"} for the whole set.
BLOCKED = {
    ("Events_3_FindEvents", "event_type"): {"*"},
    ("Music_3_PlayMedia", "track"): {"*"},
    ("Media_3_FindMovies", "genre"): {"*"},
    ("Movies_1_FindMovies", "genre"): {"*"},
    ("Movies_3_FindMovies", "genre"): {"*"},
    ("Services_4_FindProvider", "type"): {"*"},
    ("get_current_weather", "unit"): {"*"},
    ("getDataForProfessional", "districts_name"): {"*"},
    ("text_to_speech.convert", "text"): {"*"},
    ("cmd_controller.execute", "command"): {"*"},
    ("get_stock_data", "symbol"): {"*"},
    ("recipe_prep_time", "recipe"): {"*"},
    ("recipe_nutrition_info", "recipe"): {"*"},
    ("get_plants_for_slope", "slope_type"): {"*"},
    ("history_eu.fetch_events", "region"): {"*"},
    ("deck_of_cards.odds", "deck_type"): {"*"},
    ("game_valuation", "condition"): {"*"},
    ("gamespot.getAverageUserScore", "platform"): {"*"},
    ("get_recipe", "dish_name"): {"*"},
    ("lawsuit_details.find", "case_type"): {"*"},
    ("play_spotify_song", "query"): {"track:Shape of You artist:Ed Sheeran"},
    ("recall_memory_search", "query"): {"birthday"},
    ("get_adriel_detail_experience_and_education", "experience_or_education_name"): {"Internship"},
    ("recipe.find", "mainIngredient"): {"apple pie"},
    ("find_exhibition", "art_form"): {"modern sculpture"},
    ("geometry.calculate_area_circle", "unit"): {"centimeters", "cm"},
    ("recipe_search.find", "dish"): {"Vegan Salad", "vegan salad"},
    ("hotel_booking", "location"): {"NYC", "New York City"},
    ("weather.humidity_forecast", "location"): {"FL"},
    ("locate_tallest_mountains", "location"): {"CO"},
    ("nature_reserve.find_nearby", "location"): {"CA"},
    ("walmart.check_price", "items"): {'["pumpkin", "dozen eggs"]'},
    ("timezone.convert", "from_timezone"): {"Eastern Standard Time", "EST"},
    ("timezone.convert", "to_timezone"): {
        "British Summer Time",
        "BST",
        "Greenwich Mean Time",
        "GMT",
    },
}
SENTINELS = {"dontcare", "any", "all", "n/a", "global"}
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
REF = re.compile(r"^\$(var\d+)\.(.+)\$$")


def fetch_packages(cache: Path) -> dict[str, Path]:
    """Download each source package with `pip download --no-deps` unless already cached."""
    cache.mkdir(parents=True, exist_ok=True)
    found: dict[str, Path] = {}
    for name, version in SOURCES.items():
        stem = f"{name.replace('-', '_')}-{version}"
        hits = sorted(p for p in cache.iterdir() if p.name.lower().startswith(stem))
        if not hits:
            cmd = [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--disable-pip-version-check",
                "-d",
                str(cache),
                f"{name}=={version}",
            ]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            hits = sorted(p for p in cache.iterdir() if p.name.lower().startswith(stem))
        if not hits:
            raise SystemExit(f"pip download produced no archive for {name}=={version}")
        found[name] = hits[0]
    return found


def read_member(archive: Path, suffix: str) -> bytes:
    """Return the bytes of the archive member whose path ends with suffix (wheel or sdist)."""
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zf:
            for name in zf.namelist():
                if name.endswith(suffix):
                    return zf.read(name)
    else:
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                handle = tf.extractfile(member) if member.name.endswith(suffix) else None
                if handle is not None:
                    return handle.read()
    raise SystemExit(f"{suffix} not found in {archive.name}")


def norm(value: Any) -> Any:
    """Canonical comparison form: casefolded trimmed strings, numbers as float, sorted keys."""
    if isinstance(value, bool) or value is None:
        return ("const", value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return " ".join(value.casefold().split())
    if isinstance(value, list):
        return tuple(norm(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, repr(norm(v))) for k, v in value.items()))
    return repr(value)


def parse_date(text: str) -> tuple[tuple[int, int, int] | None, set[tuple[int, int, int]]]:
    """Parse a full date string; return (US reading, set of all valid readings)."""
    t = text.strip().lower()
    cands: list[tuple[int, int, int]] = []
    us = None
    if m := re.fullmatch(r"(\d{4})[-/](\d{1,2})[-/](\d{1,2})", t):
        cands = [(int(m[1]), int(m[2]), int(m[3]))]
        us = cands[0]
    elif m := re.fullmatch(r"(\d{1,2})[-/](\d{1,2})[-/](\d{4})", t):
        a, b, y = int(m[1]), int(m[2]), int(m[3])
        us = (y, a, b)
        cands = [(y, a, b), (y, b, a)]
    elif m := re.fullmatch(r"([a-z]+)\.?\s*(\d{1,2})(?:st|nd|rd|th)?,?\s*(\d{4})", t):
        cands = [(int(m[3]), _month(m[1]), int(m[2]))]
        us = cands[0]
    elif m := re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]+),?\s+(\d{4})", t):
        cands = [(int(m[3]), _month(m[2]), int(m[1]))]
        us = cands[0]
    valid = {c for c in cands if 1 <= c[1] <= 12 and 1 <= c[2] <= 31}
    return (us if us in valid else None), valid


def _month(word: str) -> int:
    """Month number for an English month name or abbreviation, 0 when unknown."""
    return MONTHS.index(word[:3]) + 1 if word[:3] in MONTHS else 0


def parse_time(text: str) -> tuple[int, int] | None:
    """Parse '5 pm', '7:30 pm' or '17:00' into (hour, minute)."""
    m = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?\s*([ap])?\.?\s*(m\.?)?", text.strip().lower())
    if not m or (m[2] is None and m[3] is None):
        return None
    hour = int(m[1]) % 12 + (12 if m[3] == "p" else 0) if m[3] else int(m[1])
    return hour, int(m[2] or 0)


def _numbers(text: str) -> list[float]:
    """Sorted numbers appearing in a string."""
    return sorted(float(x) for x in re.findall(r"\d+(?:\.\d+)?", text))


def _string_key(text: str) -> tuple[str, object]:
    """What must match between equivalent strings: the date, the time, or the numbers."""
    us, valid = parse_date(text)
    if us or valid:
        return "date", us or (next(iter(valid)) if len(valid) == 1 else None)
    if (tm := parse_time(text)) is not None:
        return "time", tm
    return "nums", _numbers(text)


def equivalent_alternatives(fn: str, path: str, alts: list) -> list:
    """Filter one BFCL possible_answer set down to alternatives that mean the same request."""
    blocked = BLOCKED.get((fn, path), set())
    if "*" in blocked:
        return []
    keep = []
    for a in alts:
        if a == "" or a is None or isinstance(a, dict):
            continue
        if isinstance(a, str) and (
            a.casefold() in SENTINELS
            or a in blocked
            or "\\u" in a
            or (len(a) > 1 and a[0] == a[-1] and a[0] in "'\"")
        ):
            continue
        if isinstance(a, list) and (
            json.dumps(a) in blocked or any(isinstance(x, list | dict) for x in a)
        ):
            continue
        if json.dumps(a) not in [json.dumps(k) for k in keep]:
            keep.append(a)
    comps = {c.strip() for a in keep if isinstance(a, str) for c in a.split(",")[1:]}
    keep = [a for a in keep if not (isinstance(a, str) and a.strip() in comps)]
    if any(isinstance(a, str) and _string_key(a)[0] == "date" for a in keep):
        keep = [a for a in keep if isinstance(a, str) and _string_key(a)[0] == "date"]
    if len(keep) < 2:
        return []
    ref = keep[0]
    out = [ref]
    for a in keep[1:]:
        if type(a) is not type(ref) and not (_is_num(a) and _is_num(ref)):
            continue
        if _is_num(a):
            ok = float(a) == float(ref)
        elif isinstance(a, bool):
            ok = a == ref
        elif isinstance(a, str):
            us, valid = parse_date(a)
            if _string_key(ref)[0] == "date":
                ok = us == _string_key(ref)[1] or valid == {_string_key(ref)[1]}
            else:
                ok = _string_key(a) == _string_key(ref)
        else:
            ok = len(a) == len(ref) and _numbers(json.dumps(a)) == _numbers(json.dumps(ref))
        if ok:
            out.append(a)
    return out if len(out) > 1 else []


def _is_num(v: object) -> bool:
    """True for int/float but not bool."""
    return isinstance(v, int | float) and not isinstance(v, bool)


def equivalence_classes(equivs: list[dict]) -> dict[str, str]:
    """Union-find over accepted string alternatives: normalised value -> class representative."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for rec in equivs:
        members = [norm(a) for a in rec["alts"] if isinstance(a, str)]
        for m in members[1:]:
            ra, rb = sorted((find(members[0]), find(m)))
            parent[rb] = ra
    return {x: find(x) for x in list(parent)}


def _canonical(fn: str, spec: dict, prefix: str, equivs: list) -> dict:
    """Build one concrete call from a possible_answer spec, collecting equivalence sets."""
    args = {}
    for key, alts in spec.items():
        path = f"{prefix}{key}"
        if not isinstance(alts, list):
            args[key] = alts
            continue
        if len(alts) == 1 and isinstance(alts[0], dict):
            args[key] = _canonical(fn, alts[0], path + ".", equivs)
            continue
        good = equivalent_alternatives(fn, path, alts)
        if good:
            equivs.append((path, good))
            args[key] = good[0]
            continue
        concrete = [a for a in alts if a != "" and a is not None and not isinstance(a, dict)]
        if concrete:
            args[key] = concrete[0]
    return args


def load_bfcl(archive: Path) -> tuple[list[dict], list[dict]]:
    """Return (calls, equivalence records) from the BFCL single-turn possible_answer files."""
    calls, equivs = [], []
    for fname in BFCL_FILES:
        for line in read_member(archive, BFCL_DIR + fname).decode().splitlines():
            rec = json.loads(line)
            for idx, entry in enumerate(rec["ground_truth"]):
                for fn, spec in entry.items():
                    sets: list = []
                    args = _canonical(fn, spec, "", sets)
                    call = {
                        "source": f"bfcl:{fname}:{rec['id']}",
                        "session": rec["id"],
                        "tool": fn,
                        "args": args,
                        "pos": idx,
                    }
                    calls.append(call)
                    for path, good in sets:
                        equivs.append({**call, "path": path, "alts": good})
    return calls, equivs


def load_bfcl_multi_turn(archive: Path) -> list[dict]:
    """Return keyword-only calls parsed from the BFCL multi-turn base ground truth."""
    calls = []
    for line in read_member(archive, BFCL_DIR + BFCL_MULTI_TURN).decode().splitlines():
        rec = json.loads(line)
        for turn in rec["ground_truth"]:
            for text in turn:
                node = ast.parse(text, mode="eval").body
                if not isinstance(node, ast.Call) or node.args or not node.keywords:
                    continue
                args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
                calls.append(
                    {
                        "source": f"bfcl:{BFCL_MULTI_TURN}:{rec['id']}",
                        "session": rec["id"],
                        "tool": ast.unparse(node.func),
                        "args": args,
                        "pos": len(calls),
                    }
                )
    return calls


def _resolve(env: dict, text: str) -> object:
    """Resolve a NESTFUL '$varN.path$' reference against the recorded tool responses."""
    m = REF.match(text)
    if not m:
        return text
    obj = env.get(m[1])
    for part in m[2].split("."):
        if isinstance(obj, list):
            obj = obj[0] if obj else None
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj if isinstance(obj, str | int | float) else text


def load_cfb(archive: Path) -> list[dict]:
    """Return ComplexFuncBench calls with variable references resolved to concrete values."""
    data = json.loads(read_member(archive, CFB_MEMBER))
    calls = []
    for idx, sample in enumerate(data):
        env = {step["label"]: step.get("response") for step in sample["output"]}
        for pos, step in enumerate(sample["output"]):
            args = {
                k: _resolve(env, v) if isinstance(v, str) else v
                for k, v in step["arguments"].items()
            }
            calls.append(
                {
                    "source": f"complexfuncbench:{idx}",
                    "session": f"cfb{idx}",
                    "tool": step["name"],
                    "args": args,
                    "pos": pos,
                }
            )
    return calls
