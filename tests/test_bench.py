"""``bigtwo bench`` runs and reports every figure it documents (a smoke run, not a timing test)."""

from __future__ import annotations

import json

from bigtwo_cli import main


def test_bench_json_has_every_figure(capsys) -> None:
    assert main(["bench", "--quick", "--repeats", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= {"game", "aec", "vector", "vector_copy", "memory"}
    assert sorted(result["vector"], key=int) == ["1", "64", "1024", "4096"] and list(result["vector_copy"]) == ["1024"]
    rates = [result["game"], result["aec"], *result["vector"].values(), *result["vector_copy"].values()]
    assert all(rate > 0 for rate in rates)
    assert result["memory"]["engine_total_mib"] > result["memory"]["state_mib"] > 0
