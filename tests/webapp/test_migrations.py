"""The migrations build exactly the schema the models describe, on SQLite and on PostgreSQL."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from tests.support import databases
from webapp.extensions import db


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
    from webapp.models import User

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
