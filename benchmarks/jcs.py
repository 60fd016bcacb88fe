"""RFC 8785 canonical JSON: ours (``a2a_core.card``) against Trail of Bits' ``rfc8785``, in one run.

    python -m benchmarks.jcs [--quick] [--out FILE]

Both canonicalize the same value, in this process, one call after another: a realistic signed
agent card's body (three interfaces, eight skills with non-ASCII text, security schemes, an
extension with numeric parameters; what a signer and each verifier canonicalize once per
card), and a small object (what one extension's parameters are). Every figure is the best of
``rounds`` rounds of ``calls`` calls each, the two taking turns within each round, so that a
machine busy with something else slows both alike. Our whole signing step
(``canonical_card_bytes``: empties dropped, then canonicalized) is timed too, for what a
signature costs here beyond the canonicalization. Both outputs are checked byte for byte
before timing.

Prints a table with ratios and writes it to ``benchmarks/results/jcs.json`` unless ``--out``
says otherwise. ``--quick`` shrinks the counts so that a run takes a second or so (its figures
mean little).
"""

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rfc8785

from a2a_core.card import canonical_card_bytes, canonical_json
from benchmarks.harness import figure, write_results

THEIRS = "rfc8785"
COMMAND = "python -m benchmarks.jcs"

Row = dict[str, Any]


def _skill(n: int, name: str, description: str, tags: list[str], examples: list[str]) -> Any:
    return {
        "id": f"skill-{n}",
        "name": name,
        "description": description,
        "tags": tags,
        "examples": examples,
        "inputModes": ["text/plain", "application/json"],
        "outputModes": ["text/plain", "application/json", "text/markdown"],
    }


