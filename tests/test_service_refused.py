"""Refused lock attempts: a 409 is remembered (surface and request), an approver can accept
it later with a reason, the audit log records who asked and who approved, and an attempt
stops being offered once the lock moves on. Also the service's version-to-version and
lock-to-live comparisons the dashboard pages show."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import load_surface
from app.lockfile import read_document
from app.problems import InputError
from app.service import LIVE, Governance, LockRequest, NeedsApproval, NotFound, PreconditionFailed
from app.store import REFUSED_KEPT, RefusedAttempt
from tests.helpers_service import GRANTS, V1, V1_SAFE, V2_BREAKING, api, assert_problem, bearer, lock, numbered
from tests.stores import open_for, opened

pytestmark = pytest.mark.usefixtures("store_backend")  # each test on both stores (tests/stores.py)


def surface(value: object, server: str = "billing"):
    return load_surface(copy.deepcopy(value), server=server)


def governance(root: Path) -> Governance:
    return Governance(open_for(root))


def refuse(gov: Governance, value: object = V2_BREAKING, **request: object) -> NeedsApproval:
    with pytest.raises(NeedsApproval) as refused:
        gov.lock("billing", surface(value), LockRequest(**request))  # type: ignore[arg-type]
    return refused.value


def test_a_refused_lock_is_kept_with_its_surface_and_request(tmp_path: Path):
    gov = governance(tmp_path)
    gov.lock("billing", surface(V1), LockRequest(who="ci"))
    refusal = refuse(gov, who="release-bot", commit="abc123", reason="release 2")
    attempt_id = refusal.extra["attempt"]
    [attempt] = gov.refused_attempts("billing")
    assert attempt.id == attempt_id
    assert (attempt.who, attempt.commit, attempt.reason) == ("release-bot", "abc123", "release 2")
    assert (attempt.base_version, attempt.base_digest) == (1, gov.history("billing")[0].integrity_digest)
    assert attempt.integrity_digest == surface(V2_BREAKING).integrity_digest
    assert read_document(attempt.surface_document).integrity_digest == attempt.integrity_digest
    assert attempt.summary["BREAKING"] == len(refusal.extra["deltas"]) >= 1
    assert [d.rule for d in gov.refused_diff(attempt).deltas if d.severity.value == "BREAKING"] == [
        d["rule"] for d in refusal.extra["deltas"]]


def test_a_retried_refusal_replaces_its_attempt(tmp_path: Path):
    gov = governance(tmp_path)
    gov.lock("billing", surface(V1), LockRequest())
    first = refuse(gov, reason="try 1").extra["attempt"]
    second = refuse(gov, reason="try 2").extra["attempt"]
    assert first == second
    assert [a.reason for a in gov.refused_attempts("billing")] == ["try 2"]


def test_approving_locks_the_attempt_and_records_requester_and_approver(tmp_path: Path):
    gov = governance(tmp_path)
    gov.lock("billing", surface(V1), LockRequest(who="ci"))
    attempt_id = refuse(gov, who="release-bot", commit="abc123", reason="release 2").extra["attempt"]
    outcome = gov.approve_refused("billing", attempt_id, "alice", "  currency is needed by finance ")
    assert outcome.created and outcome.record.version == 2
    record = gov.history("billing")[-1]
    assert (record.who, record.commit, record.approved_by, record.reason) == (
        "release-bot", "abc123", "alice", "currency is needed by finance")
    assert record.integrity_digest == surface(V2_BREAKING).integrity_digest
    assert record.max_severity == "BREAKING"
    assert gov.refused_attempts("billing") == []
    with pytest.raises(PreconditionFailed):
        gov.approve_refused("billing", attempt_id, "alice", "again")


def test_an_attempt_is_no_longer_offered_once_the_lock_moves_on(tmp_path: Path):
    gov = governance(tmp_path)
    gov.lock("billing", surface(V1), LockRequest())
    attempt_id = refuse(gov).extra["attempt"]
    gov.lock("billing", surface(V1_SAFE), LockRequest())
    assert gov.refused_attempts("billing") == []
    assert [a.id for a in gov.store.refused("billing")] == [attempt_id]  # kept, but not approvable
    with pytest.raises(PreconditionFailed):
        gov.refused_attempt("billing", attempt_id)
    with pytest.raises(NotFound):
        gov.refused_attempt("billing", "0123456789abcdef")


@pytest.mark.parametrize(("approver", "reason", "field"), [("", "ok", "approved_by"), ("alice", " ", "reason")])
def test_an_approval_needs_an_approver_and_a_reason(tmp_path: Path, approver: str, reason: str, field: str):
    gov = governance(tmp_path)
    gov.lock("billing", surface(V1), LockRequest())
    attempt_id = refuse(gov).extra["attempt"]
    with pytest.raises(InputError) as problem:
        gov.approve_refused("billing", attempt_id, approver, reason)
    assert problem.value.where == field
    assert gov.refused_attempts("billing")  # nothing happened


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stamps=st.lists(st.integers(0, 10**6), min_size=1, max_size=REFUSED_KEPT + 8, unique=True))
def test_the_store_keeps_the_newest_attempts_up_to_its_bound(tmp_path_factory: pytest.TempPathFactory,
                                                            stamps: list[int]):
    with opened(tmp_path_factory.mktemp("store")) as store:
        for stamp in stamps:
            digest = f"sha256:{stamp:064x}"
            store.save_refused(RefusedAttempt(
                server="billing", id=RefusedAttempt.make_id("sha256:base", digest), attempted_at=f"{stamp:010d}",
                base_version=1, base_digest="sha256:base", integrity_digest=digest, surface_document={}))
        kept = [a.attempted_at for a in store.refused("billing")]
    assert kept == sorted((f"{s:010d}" for s in stamps), reverse=True)[:REFUSED_KEPT]


def test_the_409_names_the_kept_attempt(tmp_path: Path):
    with api(tmp_path, GRANTS) as client:
        assert lock(client, V1, headers=bearer("ci")).status_code == 201
        body = assert_problem(lock(client, V2_BREAKING, headers=bearer("ci"), commit="c1"), 409,
                              "approval_required")
        attempts = client.app.state.governance.refused_attempts("billing")  # type: ignore[attr-defined]
        assert [a.id for a in attempts] == [body["attempt"]]
        assert attempts[0].who == "ci" and attempts[0].commit == "c1"


def test_versions_compare_with_each_other_and_with_the_live_surface(tmp_path: Path):
    gov = governance(tmp_path)
    gov.lock("billing", surface(V1), LockRequest())
    gov.lock("billing", surface(numbered(1)), LockRequest(approved_by="alice"))
    forward = gov.compare("billing", 1, 2)
    assert forward.before_digest == surface(V1).integrity_digest
    assert forward.after_digest == surface(numbered(1)).integrity_digest
    assert {d.rule for d in forward.deltas} == {d.rule for d in gov.diff(surface(V1), surface(numbered(1))).deltas}
    with pytest.raises(NotFound):
        gov.compare("billing", 1, LIVE)
    gov.report_live("billing", surface(V1))
    kept = gov.compare("billing", 2, LIVE)
    assert kept is gov.live_view("billing").result  # type: ignore[union-attr]  # what awareness reads
    recomputed = gov.compare("billing", 1, LIVE)
    assert recomputed.unchanged and not recomputed.deltas
    with pytest.raises(NotFound):
        gov.compare("billing", 1, 9)


@pytest.mark.directory_store
def test_a_refusal_that_cannot_be_kept_is_still_a_409(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    gov = governance(tmp_path)
    gov.lock("billing", surface(V1), LockRequest())
    (tmp_path / ".store" / "billing" / "refused").write_text("in the way")
    refusal = refuse(gov)
    assert "attempt" not in refusal.extra and refusal.extra["deltas"]
    assert "could not keep the refused lock attempt of billing" in caplog.text
