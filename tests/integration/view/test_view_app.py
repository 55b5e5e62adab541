"""`gtog eval view`'s app over real run folders: the run list, a run's filtered questions,
a question, two runs compared, and what it must never serve (paths out of its folders, run
files, secrets, requests without the token when bound to another address)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from gtog.eval.run._lock import LOCK_NAME
from gtog.eval.view._app import TOKEN_COOKIE, ViewConfig, allowed_hosts, make_app
from gtog.eval.view._catalog import find_runs
from tests.support.runs import verdict_records, write_run

pytestmark = pytest.mark.integration

TABLE = {
    "q1": {"tog": 0, "basic": 1},
    "q2": {"tog": 1, "basic": 0},
    "q3": {"tog": 0, "basic": 1},
    "q4": {"tog": None, "basic": 1},
    "q5": {"tog": 1, "basic": 1},
    "q6": {"tog": 0, "basic": 0},
}
INDEX = {"q3": "beta", "q4": "beta"}


def rows(html: str) -> list[tuple[str, str]]:
    return re.findall(r'data-qid="([^"]+)" data-method="([^"]+)"', html)


@pytest.fixture
def study(tmp_path: Path) -> Path:
    root = tmp_path / "study"
    write_run(root / "before", verdict_records(TABLE, INDEX))
    after = {q: dict(v) for q, v in TABLE.items()}
    after["q5"]["tog"] = 0  # right -> wrong
    after["q1"]["tog"] = 1  # wrong -> right
    write_run(root / "variants" / "after", verdict_records(after, INDEX))
    return root


def client(root: Path, **config: object) -> TestClient:
    app = make_app(ViewConfig(roots=(root,), **config))  # type: ignore[arg-type]
    return TestClient(app, base_url="http://127.0.0.1:7575")


def test_the_run_list_names_each_run_by_its_folder_with_its_state(study: Path) -> None:
    page = client(study).get("/")
    assert page.status_code == 200
    assert 'href="/run/before"' in page.text and 'href="/run/variants/after"' in page.text
    assert page.text.count('class="state s-complete"') == 2
    assert "No method is significantly better" in page.text  # each run's verdict line


def test_a_running_and_a_stopped_run_say_so(study: Path) -> None:
    partial = verdict_records(TABLE)[:5]
    running = write_run(study / "live", partial, finished=False, questions=6)
    (running / LOCK_NAME).write_text(
        f"pid {__import__('os').getpid()} on {__import__('socket').gethostname()}\n"
    )
    write_run(study / "killed", partial, finished=False, questions=6)
    page = client(study).get("/").text
    state = dict(re.findall(r'data-run="([^"]+)">.*?class="state s-(\w+)"', page, re.S))
    assert state == {
        "before": "complete",
        "killed": "stopped",
        "live": "running",
        "variants/after": "complete",
    }
    progress = client(study).get("/progress/live").json()
    assert progress["status"] == "running" and progress["answers"] == 5


def test_wrong_in_tog_and_right_in_basic_filters_the_questions(study: Path) -> None:
    c = client(study)
    page = c.get("/run/before", params={"wrong": "tog", "right": "basic"})
    assert page.status_code == 200
    assert rows(page.text) == [("q1", "tog"), ("q1", "basic"), ("q3", "tog"), ("q3", "basic")]
    # with the method, the verdict, the index and the failure filters
    assert rows(c.get("/run/before", params={"method": "tog", "verdict": "wrong"}).text) == [
        ("q1", "tog"),
        ("q6", "tog"),
        ("q3", "tog"),  # the report's order: by index
    ]
    assert rows(c.get("/run/before", params={"index": "beta"}).text) == [
        ("q3", "tog"),
        ("q3", "basic"),
        ("q4", "tog"),
        ("q4", "basic"),
    ]
    assert rows(c.get("/run/before", params={"error": "any"}).text) == [("q4", "tog")]
    assert rows(c.get("/run/before", params={"verdict": "unscored"}).text) == [("q4", "tog")]
    assert rows(c.get("/run/before", params={"q": "basic says no"}).text) == [
        ("q2", "basic"),
        ("q6", "basic"),
    ]
    # the list alone (what a live page fetches) is the same filter's
    fragment = c.get("/rows/before", params={"wrong": "tog", "right": "basic"}).text
    assert rows(fragment) == rows(page.text) and "<html" not in fragment


def test_a_question_shows_every_answer_with_its_verdict_and_reason(study: Path) -> None:
    page = client(study).get("/question/before", params={"id": "q4"})
    assert page.status_code == 200
    assert "the answer to q4" in page.text  # the reference
    assert "basic says yes about q4" in page.text and "scripted" in page.text
    assert "Search failed: RateLimitError: slow down" in page.text
    assert client(study).get("/question/before", params={"id": "nope"}).status_code == 404


def test_two_runs_compared_link_each_flipped_question(study: Path) -> None:
    page = client(study).get("/compare", params={"a": "before", "b": "variants/after"})
    assert page.status_code == 200
    tog = re.search(r"<td>tog</td><td>correctness</td>.*?</tr>", page.text, re.S)
    assert tog is not None
    links = re.findall(r'href="(/question/[^"]+)"', tog.group(0))
    assert links == ["/question/variants/after?id=q5", "/question/variants/after?id=q1"]
    assert client(study).get(links[0]).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/run/..%2F..%2Fetc%2Fpasswd",
        "/run/%2e%2e/%2e%2e/etc/passwd",
        "/run/before/eval_checkpoint.jsonl",
        "/run/before/eval.log",
        "/question/..%2Foutside?id=q1",
        "/assets/..%2F..%2F__init__.py",
        "/outside/eval_results_summary.json",
    ],
)
def test_nothing_outside_the_runs_pages_is_served(study: Path, path: str) -> None:
    outside = study.parent / "outside"
    write_run(outside, verdict_records(TABLE))
    (study / "before" / "eval.log").write_text("a log line\n")
    page = client(study).get(path)
    assert page.status_code == 404
    assert "a log line" not in page.text and "eval_results" not in page.text


def test_a_symlink_out_of_the_folder_is_not_a_run(study: Path, tmp_path: Path) -> None:
    outside = write_run(tmp_path / "elsewhere" / "secret-run", verdict_records(TABLE))
    (study / "linked").symlink_to(outside, target_is_directory=True)
    (study / "deeper").mkdir()
    (study / "deeper" / "up").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert set(find_runs([study])) == {"before", "variants/after"}
    assert client(study).get("/run/linked").status_code == 404
    assert "secret-run" not in client(study).get("/").text


def test_secrets_of_the_environment_never_reach_a_page(
    study: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-viewer-test-0123456789abcdef"
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", secret)
    records = verdict_records({"q1": {"tog": None}})
    records[0].error = f"AuthenticationError: Incorrect API key provided: {secret}"
    write_run(study / "leaky", records)
    c = client(study)
    for path in ("/", "/run/leaky", "/question/leaky?id=q1", "/progress/leaky"):
        page = c.get(path)
        assert page.status_code == 200 and secret not in page.text, path
    assert "[REDACTED]" in c.get("/question/leaky", params={"id": "q1"}).text


def test_bound_elsewhere_every_request_needs_the_token(study: Path) -> None:
    c = client(study, token="t0k3n-for-the-test", hosts=allowed_hosts("0.0.0.0"))
    assert c.get("/").status_code == 403
    assert c.get("/run/before").status_code == 403
    assert c.get("/", params={"token": "wrong"}).status_code == 403
    first = c.get("/", params={"token": "t0k3n-for-the-test"})
    assert first.status_code == 200
    assert first.cookies.get(TOKEN_COOKIE) == "t0k3n-for-the-test"
    assert c.get("/run/before").status_code == 200  # the cookie carries it on


def test_a_page_for_another_host_name_is_refused(study: Path) -> None:
    # DNS rebinding: a page of another site whose name points here
    assert client(study).get("/", headers={"Host": "evil.example:7575"}).status_code == 400


def test_every_page_allows_only_its_own_origin(study: Path) -> None:
    page = client(study).get("/run/before")
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert "http" not in csp  # no CDN
    assert not re.search(r'(src|href)="(https?:)?//', page.text)  # no outside reference
    assert "<script>" not in page.text  # no inline script (CSP allows none)
