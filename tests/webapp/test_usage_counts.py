"""Usage counts: an upload is counted with its bytes, and counts added at the same moment from
many threads are all kept (the database adds, in one statement), on SQLite and PostgreSQL.
Each test counts on one frozen day (``usage_day``), so none sees the day end between its counts."""

from __future__ import annotations

import io
import threading
from datetime import date

import pytest

from core.extensions import db
from core.models import UsageCount
from core.models.usage import add_usage

pytestmark = pytest.mark.usefixtures("usage_day")
THREADS = 8
EACH = 25


def usage_rows(app, user_id: str) -> dict[tuple[str, str], int]:
    with app.app_context():
        rows = db.session.scalars(db.select(UsageCount).filter_by(user_id=user_id))
        return {(r.metric, r.detail): r.amount for r in rows}


def test_an_upload_counts_one_upload_and_its_bytes(signed_in_client, app):
    client = signed_in_client()
    for text in (b"first file", b"second, longer file"):
        response = client.post(
            "/api/uploads",
            data={"file": (io.BytesIO(text), "notes.txt", "text/plain")},
            content_type="multipart/form-data",
        )
        assert response.status_code == 201, response.get_json()
    assert usage_rows(app, client.user.id) == {("uploads", ""): 2, ("uploadBytes", ""): 29}


def test_a_refused_upload_counts_nothing(signed_in_client, app):
    client = signed_in_client()
    response = client.post(
        "/api/uploads",
        data={"file": (io.BytesIO(b"PK\x03\x04"), "a.zip", "application/zip")},
        content_type="multipart/form-data",
    )
    assert response.status_code == 415
    assert usage_rows(app, client.user.id) == {}


def add_from_threads(app, user_id: str) -> None:
    """Add 1 to the same two counts THREADS × EACH times, every thread at once."""
    start = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def count() -> None:
        try:
            with app.app_context():
                start.wait()
                for _ in range(EACH):
                    add_usage(user_id, [("searches", "engine-a", 1), ("fetchedBytes", "", 10)])
                    db.session.commit()
        except BaseException as exc:  # reported by the test below
            errors.append(exc)

    threads = [threading.Thread(target=count) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_counts_added_at_once_from_many_threads_are_all_kept_on_sqlite(app, make_user):
    user = make_user("busy")
    add_from_threads(app, user.id)
    assert usage_rows(app, user.id) == {
        ("searches", "engine-a"): THREADS * EACH,
        ("fetchedBytes", ""): THREADS * EACH * 10,
    }


@pytest.mark.postgres
def test_counts_added_at_once_from_many_threads_are_all_kept_on_postgresql(
    make_app, migrated_postgres_url
):
    app = make_app(DATABASE_URL=migrated_postgres_url)
    with app.app_context():
        from core.models import User

        user = User.make("busy", "password")
        db.session.add(user)
        db.session.commit()
        user_id = user.id
    add_from_threads(app, user_id)
    assert usage_rows(app, user_id) == {
        ("searches", "engine-a"): THREADS * EACH,
        ("fetchedBytes", ""): THREADS * EACH * 10,
    }


def test_counts_go_to_their_own_day_and_zero_amounts_make_no_row(app, make_user, usage_day):
    user = make_user("daily")
    with app.app_context():
        add_usage(user.id, [("turns", "completed", 1)], day=date(2026, 11, 1))
        add_usage(user.id, [("turns", "completed", 1), ("inputTokens", "m", 0)])
        db.session.commit()
        days = sorted((r.day, r.amount) for r in db.session.scalars(db.select(UsageCount)))
    assert days == [(date(2026, 11, 1), 1), (usage_day, 1)]


def test_an_unknown_metric_is_refused(app, make_user):
    user = make_user("typo")
    with app.app_context(), pytest.raises(ValueError, match="Unknown usage metric"):
        add_usage(user.id, [("serches", "", 1)])
