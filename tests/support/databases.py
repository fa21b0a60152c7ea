"""Building schemas with the real migrations, and throwaway PostgreSQL databases."""

from __future__ import annotations

import uuid

import flask_migrate
import psycopg
from flask import Flask
from sqlalchemy.engine import make_url


def migrate(app: Flask) -> None:
    """Run every Alembic migration against the app's database."""
    with app.app_context():
        flask_migrate.upgrade()


def libpq_url(url: str) -> str:
    """Return url without an SQLAlchemy driver suffix, as psycopg expects."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def create_postgres_database(server_url: str) -> str:
    """Create an empty database on the server of server_url and return its URL."""
    name = f"lookout_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(libpq_url(server_url), autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return make_url(libpq_url(server_url)).set(database=name).render_as_string(hide_password=False)


def drop_postgres_database(server_url: str, database_url: str) -> None:
    """Drop the database of database_url, disconnecting whoever still uses it."""
    name = make_url(database_url).database
    with psycopg.connect(libpq_url(server_url), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
