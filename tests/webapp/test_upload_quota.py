"""The room a user's stored attachments may take: a file past it is refused with 429,
Retry-After and a sentence saying how much is used, and deleting an attachment frees its room
(the messages that attached it keep its text)."""

from __future__ import annotations

import io

from webapp.extensions import db
from webapp.limits import set_overrides
from webapp.quotas import remaining


def upload(client, data: bytes, filename: str):
    return client.post(
        "/api/uploads",
        data={"file": (io.BytesIO(data), filename, "text/plain")},
        content_type="multipart/form-data",
    )


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
