"""Attached uploads: a message refers to its upload, the model reads the upload's text each
time the message is replayed, and deleting the upload takes its text from the conversation
(issue 24: each message held a copy that no room counted)."""

from __future__ import annotations

from core.models.uploads import DELETED_TEXT
from core.quotas import remaining

NOTES = b"The secret word is plover."


def upload_notes(chat) -> str:
    files = {"file": ("notes.txt", NOTES, "text/plain")}
    response = chat.call("POST", "/api/uploads", files=files)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def user_contents(request) -> list[str]:
    return [m["content"] for m in request.json["messages"] if m["role"] == "user"]


def room_used(chat_app, user_id: str) -> int:
    with chat_app.app_context():
        return {r["limit"]: r for r in remaining(user_id)}["uploadBytes"]["used"]


def test_an_upload_attached_twice_is_stored_once_and_the_model_reads_it_each_time(
    chat, chat_app, fake_model, model_ids
):
    upload_id = upload_notes(chat)
    conversation = chat.new_conversation()
    chat.run(conversation, "What is the word?", model_ids[0], attachments=[upload_id])
    chat.run(conversation, "Again?", model_ids[0], attachments=[upload_id])

    attached = "[Attached file: notes.txt]\nThe secret word is plover."
    assert user_contents(fake_model.chat_requests()[-1]) == [
        f"What is the word?\n\n{attached}",
        f"Again?\n\n{attached}",
    ]
    messages = chat.conversation(conversation)["messages"]
    stored = [p for m in messages for p in m["parts"] if p["type"] == "attachment"]
    assert (
        stored
        == [
            {
                "type": "attachment",
                "uploadId": upload_id,
                "filename": "notes.txt",
                "mimeType": "text/plain",
            }
        ]
        * 2
    )
    assert room_used(chat_app, chat.user_id) == len(NOTES)


def test_deleting_an_attached_upload_frees_its_room_and_the_model_reads_that_it_is_gone(
    chat, chat_app, fake_model, model_ids
):
    upload_id = upload_notes(chat)
    conversation = chat.new_conversation()
    chat.run(conversation, "What is the word?", model_ids[0], attachments=[upload_id])

    assert chat.call("DELETE", f"/api/uploads/{upload_id}").status_code == 204
    chat.run(conversation, "And now?", model_ids[0])

    assert room_used(chat_app, chat.user_id) == 0
    assert user_contents(fake_model.chat_requests()[-1]) == [
        f"What is the word?\n\n[Attached file: notes.txt]\n{DELETED_TEXT}",
        "And now?",
    ]
    assert "plover" not in str(chat.conversation(conversation))
