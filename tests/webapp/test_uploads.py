"""Attachments: uploads become text through ingesters and join the user's message."""

from __future__ import annotations

import io

from core.extensions import db
from core.models import Message, Provider
from tests.support.processes import joined
from tests.tools.pdf.documents import encrypt_pdf, make_pdf


def upload(client, data: bytes, filename: str, mime_type: str):
    return client.post(
        "/api/uploads",
        data={"file": (io.BytesIO(data), filename, mime_type)},
        content_type="multipart/form-data",
    )


def test_a_pdf_upload_is_read_by_the_pdf_ingester(signed_in_client):
    client = signed_in_client()
    response = upload(client, make_pdf(["Hello from the PDF."]), "a.pdf", "application/pdf")
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["filename"] == "a.pdf" and body["mimeType"] == "application/pdf"
    assert body["size"] > 0 and "text" not in body


def test_an_unreadable_type_is_refused_with_what_can_be_attached(signed_in_client):
    """It read "a.zip is a application/zip file" ("a image/png" for a photo)."""
    response = upload(signed_in_client(), b"PK\x03\x04", "a.zip", "application/zip")
    assert response.status_code == 415
    assert response.get_json()["error"]["message"] == (
        "a.zip is of type application/zip, which Lookout cannot read. Attach text, Markdown, "
        "CSV, JSON, or a type an installed plugin reads (such as PDF)."
    )


def test_an_encrypted_pdf_is_refused_with_the_ingesters_reason(signed_in_client):
    response = upload(
        signed_in_client(), encrypt_pdf(make_pdf(["secret"]), "pw"), "e.pdf", "application/pdf"
    )
    assert response.status_code == 422
    assert "encrypted" in response.get_json()["error"]["message"]


def test_a_file_over_the_limit_is_refused(make_app, make_user):
    app = make_app(ATTACHMENT_MAX_BYTES=10)
    client = app.test_client()
    from tests.support import accounts

    with app.app_context():
        from core.models import User

        db.session.add(User.make("big", "password"))
        db.session.commit()
    accounts.sign_in(client, "big", "password")
    client.environ_base["HTTP_X_CSRFTOKEN"] = accounts.csrf_token_from(
        client.get("/").get_data(as_text=True)
    )
    response = upload(client, b"x" * 11, "big.txt", "text/plain")
    assert response.status_code == 413
    assert (
        "big.txt is larger than the 10 byte limit for attachments."
        in response.get_json()["error"]["message"]
    )


def test_attachments_join_the_users_message_and_only_the_owners_count(app, signed_in_client):
    owner, stranger = signed_in_client(), signed_in_client()
    with app.app_context():
        db.session.add(Provider(name="p", base_url="http://127.0.0.1:9/v1", models=[{"name": "m"}]))
        db.session.commit()
    upload_id = upload(owner, b"col1,col2\n1,2\n", "t.csv", "text/csv").get_json()["id"]
    conversation = owner.post("/api/conversations", json={}).get_json()["id"]
    body = {"content": "Sum it", "model": "p/m", "attachments": [upload_id]}
    refused = stranger.post(
        f"/api/conversations/{stranger.post('/api/conversations', json={}).get_json()['id']}/turns",
        json=body,
    )
    assert refused.status_code == 400
    started = owner.post(f"/api/conversations/{conversation}/turns", json=body)
    assert started.status_code == 202, started.get_json()
    with app.app_context():
        message = db.session.get(Message, started.get_json()["turn"]["userMessageId"])
        # A reference: the text is kept once, in the upload (issue 24).
        assert message.parts == [
            {"type": "text", "text": "Sum it"},
            {
                "type": "attachment",
                "uploadId": upload_id,
                "filename": "t.csv",
                "mimeType": "text/csv",
            },
        ]


def test_a_hostile_pdf_is_refused_in_time_while_the_web_process_keeps_answering(make_app):
    """Issue 10: the PDF ingester ran inside a gunicorn thread, holding the GIL for minutes.

    A parse that held the web process would hold every other request for the whole parse (and
    could not be stopped at its deadline); a busy machine delays one by a second at worst. So no
    request may wait half the deadline, and answers keep coming while the file is read.
    """
    import threading
    import time

    import requests

    from core.models import ApiToken, User
    from tests.support.live_server import LiveServer
    from tests.tools.pdf.documents import make_pdf, make_shared_stream_pdf

    seconds = 4
    app = make_app(UPLOAD_PARSE_SECONDS=seconds, PARSER_CPU_SECONDS=60)
    with app.app_context():
        user = User.make("uploader", "password")
        db.session.add(user)
        row, token = ApiToken.make(user, "t")
        db.session.add(row)
        db.session.commit()
    hostile = make_shared_stream_pdf(1, 400_000)  # one page, hours of pypdf's work
    headers = {"Authorization": f"Bearer {token}"}
    with LiveServer(app) as server:

        def send(name: str, data: bytes) -> requests.Response:
            files = {"file": (name, data, "application/pdf")}
            return requests.post(
                f"{server.url}/api/uploads", headers=headers, files=files, timeout=30
            )

        # A first PDF starts the parser process: its start-up is not what is measured here.
        assert send("plain.pdf", make_pdf(["Plain words"])).status_code == 201
        answered: list[float] = []
        done = threading.Event()

        def keep_asking() -> None:
            while not done.is_set():
                started = time.monotonic()
                response = requests.get(f"{server.url}/api/models", headers=headers, timeout=10)
                assert response.status_code == 200
                answered.append(time.monotonic() - started)
                time.sleep(0.05)

        asker = threading.Thread(target=keep_asking, daemon=True)
        asker.start()
        started = time.monotonic()
        response = send("bomb.pdf", hostile)
        elapsed = time.monotonic() - started
        done.set()
        joined(asker, "the asking thread")
    assert response.status_code == 422
    assert response.json()["error"]["message"] == (
        f"Reading bomb.pdf took longer than {seconds} seconds. Attach a smaller or simpler "
        "file, or paste the part you need as text."
    )
    assert elapsed < seconds + 1
    assert len(answered) > 2 * seconds, answered
    assert max(answered) < seconds / 2, answered
