"""The migrations build exactly the schema the models describe, on SQLite and on PostgreSQL."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from core.extensions import db
from tests.support import databases


def schema_differences(app) -> list:
    """Return Alembic's differences between the migrated database and the models."""
    with app.app_context(), db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return compare_metadata(context, db.metadata)


def test_models_and_migrations_agree_on_sqlite(app):
    assert schema_differences(app) == []


@pytest.mark.postgres
def test_models_and_migrations_agree_on_postgresql(make_app, postgres_url):
    app = make_app(DATABASE_URL=postgres_url)
    databases.migrate(app)
    assert schema_differences(app) == []


@pytest.mark.postgres
def test_json_columns_round_trip_on_postgresql(make_app, migrated_postgres_url):
    from core.models import User

    app = make_app(DATABASE_URL=migrated_postgres_url)
    with app.app_context():
        user = User.make("pat", "pw", admin=True)
        db.session.add(user)
        db.session.commit()
        assert db.session.get(User, user.id).roles == ["user", "admin"]


def test_the_migrated_schema_has_every_table(app):
    with app.app_context():
        names = set(db.inspect(db.engine).get_table_names())
    assert {
        "users",
        "api_tokens",
        "conversations",
        "messages",
        "turns",
        "tool_calls",
        "providers",
        "plugin_options",
        "user_plugin_settings",
        "user_tool_settings",
    } <= names


def test_tool_calls_stored_before_0005_keep_their_tool_source_and_read_as_untrusted(app):
    """Migration 0005 moves the ``source:<id>`` prefix out of ``plugin`` into ``source``."""
    import flask_migrate
    from sqlalchemy import text

    def rows():
        return db.session.execute(
            text("SELECT call_id, plugin, source, untrusted FROM tool_calls ORDER BY call_id")
        ).all()

    from core.models import Conversation, Message, Turn, User

    with app.app_context():
        user = User.make("pat", "pw")
        db.session.add(user)
        db.session.flush()
        conversation = Conversation(owner_id=user.id, title="t")
        db.session.add(conversation)
        db.session.flush()
        asked = Message(conversation_id=conversation.id, role="user", parts=[], status="completed")
        db.session.add(asked)
        db.session.flush()
        turn = Turn(
            conversation_id=conversation.id, user_message_id=asked.id, model="p/m",
            status="completed",
        )  # fmt: skip
        db.session.add(turn)
        db.session.commit()
        turn_id = turn.id
        db.session.remove()
        flask_migrate.downgrade(revision="0004")
        for call_id, plugin in (("a", "source:remote"), ("b", "web_fetch")):
            db.session.execute(
                text(
                    "INSERT INTO tool_calls (turn_id, call_id, step, position, name, plugin, "
                    "input, citations) VALUES (:turn, :id, 0, 0, 'x', :plugin, '{}', '[]')"
                ),
                {"turn": turn_id, "id": call_id, "plugin": plugin},
            )
        db.session.commit()
        flask_migrate.upgrade()
        assert [tuple(r) for r in rows()] == [
            ("a", None, "remote", True),
            ("b", "web_fetch", None, True),
        ]
        db.session.remove()
        flask_migrate.downgrade(revision="0004")
        assert db.session.execute(
            text("SELECT call_id, plugin FROM tool_calls ORDER BY call_id")
        ).all() == [("a", "source:remote"), ("b", "web_fetch")]


def tokens_before_0009_hold_the_chat_scope_only(app) -> None:
    """Store an administrator's token under migration 0008, upgrade, and check what it may do;
    then downgrade and check the token is still there, without the new columns."""
    import flask_migrate
    from sqlalchemy import text

    from core.models import ApiToken, User
    from core.models.accounts import hash_token

    token = "lk_from-before-scopes"
    with app.app_context():
        db.session.remove()
        flask_migrate.downgrade(revision="0008")
        ada = User.make("ada", "password", admin=True)
        db.session.add(ada)
        db.session.commit()
        db.session.execute(
            text(
                "INSERT INTO api_tokens (id, user_id, name, token_hash, created_at) "
                "VALUES ('old-token', :user, 'old', :hash, CURRENT_TIMESTAMP)"
            ),
            {"user": ada.id, "hash": hash_token(token)},
        )
        db.session.commit()
        db.session.remove()
        flask_migrate.upgrade()
        row = db.session.get(ApiToken, "old-token")
        assert (row.scopes, row.expires_at) == (["chat"], None)
        db.session.remove()
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/conversations", headers=headers).status_code == 200
    refused = client.get("/api/admin/users", headers=headers)
    assert refused.status_code == 403
    assert "does not have the admin scope" in refused.get_json()["error"]["message"]
    with app.app_context():
        flask_migrate.downgrade(revision="0008")
        columns = {c["name"] for c in db.inspect(db.engine).get_columns("api_tokens")}
        assert not {"scopes", "expires_at"} & columns
        assert db.session.execute(text("SELECT name FROM api_tokens")).scalars().all() == ["old"]
        db.session.remove()
        flask_migrate.upgrade()


def test_tokens_made_before_scopes_keep_the_chat_scope_only_on_sqlite(app):
    """Migration 0009: existing tokens get "chat", never "admin" (its docstring says why)."""
    tokens_before_0009_hold_the_chat_scope_only(app)


@pytest.mark.postgres
def test_tokens_made_before_scopes_keep_the_chat_scope_only_on_postgresql(
    make_app, migrated_postgres_url
):
    """Migration 0009 up and down on PostgreSQL, as on SQLite."""
    tokens_before_0009_hold_the_chat_scope_only(make_app(DATABASE_URL=migrated_postgres_url))
