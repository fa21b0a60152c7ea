"""The room a user's stored attachments may take: a file past it is refused with 429,
Retry-After and a sentence saying how much is used; an upload counts the larger of its bytes
and its text's characters; room and hourly uploads are checked before a file is read; and
deleting an attachment frees its room."""

from __future__ import annotations

import io

import pytest

from core import plugin_host
from core.extensions import db
from core.limits import set_overrides
from core.quotas import remaining
from tests.tools.pdf.documents import encrypt_pdf, make_dense_pdf, make_pdf


def upload(client, data: bytes, filename: str, mime_type: str = "text/plain"):
    return client.post(
        "/api/uploads",
        data={"file": (io.BytesIO(data), filename, mime_type)},
        content_type="multipart/form-data",
    )


def allow(app, user, **limits: int) -> None:
    with app.app_context():
        set_overrides(user.id, limits)
        db.session.commit()


def test_an_upload_past_the_users_room_is_refused_until_one_is_deleted(
    app, signed_in_client, make_user
):
    user = make_user("uploader")
    with app.app_context():
        set_overrides(user.id, {"uploadBytes": 1})
        db.session.commit()
    client = signed_in_client(user)
    # Files under werkzeug's 500 kB spooling size: the test client leaks larger bodies' files.
    stored = [upload(client, b"a" * 300_000, f"notes{n}.txt") for n in range(3)]
    assert [s.status_code for s in stored] == [201] * 3

    refused = upload(client, b"b" * 200_000, "more.txt")

    assert refused.status_code == 429
    assert refused.get_json()["error"]["message"] == (
        "Your attachments take 0.9 MB of your 1.0 MB, and more.txt (0.2 MB) does not fit. "
        "Delete attachments you no longer need, or ask an administrator for more room."
    )
    assert int(refused.headers["Retry-After"]) >= 1
    listed = client.get("/api/uploads").get_json()["uploads"]
    assert sorted(u["filename"] for u in listed) == ["notes0.txt", "notes1.txt", "notes2.txt"]
    with app.app_context():
        shown = {row["limit"]: row for row in remaining(user.id)}
        assert shown["uploadBytes"]["used"] == 900_000
        assert shown["uploadBytes"]["allowed"] == 1_000_000
    assert client.delete(f"/api/uploads/{stored[0].get_json()['id']}").status_code == 204
    assert upload(client, b"b" * 200_000, "more.txt").status_code == 201


def test_a_small_pdf_whose_text_is_long_counts_its_characters_against_the_room(
    app, signed_in_client, make_user
):
    """Issue 24: a 4 KB PDF whose text was 2,000,000 characters took 4 KB of the room."""
    user = make_user("reader")
    allow(app, user, uploadBytes=1)
    client = signed_in_client(user)
    dense = make_dense_pdf("Lorem ipsum dolor sit amet, consectetur." * 31_500)  # 1,260,000
    assert len(dense) < 10_000

    refused = upload(client, dense, "dense.pdf", "application/pdf")

    assert refused.status_code == 429
    assert refused.get_json()["error"]["message"] == (
        "Your attachments take 0 KB of your 1.0 MB, and the text of dense.pdf (1,260,000 "
        "characters, counted as 1.3 MB) does not fit. Delete attachments you no longer need, "
        "or ask an administrator for more room."
    )
    assert client.get("/api/uploads").get_json()["uploads"] == []
    kept = upload(client, make_dense_pdf("words" * 100_000), "kept.pdf", "application/pdf")
    assert kept.status_code == 201, kept.get_json()
    assert kept.get_json()["textChars"] == 500_000 > kept.get_json()["size"]
    assert kept.get_json()["room"] == kept.get_json()["textChars"]
    with app.app_context():
        shown = {row["limit"]: row for row in remaining(user.id)}
        assert shown["uploadBytes"]["used"] == kept.get_json()["textChars"]


