"""No API key value ever appears in logs, results, reports, caches or messages.

A run against the mock with a distinctive key, its report, a refused ``-M api_key=<key>`` and a run with a wrong key
that the server rejects with 401 (its message masks the key, as OpenAI's does); then every file
under the run folders, the report folder and inspect's cache/data folders — eval logs unzipped, parquet read back —
and everything printed to stdout/stderr is searched for both keys.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios

SECRET = "sk-test-SECRET-1234567890"
WRONG = "sk-test-WRONGKEY-0987654321"


def texts(path: Path) -> list[str]:
    """Every text a file holds: zip members decompressed, parquet tables rendered, other files as bytes."""
    data = path.read_bytes()
    out = [data.decode("utf-8", errors="replace")]
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            out += [z.read(name).decode("utf-8", errors="replace") for name in z.namelist()]
    if path.suffix == ".parquet":
        out.append(pd.read_parquet(io.BytesIO(data)).to_csv())
    return out


def leaks(root: Path, *secrets: str) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            for text in texts(path):
                found += [f"{path}: {s}" for s in secrets if s in text]
    return sorted(set(found))


def test_api_keys_never_written_or_printed(tmp_path, monkeypatch, capfd):
    cli._register()
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(2))
    printed = []
    with MockOpenAI(MockConfig(api_key=SECRET)) as mock:
        for key, value in mock.env("mock", api_key=SECRET).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
        monkeypatch.setenv("INSPECT_DISPLAY", "none")

        def prefdisco(*args: str):
            result = CliRunner().invoke(cli.app, list(args))
            printed.extend([result.output, str(result.exception or "")])
            return result

        model = f"openai-api/mock/m{mock.port}"
        good = prefdisco("eval", str(bench), "--model", model, "--log-dir", str(tmp_path / "good"))
        assert good.exit_code == 0, good.output
        # a key on the command line is refused (model args are logged) without echoing it
        refused = prefdisco(
            "eval", str(bench), "--model", model, "-M", f"api_key={SECRET}", "--log-dir", str(tmp_path / "refused")
        )
        assert refused.exit_code == 2 and "api_key" in refused.stderr
        assert not (tmp_path / "refused").exists()
        assert mock.stats()["completions"] > 0 and "rejected_401" not in mock.stats()
        report = prefdisco("report", str(tmp_path / "good"), "--out", str(tmp_path / "report"), "--bootstrap", "0")
        assert report.exit_code == 0, report.output

        # the wrong key: the server answers 401 (inspect does not retry it); the run fails explicitly
        monkeypatch.setenv("MOCK_API_KEY", WRONG)
        wrong_model = f"openai-api/mock/w{mock.port}"
        bad = prefdisco("eval", str(bench), "--model", wrong_model, "--log-dir", str(tmp_path / "bad"))
        assert mock.stats()["rejected_401"] > 0
    results = pd.read_csv(tmp_path / "bad" / "results.csv")
    assert (results["failed"] == 1).all() and results["error"].notna().all()
    assert bad.exit_code != 0 or "failed" in bad.output

    captured = capfd.readouterr()
    printed += [captured.out, captured.err]
    assert (tmp_path / "report" / "report.html").is_file()
    assert leaks(tmp_path / "good", SECRET, WRONG) == []
    assert leaks(tmp_path / "bad", SECRET, WRONG) == []
    assert leaks(tmp_path / "report", SECRET, WRONG) == []
    assert leaks(tmp_path / "inspect-cache", SECRET, WRONG) == []
    assert leaks(tmp_path / "data", SECRET, WRONG) == []
    assert not [s for s in (SECRET, WRONG) if any(s in text for text in printed)]
