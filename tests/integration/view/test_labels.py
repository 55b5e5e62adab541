"""People's labels: five answers labelled with the keyboard in real Chromium (kept across a
reload, one undone), the judge-against-people table on the run's page; a spreadsheet's
labels exported and imported by `gtog eval label`, a bad file refused row by row."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest

from gtog.eval.results._labels import LABELS_NAME
from tests.support.browser import find_chromium
from tests.support.projects import gtog
from tests.support.runs import verdict_records, write_run
from tests.support.viewer import chromium_page, serve_view

pytestmark = pytest.mark.integration

TABLE = {f"q{i}": {"tog": i % 2, "basic": (i // 2) % 2} for i in range(12)}


@pytest.mark.skipif(
    find_chromium() is None and not os.environ.get("CI"),
    reason="chromium is not installed (apt-get install chromium); CI installs it",
)
def test_label_five_answers_with_the_keyboard_and_keep_them(tmp_path: Path) -> None:
    run = write_run(tmp_path / "study" / "run", verdict_records(TABLE))
    with serve_view(tmp_path / "study") as base, chromium_page() as (page, console):
        page.goto(base + "/run/run")
        page.click("#labelmode")
        page.fill("input[name=labeller]", "ann")
        page.fill("input[name=per_method]", "4")
        page.click("#labelset button")
        page.wait_for_selector("#labelitem")
        page.wait_for_selector("html[data-ready='1']")

        def progress() -> int:
            text = page.inner_text("#labelprogress")
            return int(re.search(r"ann has labelled (\d+) of the 8", text).group(1))  # type: ignore[union-attr]

        seen = []
        for n, key in enumerate("rwrrw", 1):
            item = page.locator("#labelitem")
            seen.append((item.get_attribute("data-qid"), item.get_attribute("data-method")))
            page.keyboard.press(key)
            page.wait_for_selector(f"#labelprogress:has-text('ann has labelled {n} of the 8')")
            page.wait_for_selector("html[data-ready='1']")  # its keys listened for again
        assert len(set(seen)) == 5  # a new answer each time
        assert {m for _, m in seen} == {"tog", "basic"}  # the sample alternates methods
        page.screenshot(path=str(tmp_path / "label.png"))
        page.keyboard.press("u")  # the fifth taken back: it is shown again
        page.wait_for_selector("#labelprogress:has-text('ann has labelled 4 of the 8')")
        page.wait_for_selector("html[data-ready='1']")
        assert (
            page.get_attribute("#labelitem", "data-qid"),
            page.get_attribute("#labelitem", "data-method"),
        ) == seen[-1]
        page.keyboard.press("w")
        page.wait_for_selector("#labelprogress:has-text('ann has labelled 5 of the 8')")
        page.reload()
        assert progress() == 5  # kept across a reload (and a restart: they are in the file)

        page.goto(base + "/run/run")
        table = page.locator("#calibration-correctness")
        assert table.count() == 1
        assert "5 of 12" in table.inner_text() or "3 of 12" in table.inner_text()
        assert console == [], console
    lines = [json.loads(x) for x in (run / LABELS_NAME).read_text().splitlines()]
    assert [x["label"] for x in lines] == [1, 0, 1, 1, 0, None, 0]
    assert {x["labeller"] for x in lines} == {"ann"}
    assert all(
        set(x)
        >= {"question_id", "method", "epoch", "metric", "label", "labeller", "at", "answer_hash"}
        for x in lines
    )


def test_export_fill_and_import_labels_with_bad_rows_named(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", verdict_records(TABLE))
    sheet = tmp_path / "sample.csv"
    exported = gtog("eval", "label", str(run), "--export", str(sheet), "--per-method", "6")
    assert exported.returncode == 0, exported.stderr
    rows = list(csv.DictReader(sheet.open()))
    assert len(rows) == 12 and {r["method"] for r in rows} == {"tog", "basic"}
    again = gtog("eval", "label", str(run), "--export", str(sheet))
    assert again.returncode == 2 and "--force" in again.stderr  # never overwritten

    # people agree with the judge except on tog's first three: a lenient judge there
    for i, r in enumerate(rows):
        judge = TABLE[r["question_id"]][r["method"]]
        r["label"] = (
            "wrong"
            if r["method"] == "tog" and judge == 1 and i < 8
            else ("right" if judge else "wrong")
        )
    bad = [dict(r) for r in rows]
    bad[2]["label"] = "maybe"
    bad[4]["method"] = "drift"
    for path, data in ((tmp_path / "bad.csv", bad), (tmp_path / "good.csv", rows)):
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(data)
    refused = gtog("eval", "label", str(run), "--import", str(tmp_path / "bad.csv"))
    assert refused.returncode == 2
    said = " ".join(refused.stderr.split())
    assert "bad.csv: line 4" in said and "label 'maybe' is not right or wrong" in said
    assert "bad.csv: line 6" in said and "method drift): no such answer in this run" in said
    assert "nothing imported (2 bad rows)" in said
    assert not (run / LABELS_NAME).exists()

    done = gtog("eval", "label", str(run), "--import", str(tmp_path / "good.csv"))
    assert done.returncode == 0, done.stderr
    assert "imported 12 labels" in done.stderr
    summary = json.loads((run / "eval_results_summary.json").read_text())
    tog = summary["calibration"]["correctness"]["tog"]
    assert set(tog) >= {
        "n_labels",
        "agreement",
        "kappa",
        "fpr",
        "fnr",
        "mean_judge",
        "mean_ppi",
        "ci95_ppi",
    }
    assert tog["n_labels"] == 6 and tog["fpr"] is not None
    assert "The judge against people" in (run / "report.html").read_text()