def test_a_user_over_their_room_is_refused_before_the_file_is_read(make_app, make_user):
    """Issue 24: the room was checked only once the parser had read the file."""
    app = make_app(PARSER_MAX_CHARS=1_234_567)  # parser processes of this test's own
    client = app.test_client()
    from core.models import User
    from tests.support import accounts

    with app.app_context():
        user = User.make("full", "password")
        db.session.add(user)
        db.session.flush()
        set_overrides(user.id, {"uploadBytes": 1})
        db.session.commit()
    accounts.sign_in(client, "full", "password")
    client.environ_base["HTTP_X_CSRFTOKEN"] = accounts.csrf_token_from(
        client.get("/").get_data(as_text=True)
    )
    assert upload(client, b"a" * 499_500, "a.txt").status_code == 201
    assert upload(client, b"b" * 499_500, "b.txt").status_code == 201
    locked = encrypt_pdf(make_pdf(["secret"] * 40), "pw")  # read, it would be a 422
    assert len(locked) > 1_000

    refused = upload(client, locked, "locked.pdf", "application/pdf")

    assert refused.status_code == 429
    assert refused.get_json()["error"]["message"] == (
        "Your attachments take 1.0 MB of your 1.0 MB, and locked.pdf "
        f"({len(locked) / 1000:.0f} KB) does not fit. Delete attachments you no longer need, "
        "or ask an administrator for more room."
    )
    with app.app_context():
        assert plugin_host.get_parsers().pids() == []  # no parser process was ever started


def test_uploads_past_the_hourly_rate_are_refused_before_they_are_read(
    app, signed_in_client, make_user
):
    user = make_user("busy")
    allow(app, user, uploadsPerHour=2)
    client = signed_in_client(user)
    assert upload(client, b"one", "1.txt").status_code == 201
    assert upload(client, b"two", "2.txt").status_code == 201
    locked = encrypt_pdf(make_pdf(["secret"]), "pw")  # read, it would be a 422

    refused = upload(client, locked, "locked.pdf", "application/pdf")

    assert refused.status_code == 429
    message = refused.get_json()["error"]["message"]
    assert message.startswith("You have uploaded 2 files this hour; you can upload again at ")
    assert message.endswith(":00 UTC.")
    assert 1 <= int(refused.headers["Retry-After"]) <= 3600
    assert [u["filename"] for u in client.get("/api/uploads").get_json()["uploads"]] != []
    with app.app_context():
        shown = {row["limit"]: row for row in remaining(user.id)}
        assert shown["uploadsPerHour"]["used"] == 2 and shown["uploadsPerHour"]["allowed"] == 2


def uploads_stored_before_0010_count_their_text(app) -> None:
    import flask_migrate
    from sqlalchemy import text

    from core.models import User
    from core.quotas import stored_upload_room

    with app.app_context():
        user = User.make("early", "pw")
        db.session.add(user)
        db.session.commit()
        user_id = user.id
        db.session.remove()
        flask_migrate.downgrade(revision="0009")
        db.session.execute(
            text(
                "INSERT INTO uploads (id, owner_id, filename, mime_type, size, text, created_at) "
                "VALUES ('u1', :owner, 'dense.pdf', 'application/pdf', 4000, :text, "
                "CURRENT_TIMESTAMP)"
            ),
            {"owner": user_id, "text": "é" * 50_000},
        )
        db.session.commit()
        db.session.remove()
        flask_migrate.upgrade()
        assert stored_upload_room(user_id) == 50_000


def test_uploads_stored_before_the_room_counted_text_count_their_text_on_sqlite(app):
    uploads_stored_before_0010_count_their_text(app)


@pytest.mark.postgres
def test_uploads_stored_before_the_room_counted_text_count_their_text_on_postgresql(
    make_app, migrated_postgres_url
):
    uploads_stored_before_0010_count_their_text(make_app(DATABASE_URL=migrated_postgres_url))
