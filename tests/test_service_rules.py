"""Service decisions a pipeline relies on: approval cannot be dodged by deleting the
lockfile, approvers are recorded only when something needed approving, corrupt locks
are named as such, storage failures are 503s, and no error shows where files live."""

from __future__ import annotations

from pathlib import Path

from tests.helpers_service import GRANTS, V1, V1_SAFE, V2_BREAKING, api, assert_problem, bearer, lock


def test_deleting_the_current_lockfile_does_not_waive_approval(tmp_path: Path):
    with api(tmp_path) as client:
        assert lock(client, V1).status_code == 201
        (tmp_path / "billing.lock.toml").unlink()
        body = assert_problem(lock(client, V2_BREAKING), 409, "approval_required")
        assert body["deltas"][0]["rule"] == "input.property.added-required"
        response = lock(client, V2_BREAKING, approved_by="alice")
        assert response.status_code == 201
        assert response.json()["version"] == 2
        assert response.json()["previous_digest"] == client.get("/lockfiles/billing/versions").json()[0][
            "integrity_digest"]


def test_an_approve_token_is_recorded_as_approver_only_when_approval_was_needed(tmp_path: Path):
    with api(tmp_path, GRANTS) as client:
        headers = bearer("approver")
        assert lock(client, V1, headers=headers).status_code == 201
        assert lock(client, V1_SAFE, headers=headers).status_code == 201
        assert lock(client, V2_BREAKING, headers=headers).status_code == 201
        versions = client.get("/lockfiles/billing/versions", headers=headers).json()
        assert [v["approved_by"] for v in versions] == [None, None, "approver"]
        ci = bearer("ci")  # lock scope only
        assert lock(client, V1, server="billing-eu", headers=ci).status_code == 201
        assert_problem(lock(client, V2_BREAKING, server="billing-eu", headers=ci), 409, "approval_required")
        body = assert_problem(lock(client, V2_BREAKING, server="billing-eu", headers=ci, approved_by="bob"), 403)
        assert "approve scope" in body["detail"]


def test_a_live_report_against_a_corrupt_lock_says_corrupt_and_hides_the_store_path(tmp_path: Path):
    with api(tmp_path) as client:
        assert lock(client, V1).status_code == 201
        path = tmp_path / "billing.lock.toml"
        path.write_text(path.read_text().replace("Fetch one invoice", "Fetch any invoice"))
        live = client.put("/servers/billing/live", json=V1)
        assert live.status_code == 200 and live.json()["status"] == "corrupt"
        body = assert_problem(client.get("/lockfiles/billing"), 409, "lockfile_corrupt")
        assert "billing.lock.toml" in body["detail"] and str(tmp_path) not in body["detail"]


def test_a_store_that_cannot_be_written_is_a_503(tmp_path: Path):
    with api(tmp_path) as client:
        (tmp_path / "payments.lock.toml").mkdir()
        (tmp_path / "payments.lock.toml" / "x").write_text("in the way")
        response = lock(client, V1, server="payments")
        body = assert_problem(response, 503, "store_unavailable")
        assert str(tmp_path) not in body["detail"]
        assert client.get("/healthz").status_code == 200


def test_the_lock_kept_after_writing_is_what_reading_the_file_gives(tmp_path: Path):
    from app import load_surface
    from app.lockfile import lock_document
    from app.service import Governance, LockRequest
    from app.store import FileStore

    store = FileStore(tmp_path)
    Governance(store).lock("billing", load_surface(V1), LockRequest())
    kept = store.current("billing")
    read = FileStore(tmp_path).current("billing")
    assert kept.text == read.text and kept.record == read.record
    assert lock_document(kept.surface) == lock_document(read.surface)