def agent_card() -> dict[str, Any]:
    """A v1.0 agent card (ProtoJSON), as a travel-planning agent with a few skills serves it."""
    base = "https://agents.example.com/travel"
    skills = [
        _skill(1, "Plan a trip", "Builds a day-by-day itinerary from dates, a budget and tastes.",
               ["itinerary", "planning"], ["Three days in Zürich in May, museums and food",
                                           "Une semaine à Lisbonne avec des enfants"]),
        _skill(2, "Find flights", "Searches fares across carriers, with layovers and baggage.",
               ["flights", "fares"], ["Cheapest flight Berlin → 東京 next Friday"]),
        _skill(3, "Book hotels", "Compares rooms by price, distance and reviews; books on request.",
               ["hotels", "booking"], ["A quiet hotel near Sagrada Família under €180"]),
        _skill(4, "Local transport", "Routes by train, bus and ferry, with passes that pay off.",
               ["rail", "transit"], ["Is the Swiss Travel Pass worth it for 4 days?"]),
        _skill(5, "Visa check", "Tells the entry rules for a passport and a route, with sources.",
               ["visa", "entry"], ["Do I need a visa for Türkiye with an Indian passport?"]),
        _skill(6, "Weather outlook", "Climate normals and forecasts for the dates of a trip.",
               ["weather"], ["Will it rain in Reykjavík in late September?"]),
        _skill(7, "Budget", "Keeps a running budget in the traveller's currency.",
               ["budget", "currency"], ["Convert ¥48,000 and add it to the food budget"]),
        _skill(8, "Translate phrases", "Phrases for the trip, with pronunciation.",
               ["language"], ["How do I say 'two coffees, please' in Greek? (Ελληνικά)"]),
    ]  # fmt: skip
    return {
        "name": "Travel Planner ✈",
        "description": "Plans, prices and books trips; answers in the traveller's language.",
        "version": "2.3.1",
        "supportedInterfaces": [
            {"url": f"{base}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": f"{base}/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "agents.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        ],
        "provider": {"organization": "Example Travel GmbH", "url": "https://example.com"},
        "documentationUrl": f"{base}/docs",
        "iconUrl": f"{base}/icon.png",
        "capabilities": {
            "streaming": True,
            "pushNotifications": True,
            "extendedAgentCard": True,
            "extensions": [
                {
                    "uri": "https://example.com/ext/pricing/v1",
                    "description": "Quotes carry a price breakdown.",
                    "required": False,
                    "params": {"currencies": ["EUR", "USD", "JPY"], "vat": 0.19, "maxDays": 30},
                }
            ],
        },
        "securitySchemes": {
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "oauth": {
                "oauth2SecurityScheme": {
                    "flows": {
                        "clientCredentials": {
                            "tokenUrl": "https://auth.example.com/token",
                            "scopes": {"trips:read": "See trips", "trips:write": "Book trips"},
                        }
                    }
                }
            },
        },
        "securityRequirements": [{"schemes": {"oauth": {"list": ["trips:read"]}}}],
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": skills,
        "signatures": [{"protected": "eyJhbGciOiJFZERTQSJ9", "signature": "c2lnbmF0dXJl"}],
    }


def card_body() -> dict[str, Any]:
    """What the signatures sign, as a value both canonicalize: the card without its
    signatures (and, this card having none, without empty values)."""
    return {key: value for key, value in agent_card().items() if key != "signatures"}


#: A small object: one extension's parameters.
SMALL: dict[str, Any] = {
    "currencies": ["EUR", "USD", "JPY"],
    "vat": 0.19,
    "maxDays": 30,
    "note": "prix TTC",
}


def _rate(call: Callable[[], Any], calls: int) -> float:
    """Calls per second of one round."""
    started = time.perf_counter()
    for _ in range(calls):
        call()
    return calls / (time.perf_counter() - started)


def measure(calls: int, rounds: int) -> dict[str, dict[str, float]]:
    """The best rate of each contender on each value."""
    body = card_body()
    card = agent_card()
    contenders: dict[str, dict[str, Callable[[], Any]]] = {
        "card": {"ours": lambda: canonical_json(body), THEIRS: lambda: rfc8785.dumps(body)},
        "small": {"ours": lambda: canonical_json(SMALL), THEIRS: lambda: rfc8785.dumps(SMALL)},
        "signing": {"ours": lambda: canonical_card_bytes(card)},
    }
    for value in (body, SMALL):  # the same bytes, or the comparison means nothing
        assert canonical_json(value) == rfc8785.dumps(value)
    assert canonical_card_bytes(card) == rfc8785.dumps(body)
    best: dict[str, dict[str, float]] = {part: {} for part in contenders}
    for _ in range(rounds):
        for part, calls_of in contenders.items():
            for name, call in calls_of.items():
                rate = _rate(call, calls)
                best[part][name] = max(best[part].get(name, 0.0), rate)
    return {part: {k: round(v, 1) for k, v in rates.items()} for part, rates in best.items()}


def row(benchmark: str, unit: str, **values: Any) -> Row:
    return {"benchmark": benchmark, "unit": unit, "table": "jcs", "command": COMMAND, **values}


def rows(best: dict[str, dict[str, float]]) -> list[Row]:
    size = len(canonical_json(card_body()))
    found = [
        row(f"agent card ({size:,} bytes canonical)", "ops/s", **best["card"]),
        row(f"small object ({len(canonical_json(SMALL))} bytes)", "ops/s", **best["small"]),
        row("card signing step (canonical_card_bytes)", "ops/s", ours=best["signing"]["ours"]),
    ]
    for r in found:
        r["us_per_op"] = {k: round(1e6 / v, 2) for k, v in r.items() if k in ("ours", THEIRS)}
    return found


def report(found: list[Row]) -> str:
    head = f"| {'benchmark':<44} | {'unit':<6} | {'ours':>8} | {THEIRS:>8} | ours/{THEIRS} |"
    lines = [head, "|" + "|".join("-" * len(p) for p in head.split("|")[1:-1]) + "|"]
    for r in found:
        ours, theirs = r["ours"], r.get(THEIRS)
        ratio = f"{ours / theirs:.2f}x" if theirs else "-"
        lines.append(
            f"| {r['benchmark']:<44} | {r['unit']:<6} | {figure(ours):>8} | {figure(theirs):>8} "
            f"| {ratio:>12} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny counts: a smoke run")
    parser.add_argument("--calls", type=int, default=2000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (the best one counts)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/jcs.json"))
    args = parser.parse_args(argv)
    calls, rounds = (50, 2) if args.quick else (args.calls, args.rounds)
    started = time.monotonic()
    found = rows(measure(calls, rounds))
    found[0]["setup"] = {"calls": calls, "rounds": rounds, "python": sys.version.split()[0]}
    print(report(found))
    return write_results(args.out, started=started, quick=args.quick, rows=found, targets=[])


if __name__ == "__main__":
    main()
